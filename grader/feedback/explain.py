"""Explain how a submission's run differs from the reference's: a Finding.

Everything here runs on the trusted side and reads only plain data: the graph
program, the reference outcome, and the validated reply from the worker. The
comparison itself (which read differs, which nodes) is grader/compare.py's; this
module says what it means: a wrong forward value, a wrong gradient (the culprit:
grader/feedback/reverse.py), a wrong derivative (grader/feedback/forward.py),
an exception, or a wrong topological order.
"""

import re

from grader.compare import matches, order_problem
from grader.exercise import EXERCISE
from grader.feedback import matcher
from grader.feedback.catalog import load as load_catalog
from grader.feedback.finding import ERROR_RULES, Finding
from grader.feedback.forward import dual_finding
from grader.feedback.functions import is_reflected, method_name, parts, wrong_method
from grader.feedback.reverse import blame_cause, grad_finding
from grader.feedback.snippet import runnable
from grader.feedback.wording import order_text, show
from grader.hangs import calls
from grader.i18n import bilingual as T
from grader.program import graph_from_steps, render_python, render_step

CATEGORY_RULES = {"gradients": "chain-rule", "accumulation": "paths-add", "zero_grad": "intermediate-reset",
                  "forward_mode": "dual-rule"}


class Explainer:
    def __init__(self, graph, expected=None, got=None, rule=None, category=None, hints=None, evidence=None,
                 oracle=None):
        self.graph = graph
        self.steps = graph.steps
        self.expected, self.got = expected, got
        self.read_positions = [i for i, step in enumerate(self.steps) if step[0] == "read"]
        self.rule_hint, self.category, self.hint_filter = rule, category, hints
        self.evidence = evidence
        self.oracle = oracle if oracle is not None else _simulated_oracle()
        self.catalog = load_catalog()
        self._flow, self._flow_asked = None, False

    def flow(self):
        """What every node of the reference sent (grader.oracle.Flow), or None where it is unknown."""
        if not self._flow_asked:
            self._flow_asked = True
            self._flow = self.oracle.flow(self.steps)
        return self._flow

    def history(self, snapshot):
        """The calls made before a read, as code: the sequence that shows the bug."""
        end = self.read_positions[snapshot]
        calls = [render_step(s) for s in self.steps[:end] if s[0] in ("backward", "zero_grad")]
        return "; ".join(calls)

    def expected_data(self):
        """The nodes' expected values at the last read (None before any read)."""
        snapshots = self.expected["snapshots"] if self.expected else []
        return [pair[0] for pair in snapshots[-1]] if snapshots else None

    def describe_node(self, number):
        return f"n{number} = {render_step(self.graph.node_steps[number])}"

    def refuted(self, model):
        return self.evidence is not None and self.evidence.refutes(model)

    def cleared(self, label):
        return self.evidence is not None and self.evidence.cleared(label)

    def matches(self, number):
        return matcher.match_all(self.steps, self.got, number, self.oracle, only=self.hint_filter,
                                 evidence=self.evidence, expected=self.expected)

    def is_leaf(self, number):
        return self.graph.node_steps[number][0] != "op"

    def rule(self, rule_id, diagnosed=True):
        rule = self.catalog.rule(rule_id)
        return {**rule, "diagnosed": diagnosed} if rule else None

    def default_rule(self):
        rule_id = self.rule_hint if self.catalog.rule(self.rule_hint or "") else None
        if rule_id is None and self.category == "zero_grad" and any(s[0] == "zero_grad" for s in self.steps):
            rule_id = "zero-grad"
        rule_id = rule_id or CATEGORY_RULES.get(self.category)
        return self.rule(rule_id, diagnosed=False) if rule_id else None

    def built_method(self, culprits):
        """When a culprit node is an op built from others and the probes say a method
        it runs is wrong while what that method is built from is right
        (grader/feedback/functions.py): {method, cause, rule} to blame it."""
        for number in culprits:
            step = self.graph.node_steps[number]
            if step[0] != "op":
                continue
            shown = (step[1], self.graph.is_dual(number), is_reflected(step))
            found = wrong_method(*shown, self.evidence)
            if found is None:
                continue
            method, (inner, labels) = method_name(*found), parts(*found)
            listed = [f"`{piece}`" for piece in [*map(_label_text, labels), *(method_name(*p) for p in inner)]]
            pieces, pieces_zh = ", ".join(listed), "、".join(listed)
            code = render_step(step)
            if found == shown:
                cause = T(f"`{code}` runs `{method}`, and what that is built from is right on its own here "
                          f"({pieces}): the mistake is in `{method}` itself.",
                          f"`{code}` 运行的是 `{method}`，而它用到的运算单独测试都是对的（{pieces_zh}）："
                          f"错误就在 `{method}` 本身。")
            else:
                cause = T(f"`{code}` uses `{method}`, which is wrong on its own while what it is built from is "
                          f"right ({pieces}): the mistake is in `{method}`.",
                          f"`{code}` 用到了 `{method}`：它单独测试就不对，而它用到的运算都是对的（{pieces_zh}）："
                          f"错误在 `{method}` 中。")
            rule = self.rule("reflected-op" if found[2] else "built-op")
            return {"method": method, "cause": cause, "rule": rule, "hint": None}
        return None

    def finding(self, kind, headline, cause=None, snapshot=None, show=(), **extra):
        expected = got = None
        if snapshot is not None:
            expected = self.expected["snapshots"][snapshot]
            got = self.got["snapshots"][snapshot] if self.got and len(self.got["snapshots"]) > snapshot else None
            steps_shown = self.steps[: self.read_positions[snapshot] + 1]
        else:
            if self.expected and self.expected.get("snapshots"):
                expected = self.expected["snapshots"][-1]
            steps_shown = self.steps
        extra.setdefault("rule", self.default_rule())
        if kind in ("data", "grad", "der") and "method" not in extra:
            built = self.built_method(extra.get("culprits") or [])
            if built is not None:
                cause = built.pop("cause")
                extra.update(built)
        finding = Finding(
            headline["en"], headline["zh"], kind,
            headline=headline, cause=cause, snapshot=snapshot,
            program=render_python(self.steps), steps=self.steps, expected=expected, got=got,
            calls=self.history(snapshot) if snapshot is not None else "",
            code=runnable(steps_shown, expected, got, show),
            category=self.category or "", **extra,
        )
        return finding.compose()


