"""The small words of findings: how numbers, sides and lists read in both languages."""

from grader.compare import order_problem
from grader.exercise import EXERCISE
from grader.i18n import bilingual

MAX_LISTED = 3
SIDE = {"left": bilingual("left input", "左输入"), "right": bilingual("right input", "右输入"),
        "both": bilingual("inputs", "两个输入")}


def show(value):
    """A reply value for a message: numbers plainly, markers explained."""
    if isinstance(value, dict):
        if "nonfinite" in value:
            return value["nonfinite"]
        return f"a {value['not_a_number']} object ({value['repr']}), not a number"
    return f"{value:.6g}"


def wrong_list(want, have, wrong, field_name="grad"):
    en, zh = [], []
    for n in wrong[:MAX_LISTED]:
        en.append(f"n{n}.{field_name} should be {show(want[n][1])}, got {show(have[n][1])}")
        zh.append(f"n{n}.{field_name} 应为 {show(want[n][1])}，实际是 {show(have[n][1])}")
    more = len(wrong) - MAX_LISTED
    if more > 0:
        en.append(f"and {more} more")
        zh.append(f"另有 {more} 个")
    return "; ".join(en), "；".join(zh)




def order_text(explain, root, order):
    """Why a returned order is not a topological order of root's graph (a text), or None."""
    problem = order_problem(explain.graph, root, order, explain.expected_data())
    if problem is None:
        return None
    n, other = problem.node, problem.other
    if problem.kind == "repeated":
        return bilingual(f"n{n} appears more than once in the order backward() returned.",
                         f"n{n} 在 backward() 返回的顺序里出现了不止一次。")
    if problem.kind == "missing":
        extra_en = f" (it has the same data as n{other})" if other is not None else ""
        extra_zh = f"（它和 n{other} 的 data 相同）" if other is not None else ""
        return bilingual(f"n{n} is part of the graph but missing from the order backward() returned{extra_en}.",
                         f"n{n} 在计算图中，却不在 backward() 返回的顺序里{extra_zh}。")
    if problem.kind == "extra":
        return bilingual(f"n{n} is not part of n{root}'s graph but is in the order backward() returned.",
                         f"n{n} 不在 n{root} 的计算图里，却出现在 backward() 返回的顺序里。")
    if problem.kind == "root-not-last":
        return bilingual(f"The root n{root} must come last in the order.", f"根节点 n{root} 必须排在顺序的最后。")
    return bilingual(f"n{other} must come before n{n}, which is computed from it.",
                     f"n{other} 必须排在由它算出的 n{n} 之前。")


def built_from(name):
    """How a derived op is built, for the cause of a finding about it; None for a primitive."""
    op = EXERCISE.op(name)
    if op.primitive:
        return None
    shown = op.built.replace("lift(a)", "a").replace("lift(b)", "b")
    parts = EXERCISE.primitives_of(name)
    return bilingual(f" (built from {' and '.join(parts)} as {shown})", f"（由 {' 和 '.join(parts)} 组成：{shown}）")
