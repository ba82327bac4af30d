"""Advice, not grades: what the exercise leaves open but a student should hear about.

After the suite has run and every score is fixed, a few programs outside the
exercise's contract run on the submission's worker. What they show becomes a
note marked "not graded": no test depends on it, and a note never costs a point.

* A long chain: `backward()` on 5,000 ops in a row. A recursive topological sort
  goes one Python call deeper per node and stops near 1,000 (RecursionError);
  the graphs of the exercise are small, so it keeps full marks.
* A node as the exponent: `x ** k` with `k` a Value. The exercise's `**` takes a
  plain number; an engine that accepts a node there and gives it no gradient
  computes a wrong derivative without a word.
"""

import math

from grader.exercise import EXERCISE
from grader.i18n import bilingual

CHAIN_LENGTH = 5000
TIMES, POWER = EXERCISE.spelled("a * b"), EXERCISE.spelled("a ** b")
NOT_GRADED = bilingual("Not graded: ", "不计分：")


def _chain():
    steps = [["value", 0.5]]
    steps += [["op", TIMES, f"n{i}", 1.0] for i in range(CHAIN_LENGTH - 1)]
    return steps + [["backward", f"n{CHAIN_LENGTH - 1}"]]


def _deep_chain_note(run):
    reply = run(_chain())
    if reply.failure or reply.outcome["ok"] or reply.outcome["error"]["type"] != "RecursionError":
        return None
    return bilingual(
        f"`backward()` on a chain of {CHAIN_LENGTH:,} ops raised RecursionError. A recursive topological sort "
        "goes one call deeper per node, and Python stops near 1,000 calls; the exercise's graphs are small, so "
        "this costs nothing here, but a network's graph is not. An explicit stack instead of recursion has no "
        "such limit.",
        f"在 {CHAIN_LENGTH} 个运算连成的链上调用 `backward()` 抛出了 RecursionError。递归的拓扑排序每经过一个节点就多一层调用，"
        "而 Python 大约在 1000 层时停止；练习里的计算图都很小，所以这里不扣分，但神经网络的计算图可不小。"
        "用显式的栈代替递归就没有这个限制。")


def _node_exponent_note(run):
    base, exponent = 2.0, 3.0
    reply = run([["value", base], ["value", exponent], ["op", POWER, "n0", "n1"], ["backward", "n2"], ["read"]])
    if reply.failure or not reply.outcome["ok"]:
        return None  # refusing a node exponent is one right answer
    snapshot = reply.outcome["snapshots"][0]
    value, exponent_grad = snapshot[2][0], snapshot[1][1]
    want = base ** exponent * math.log(base)
    if not isinstance(value, float) or not math.isclose(value, base ** exponent):
        return None
    if isinstance(exponent_grad, float) and math.isclose(exponent_grad, want, rel_tol=1e-6):
        return None
    return bilingual(
        f"`x ** k` with `k` a Value runs, but k.grad is {exponent_grad!r} where d(x^k)/dk = x^k · ln x = "
        f"{want:.6g} (x = 2, k = 3): the exponent is used as a plain number and gets no gradient. The "
        "exercise's `**` takes a number exponent; either raise a clear error for a node there, or give it "
        "its gradient.",
        f"`k` 是 Value 时 `x ** k` 能运行，但 k.grad 是 {exponent_grad!r}，而 d(x^k)/dk = x^k · ln x = {want:.6g}"
        "（x = 2，k = 3）：指数被当成普通数字使用，得不到梯度。练习中 `**` 的指数是数字；"
        "遇到节点作指数时，要么给出清楚的错误，要么给它正确的梯度。")


NOTES = (_deep_chain_note, _node_exponent_note)


def advice(run):
    """The notes for a submission whose programs `run(steps) -> Reply` runs; each
    already says it is not graded."""
    found = []
    for note in NOTES:
        try:
            text = note(run)
        except Exception:  # noqa: BLE001 - advice must never break grading
            text = None
        if text is not None:
            found.append({lang: NOT_GRADED[lang] + text[lang] for lang in ("en", "zh")})
    return found