def explain(graph, expected, reply, check_order=False, locate=None, rule=None, category=None, hints=None,
            evidence=None, order_only=False, oracle=None):
    """Findings that explain how the submission's run differs (empty: the test passes).

    `locate(line, lang)` turns a line of the submission into "file, line N" (or a
    notebook cell) for error messages. `rule` (a rule id of the catalog) and
    `category` (the test's category) name the rule a test checks when the
    numbers alone do not; `hints` limits the hints tried (a set of ids);
    `evidence` (grader.feedback.probes.Evidence) helps choose between
    explanations the numbers of this program cannot tell apart."""
    findings = _explain(graph, expected, reply, check_order or order_only, locate, rule, category, hints, evidence,
                        order_only, oracle)
    for finding in findings:
        # What refine() needs to explain it again with more evidence (not part of as_dict).
        finding.source = {"graph": graph, "expected": expected, "reply": reply, "check_order": check_order,
                          "order_only": order_only, "oracle": oracle,
                          "locate": locate, "rule": rule, "category": category}
    return findings


def _explain(graph, expected, reply, check_order, locate, rule, category, hints, evidence, order_only=False,
             oracle=None):
    if not expected["ok"]:
        raise RuntimeError(f"the reference failed on a test program: {expected['error']}")
    got = reply.outcome if not reply.failure else None
    explain = Explainer(graph, expected, got, rule=rule, category=category, hints=hints, evidence=evidence,
                        oracle=oracle)
    explain.locate = locate or (lambda line, lang="en": f"line {line}")
    if reply.failure:
        return [explain.finding("worker", _failure_headline(reply), failure=reply.cause)]
    if not got["ok"]:
        return [_error_finding(explain, got)]
    for number, (want, have) in enumerate(zip(expected["snapshots"], got["snapshots"])):
        findings = [] if order_only else _compare_snapshot(explain, number, want, have)
        if findings:
            return findings
    if check_order:
        for number, order in enumerate(got["orders"]):
            finding = _check_order(explain, number, order)
            if finding:
                return [finding]
    return []


def narrow(finding, label):
    """Make `label` (one of the finding's candidates) its culprit, keeping the
    blamed edges that agree with it: the shrinker found it alone."""
    finding.culprit = label
    finding.candidates = [label] + [c for c in finding.candidates if c != label]
    kept = [b for b in finding.blame if label in b.get("labels", [b.get("label")])]
    if kept and finding.kind == "grad":
        for entry in kept:
            entry["label"] = label
        finding.blame = kept
        finding.culprits = sorted({b["node"] for b in kept})
        finding.cause = blame_cause(Explainer(graph_from_steps(finding.steps)), kept) or finding.cause
    return finding


def _error_finding(explain, got):
    step = explain.steps[got["step"]]
    error = got["error"]
    where = error.get("where")
    place_en = place_zh = ""
    if isinstance(where, dict) and isinstance(where.get("line"), int):
        place_en = f" (in {where.get('function')}, {explain.locate(where['line'], 'en')})"
        place_zh = f"（{where.get('function')}，{explain.locate(where['line'], 'zh')}）"
    code = render_step(step) or step[0]
    label, culprits = "", []
    if step[0] == "op":
        number = sum(1 for s in explain.steps[: got["step"]] if s[0] in EXERCISE.node_kinds)
        label, culprits = _node_label(explain, number), [number]
    elif step[0] in ("backward", "zero_grad"):
        label = step[0]
    candidates = [label] if label else []
    within = EXERCISE.op_of_function(where.get("within")) if isinstance(where, dict) else None
    if within is not None:
        # Raised in (or under) the function of one op, e.g. `Value.__mul__`'s _backward.
        label = EXERCISE.label(*within)
        candidates = [label]
    elif step[0] == "backward" and isinstance(where, dict) and where.get("function") == "_backward":
        # Raised inside some op's _backward: any op of the graph; the smallest program says which.
        root = int(step[1][1:])
        ops = {_node_label(explain, n) for n in explain.graph.ancestors(root) if not explain.is_leaf(n)}
        order = EXERCISE.labels()
        candidates = sorted(ops, key=lambda op: order.index(op) if op in order else 99)
        label = candidates[0] if len(candidates) == 1 else ""
    within_name = where.get("within") if isinstance(where, dict) else None
    if error["type"] == "ReturnedWrongType" and step[0] == "op":
        # The method that returned it: `2.0 + d` runs Dual.__radd__, not Dual.__add__.
        within_name = method_name(step[1], explain.graph.is_dual(culprits[0]), is_reflected(step))
    return explain.finding(
        "error", _error_headline(step, code, error, calls(explain.steps)[got["step"]], place_en, place_zh),
        culprit=label, candidates=candidates, culprits=culprits,
        rule=explain.rule(ERROR_RULES.get(error["type"], "no-exception")),
        error={"type": error["type"], "message": error["message"], "step": got["step"],
               "function": where.get("function") if isinstance(where, dict) else None,
               "within": within_name,
               "line": where.get("line") if isinstance(where, dict) else None},
    )


def _failure_headline(reply):
    """Why the program could not finish, in both languages (the worker's reason is English)."""
    cause = reply.cause or {}
    kind, call, seconds = cause.get("kind"), cause.get("call") or "", cause.get("seconds")
    if kind == "timeout" and isinstance(seconds, (int, float)):
        where_en, where_zh = (f" in `{call}`", f"（卡在 `{call}`）") if call else ("", "")
        return T(f"The program could not finish: it timed out after {seconds:.3g} s{where_en} "
                 "(an infinite loop? very slow code?).",
                 f"程序没能运行完：{seconds:.3g} 秒后超时{where_zh}（死循环？代码太慢？）。")
    if kind == "skipped" and call:
        return T(f"Not run: `{call}` did not return in earlier programs, and this one calls it too.",
                 f"没有运行：`{call}` 在前面的程序里没有返回，这个程序也调用了它。")
    if kind == "budget":
        return T(f"Not run: {reply.failure}.", f"没有运行：这份提交的总运行时间已经用完（{reply.failure}）。")
    return T(f"The program could not finish: {reply.failure}.", f"程序没能运行完：{reply.failure}。")


_RETURNED = re.compile(r"returned an? (\S+), not an? (\S+)")


def _error_headline(step, code, error, call, place_en, place_zh):
    """What the student's code did, in its own terms: the call, what it returned or raised."""
    call = call[:-2] if call.endswith("()") else call
    if error["type"] == "ReturnedWrongType":
        found = _RETURNED.search(error["message"])
        got, wanted = found.groups() if found else ("something else", "node")
        return T(f"`{code}` returned a {got}, not a {wanted}: see `{call}`{place_en}.",
                 f"`{code}` 返回的是 {got}，不是 {wanted}：请检查 `{call}`{place_zh}。")
    if error["type"] == "ShadowedMethod":
        name = call.rpartition(".")[2]
        return T(f"`{code}` never ran the method `{call}`: an attribute `{name}` set on the instance "
                 f"(in `__init__`, say) hides it{place_en}.",
                 f"`{code}` 根本没有运行方法 `{call}`：实例上设置的同名属性 `{name}`（比如在 `__init__` 里）"
                 f"遮住了它{place_zh}。")
    if step[0] == "read":
        return T(f"Reading the nodes' data and grad (val and der for a Dual) raised {error['type']}: "
                 f"{error['message']}{place_en}.",
                 f"读取节点的 data 和 grad（Dual 为 val 和 der）时抛出 {error['type']}：{error['message']}{place_zh}。")
    return T(f"`{code}` raised {error['type']}: {error['message']}{place_en}.",
             f"`{code}` 抛出 {error['type']}：{error['message']}{place_zh}。")


def _label_text(label):
    """How a culprit label reads in a sentence: "Dual *" for "Dual.*"."""
    if label == EXERCISE.dual_lift:
        return "Dual(c)"
    return f"Dual {label[5:]}" if label.startswith("Dual.") else label


def _node_label(explain, number):
    step = explain.graph.node_steps[number]
    if step[0] != "op":
        return "Dual" if step[0] == "dual" else "Value"
    return EXERCISE.label(step[1], dual=explain.graph.is_dual(number))


def _compare_snapshot(explain, number, want, have):
    if len(have) != len(want):
        return [explain.finding("worker", T("The worker returned the wrong number of nodes.", "返回的节点数量不对。"))]
    graph = explain.graph
    wrong_data = [n for n in range(len(want)) if not matches(want[n][0], have[n][0])]
    if wrong_data:
        return [_data_finding(explain, number, want, have, wrong_data)]
    wrong = [n for n in range(len(want)) if not matches(want[n][1], have[n][1])]
    if not wrong:
        return []
    if all(graph.is_dual(n) for n in wrong):
        return [dual_finding(explain, number, want, have, wrong)]
    return [grad_finding(explain, number, want, have, [n for n in wrong if not graph.is_dual(n)])]


def _data_finding(explain, number, want, have, wrong):
    graph = explain.graph
    first = next((n for n in wrong if all(matches(want[i][0], have[i][0]) for i in graph.inputs_of(n))), wrong[0])
    field_name = "val" if graph.is_dual(first) else "data"
    label = _node_label(explain, first)
    desc = explain.describe_node(first)
    when_en = f" after `{explain.history(number)}`" if explain.history(number) else ""
    when_zh = f"（执行 `{explain.history(number)}` 之后）" if explain.history(number) else ""
    headline = T(f"Forward value wrong{when_en}: n{first}.{field_name} of {desc} should be {show(want[first][0])}, "
                 f"got {show(have[first][0])}.",
                 f"前向计算的值不对{when_zh}：{desc} 的 {field_name} 应为 {show(want[first][0])}，"
                 f"实际是 {show(have[first][0])}。")
    cause = None
    if graph.node_steps[first][0] == "op":
        op = graph.node_steps[first][1]
        cause = T(f"Its inputs are right, so the value `{op}` computes is wrong.",
                  f"它的输入都是对的，所以是 `{op}` 算出的值不对。")
    return explain.finding("data", headline, cause, snapshot=number, culprit=label, candidates=[label],
                           culprits=[first], wrong_nodes=wrong, rule=explain.rule("forward-value"))


def _check_order(explain, number, order):
    backward_steps = [s for s in explain.steps if s[0] == "backward"]
    root = int(backward_steps[number][1][1:])
    call = render_step(backward_steps[number])
    if isinstance(order, dict):
        problem = T(f"it returned a {order['not_a_list']}, not a list of nodes.",
                    f"返回的是 {order['not_a_list']}，不是节点列表。")
    else:
        problem = order_text(explain, root, order)
        if problem is None:
            return None
    headline = T(f"`{call}` returned a wrong topological order: {problem['en']}",
                 f"`{call}` 返回的拓扑序不对：{problem['zh']}")
    hint = None
    if isinstance(order, list):
        structured = order_problem(explain.graph, root, order, explain.expected_data())
        if structured.kind == "missing" and structured.other is not None:  # a visited set keyed by value
            hint = matcher.Match(explain.catalog.hint("visited-by-value"), "backward", "").as_dict()
    rule = explain.rule("topological-order")
    cause = T(rule["summary"]["en"][0].upper() + rule["summary"]["en"][1:] + ".", rule["summary"]["zh"] + "。")
    return explain.finding("order", headline, cause, culprit="backward", candidates=["backward"],
                           rule=rule, hint=hint)


def _simulated_oracle():
    from grader.oracle_reference import SimulatedOracle

    return SimulatedOracle()
