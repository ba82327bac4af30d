"""Compare a submission's answers with the reference's and explain the difference.

Everything here runs on the trusted side and reads only plain data: the graph
program, the reference outcome, and the validated reply from the worker.
A `Finding` is one reason a test failed, in Chinese and English, with the
details reports draw from: the culprit (the op whose `_backward` sent a wrong
gradient, or the rule of backward()/zero_grad that was broken), the hint of a
known misconception when the numbers match one, the program and the expected
and returned numbers of the failing read, and a script that reproduces it.

How the culprit is found (reverse mode): take the last backward() before the
failing read. Every node's grad there is the sum of what the nodes made from it
sent (plus, for a leaf, what it held before). A node whose grad is wrong while
every node made from it has the right grad received a wrong value from one of
them: that sender's `_backward` is the culprit. The simulator
(grader/feedback/simulate.py) gives the value each sender should have sent.
Before blaming a local rule, the rules of backward() itself are checked: the
returned topological order, the root's grad, the reset of intermediate grads,
the accumulation of leaf grads and of several paths.
"""

import math
from collections import Counter
from dataclasses import dataclass, field

from grader.feedback import matcher
from grader.feedback.catalog import load as load_catalog
from grader.feedback.simulate import Model, simulate
from grader.feedback.snippet import runnable
from grader.program import Graph, render_python, render_step

REL_TOL = 1e-6
ABS_TOL = 1e-9
MAX_LISTED = 3
SIDE = {"left": ("left input", "左输入"), "right": ("right input", "右输入"), "both": ("inputs", "两个输入")}
BUILT_FROM = {"-": ("+ and * -1", "+ 和 * -1"), "/": ("* and ** -1", "* 和 ** -1"), "neg": ("* -1", "* -1")}
LABEL_ORDER = ("+", "*", "**", "exp", "log", "tanh", "relu", "backward", "zero_grad",
               "Dual.+", "Dual.*", "Dual.exp", "Dual.tanh", "Dual.lift")
DUAL_PRIMITIVES_OF = {"-": ("Dual.+", "Dual.*", "Dual.lift"), "neg": ("Dual.*", "Dual.lift")}
NO_RESET = Model(reset_intermediate=False)
LEAVES_RESET = Model(reset_leaves=True)
CATEGORY_RULES = {"gradients": "chain-rule", "accumulation": "paths-add", "zero_grad": "intermediate-reset",
                  "forward_mode": "dual-rule"}
NODE_KINDS = ("value", "dual", "op")


def T(en, zh):
    return {"en": en, "zh": zh}


@dataclass
class Finding:
    en: str
    zh: str
    kind: str  # worker | error | data | grad | der | order
    culprits: list = field(default_factory=list)  # node numbers whose op is to blame
    wrong_nodes: list = field(default_factory=list)
    snapshot: int = None  # which read showed it
    program: str = ""
    culprit: str = ""  # what is to blame: "*", "tanh", "backward", "zero_grad", "Dual.*", "Dual.lift", ...
    candidates: list = field(default_factory=list)  # every label still possible, best first
    blame: list = field(default_factory=list)  # [{node, op, label, input, side, expected, got}]
    rule: dict = None  # {id, en, zh, diagnosed}
    hint: dict = None  # {id, rule, culprit, en, zh}
    calls: str = ""  # the calls before the failing read, as code
    headline: dict = None  # {en, zh}: what is wrong
    cause: dict = None  # {en, zh}: why, naming the culprit
    steps: list = field(default_factory=list)  # the program (JSON steps)
    expected: list = None  # the reference's [data, grad] per node at the failing read
    got: list = None  # the submission's, same shape (None when it raised)
    code: str = ""  # a script that reproduces it
    shrunk: dict = None  # the smallest program that fails the same way (a finding dict)
    category: str = ""
    error: dict = None  # {type, message, function, line, step} when the submission raised
    source: dict = field(default=None, repr=False, compare=False)  # set by compare(); not reported

    def text(self, lang):
        return self.zh if lang == "zh" else self.en

    def compose(self):
        """Rebuild the full messages from their parts (after a refinement)."""
        if not self.headline:
            return self
        for lang in ("en", "zh"):
            parts = [self.headline[lang]]
            if self.cause:
                parts.append(self.cause[lang])
            if self.hint:
                parts.append(("提示：" if lang == "zh" else "Hint: ") + self.hint[lang])
            text = " ".join(parts)
            code = (self.shrunk or {}).get("code") or self.code
            if code:
                label = {"en": "Smallest program that shows it:", "zh": "能重现这个问题的最小程序："}[lang]
                if not self.shrunk:
                    label = {"en": "A program that shows it:", "zh": "能重现这个问题的程序："}[lang]
                text += "\n" + label + "\n" + code
            setattr(self, lang, text)
        return self

    def as_dict(self):
        return {
            "en": self.en,
            "zh": self.zh,
            "kind": self.kind,
            "culprit": self.culprit,
            "candidates": self.candidates,
            "culprits": self.culprits,
            "wrong_nodes": self.wrong_nodes,
            "blame": self.blame,
            "rule": self.rule,
            "hint": self.hint,
            "headline": self.headline,
            "cause": self.cause,
            "snapshot": self.snapshot,
            "calls": self.calls,
            "program": self.program,
            "code": self.code,
            "steps": self.steps,
            "expected": self.expected,
            "got": self.got,
            "shrunk": self.shrunk,
            "category": self.category,
            "error": self.error,
        }


def show(value):
    """A reply value for a message: numbers plainly, markers explained."""
    if isinstance(value, dict):
        if "nonfinite" in value:
            return value["nonfinite"]
        return f"a {value['not_a_number']} object ({value['repr']}), not a number"
    return f"{value:.6g}"


def matches(expected, got):
    """NaN, infinity and non-numbers never match a finite expectation."""
    if isinstance(got, dict) or isinstance(expected, dict):
        return False
    return math.isclose(expected, got, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def graph_from_steps(steps):
    """A Graph holding an existing program (for programs the shrinker makes)."""
    graph = Graph()
    graph.steps = [list(step) for step in steps]
    graph.node_steps = [step for step in graph.steps if step[0] in NODE_KINDS]
    return graph


class Explainer:
    def __init__(self, graph, expected=None, got=None, rule=None, category=None, hints=None, evidence=None):
        self.graph = graph
        self.steps = graph.steps
        self.expected, self.got = expected, got
        self.read_positions = [i for i, step in enumerate(self.steps) if step[0] == "read"]
        self.rule_hint, self.category, self.hint_filter = rule, category, hints
        self.evidence = evidence
        self.catalog = load_catalog()
        self._reference = None

    def reference(self):
        """The reference, simulated: the same numbers plus what every node sent."""
        if self._reference is None:
            self._reference = simulate(self.steps)
        return self._reference

    def history(self, snapshot):
        """The calls made before a read, as code: the sequence that shows the bug."""
        end = self.read_positions[snapshot]
        calls = [render_step(s) for s in self.steps[:end] if s[0] in ("backward", "zero_grad")]
        return "; ".join(calls)

    def describe_node(self, number):
        return f"n{number} = {render_step(self.graph.node_steps[number])}"

    def refuted(self, model):
        return self.evidence is not None and self.evidence.refutes(model)

    def cleared(self, label):
        return self.evidence is not None and self.evidence.cleared(label)

    def matches(self, number):
        return matcher.match_all(self.steps, self.got, number, only=self.hint_filter, evidence=self.evidence)

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
        finding = Finding(
            headline["en"], headline["zh"], kind,
            headline=headline, cause=cause, snapshot=snapshot,
            program=render_python(self.steps), steps=self.steps, expected=expected, got=got,
            calls=self.history(snapshot) if snapshot is not None else "",
            code=runnable(steps_shown, expected, got, show),
            category=self.category or "", **extra,
        )
        return finding.compose()


def compare(graph, expected, reply, check_order=False, locate=None, rule=None, category=None, hints=None,
            evidence=None, order_only=False):
    """Findings that explain how the submission's run differs (empty: the test passes).

    `locate(line, lang)` turns a line of the submission into "file, line N" (or a
    notebook cell) for error messages. `rule` (a rule id of the catalog) and
    `category` (the test's category) name the rule a test checks when the
    numbers alone do not; `hints` limits the hints tried (a set of ids);
    `evidence` (grader.feedback.probes.Evidence) helps choose between
    explanations the numbers of this program cannot tell apart."""
    findings = _compare(graph, expected, reply, check_order or order_only, locate, rule, category, hints, evidence,
                        order_only)
    for finding in findings:
        # What refine() needs to explain it again with more evidence (not part of as_dict).
        finding.source = {"graph": graph, "expected": expected, "reply": reply, "check_order": check_order,
                          "order_only": order_only,
                          "locate": locate, "rule": rule, "category": category}
    return findings


def _compare(graph, expected, reply, check_order, locate, rule, category, hints, evidence, order_only=False):
    if not expected["ok"]:
        raise RuntimeError(f"the reference failed on a test program: {expected['error']}")
    got = reply.outcome if not reply.failure else None
    explain = Explainer(graph, expected, got, rule=rule, category=category, hints=hints, evidence=evidence)
    explain.locate = locate or (lambda line, lang="en": f"line {line}")
    if reply.failure:
        return [explain.finding("worker", T(f"The program could not finish: {reply.failure}.",
                                            f"程序没能运行完：{reply.failure}。"))]
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
        finding.cause = _blame_cause(Explainer(graph_from_steps(finding.steps)), kept) or finding.cause
    return finding


# ------------------------------------------------------------------ errors


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
        number = sum(1 for s in explain.steps[: got["step"]] if s[0] in NODE_KINDS)
        label, culprits = _node_label(explain, number), [number]
    elif step[0] in ("backward", "zero_grad"):
        label = step[0]
    candidates = [label] if label else []
    if step[0] == "backward" and isinstance(where, dict) and where.get("function") == "_backward":
        # Raised inside some op's _backward: any op of the graph; the smallest program says which.
        root = int(step[1][1:])
        ops = {_node_label(explain, n) for n in explain.graph.ancestors(root) if not explain.is_leaf(n)}
        candidates = sorted(ops, key=lambda op: LABEL_ORDER.index(op) if op in LABEL_ORDER else 99)
        label = candidates[0] if len(candidates) == 1 else ""
    return explain.finding(
        "error",
        T(f"Running `{code}` raised {error['type']}: {error['message']}{place_en}.",
          f"运行 `{code}` 时抛出 {error['type']}：{error['message']}{place_zh}。"),
        culprit=label, candidates=candidates, culprits=culprits,
        rule=explain.rule("no-exception"),
        error={"type": error["type"], "message": error["message"], "step": got["step"],
               "function": where.get("function") if isinstance(where, dict) else None,
               "line": where.get("line") if isinstance(where, dict) else None},
    )


def _node_label(explain, number):
    step = explain.graph.node_steps[number]
    if step[0] != "op":
        return "Dual" if step[0] == "dual" else "Value"
    op = step[1]
    if explain.graph.is_dual(number):
        return DUAL_PRIMITIVES_OF.get(op, (f"Dual.{op}",))[0]
    return {"-": "+", "/": "*", "neg": "*"}.get(op, op)


# -------------------------------------------------------------- snapshots


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
        return [_dual_finding(explain, number, want, have, wrong)]
    return [_grad_finding(explain, number, want, have, [n for n in wrong if not graph.is_dual(n)])]


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


# -------------------------------------------------------- reverse mode


def _wrong_list(explain, want, have, wrong, field_name="grad"):
    en, zh = [], []
    for n in wrong[:MAX_LISTED]:
        en.append(f"n{n}.{field_name} should be {show(want[n][1])}, got {show(have[n][1])}")
        zh.append(f"n{n}.{field_name} 应为 {show(want[n][1])}，实际是 {show(have[n][1])}")
    more = len(wrong) - MAX_LISTED
    if more > 0:
        en.append(f"and {more} more")
        zh.append(f"另有 {more} 个")
    return "; ".join(en), "；".join(zh)


@dataclass
class _Diagnosis:
    label: str = ""
    candidates: list = field(default_factory=list)
    blame: list = field(default_factory=list)
    rule: str = ""  # a rule id, when one of backward()/zero_grad's rules was broken
    cause: dict = None


def _grad_finding(explain, number, want, have, wrong):
    calls = explain.history(number)
    en, zh = _wrong_list(explain, want, have, wrong)
    when_en = f"after `{calls}`" if calls else "before any backward()"
    when_zh = f"执行 `{calls}` 之后" if calls else "还没有调用 backward() 时"
    headline = T(f"Gradients wrong {when_en}: {en}.", f"梯度不对（{when_zh}）：{zh}。")
    diagnosis = _diagnose_reverse(explain, number, want, have, wrong)
    hint = matcher.pick(explain.matches(number), diagnosis.label, diagnosis.candidates)
    if hint is not None:
        diagnosis = _apply_hint(explain, diagnosis, hint, number)
    rule = explain.rule(diagnosis.rule) if diagnosis.rule else explain.default_rule()
    show_nodes = wrong if len(wrong) <= 4 else [b["input"] for b in diagnosis.blame] or wrong
    return explain.finding(
        "grad", headline, diagnosis.cause, snapshot=number, show=show_nodes,
        culprit=diagnosis.label, candidates=diagnosis.candidates, blame=diagnosis.blame,
        culprits=sorted({b["node"] for b in diagnosis.blame if b.get("node") is not None}),
        wrong_nodes=wrong, rule=rule, hint=hint.as_dict() if hint else None,
    )


def _apply_hint(explain, diagnosis, hint, number):
    """The hint's culprit wins; keep the blamed edges that agree with it."""
    if hint.culprit in (diagnosis.label, ""):
        return diagnosis
    if hint.culprit in ("backward", "zero_grad"):
        cause = _semantic_cause(explain, hint.culprit, hint.hint.rule, number)
        return _Diagnosis(hint.culprit, [hint.culprit], diagnosis.blame, hint.hint.rule, cause)
    kept = [b for b in diagnosis.blame if hint.culprit in b.get("labels", [b.get("label")])]
    if kept:
        for entry in kept:
            entry["label"] = hint.culprit
        return _Diagnosis(hint.culprit, [hint.culprit] + [c for c in diagnosis.candidates if c != hint.culprit],
                          kept, diagnosis.rule, _blame_cause(explain, kept))
    return _Diagnosis(hint.culprit, [hint.culprit], diagnosis.blame, diagnosis.rule, diagnosis.cause)


def _semantic_cause(explain, who, rule_id, number, extra=None):
    rule = explain.catalog.rule(rule_id)
    calls = explain.history(number)
    en = f"Rule broken: {rule['en']}"
    zh = f"违反的规则：{rule['zh']}"
    if extra:
        en, zh = f"{en} {extra['en']}", f"{zh}{extra['zh']}"
    if calls:
        en += f" The calls that show it: `{calls}`."
        zh += f"能看出问题的调用顺序：`{calls}`。"
    return T(en, zh)


def _calls_between(explain, number):
    """(calls since the previous read, backward calls before this read) as (step index, step)."""
    end = explain.read_positions[number]
    start = explain.read_positions[number - 1] if number > 0 else -1
    calls = [(i, s) for i, s in enumerate(explain.steps[:end]) if s[0] in ("backward", "zero_grad")]
    return [c for c in calls if c[0] > start], [c for c in calls if c[1][0] == "backward"]


def _diagnose_reverse(explain, number, want, have, wrong):
    graph = explain.graph
    since, backwards = _calls_between(explain, number)
    if since and since[-1][1][0] == "zero_grad":
        listed = {int(ref[1:]) for ref in since[-1][1][1]}
        if set(wrong) & listed or not backwards:
            extra = None
            bad = sorted(set(wrong) & listed)
            if bad:
                n = bad[0]
                extra = T(f"n{n} was given to zero_grad, so its grad should be 0, got {show(have[n][1])}.",
                          f"n{n} 传给了 zero_grad，它的 grad 应为 0，实际是 {show(have[n][1])}。")
            return _Diagnosis("zero_grad", ["zero_grad"], [], "zero-grad",
                              _semantic_cause(explain, "zero_grad", "zero-grad", number, extra))
    if not backwards:
        return _Diagnosis("", [], [], "", T("No backward() was called yet, so every grad should still be 0.0.",
                                              "还没有调用 backward()，所有 grad 都应该还是 0.0。"))
    reference = explain.reference()
    call_number = len(backwards) - 1
    root = int(backwards[-1][1][1][1:])
    call = reference["calls"][call_number]
    in_graph = graph.ancestors(root)

    order = explain.got["orders"][call_number]
    order_problem = _order_problem(explain, root, order) if isinstance(order, list) else None
    if order_problem:
        return _Diagnosis("backward", ["backward"], [], "topological-order",
                          _semantic_cause(explain, "backward", "topological-order", number, order_problem))
    if root in wrong:
        extra = T(f"The root n{root}'s grad should be {show(want[root][1])}, got {show(have[root][1])}.",
                  f"根节点 n{root} 的 grad 应为 {show(want[root][1])}，实际是 {show(have[root][1])}。")
        return _Diagnosis("backward", ["backward"], [], "root-grad-one",
                          _semantic_cause(explain, "backward", "root-grad-one", number, extra))

    senders = {}  # target -> {sender: expected total sent}
    positions = {}  # (sender, target) -> [grad sent by each edge]
    labels = {}  # (sender, target) -> primitive ops on the way
    for sender, target, op, grad in call.edges:
        senders.setdefault(target, {}).setdefault(sender, 0.0)
        senders[target][sender] += grad
        positions.setdefault((sender, target), []).append(grad)
        labels[(sender, target)] = reference["path_ops"][sender].get(target, [op])

    def right(n):
        return matches(want[n][1], have[n][1])

    frontier = [n for n in wrong if n in in_graph and n in senders and all(right(c) for c in senders[n])]
    blame, votes = [], []
    for n in frontier:
        base = call.before[n] if explain.is_leaf(n) else 0.0
        received = have[n][1] - base if not isinstance(have[n][1], dict) else None
        expected_total = want[n][1] - base
        prior = call.before[n]
        if received is not None and not explain.is_leaf(n) and not matches(prior, 0.0) \
                and matches(want[n][1] + prior, have[n][1]) and not explain.refuted(NO_RESET):
            extra = T(f"n{n} is an intermediate node: its grad should be {show(want[n][1])}, got "
                      f"{show(have[n][1])}, which is that plus its {show(prior)} from the previous call.",
                      f"n{n} 是中间节点：它的 grad 应为 {show(want[n][1])}，实际是 {show(have[n][1])}，"
                      f"正好多了上一次调用留下的 {show(prior)}。")
            return _Diagnosis("backward", ["backward"], [], "intermediate-reset",
                              _semantic_cause(explain, "backward", "intermediate-reset", number, extra))
        if received is not None and explain.is_leaf(n) and not matches(prior, 0.0) \
                and matches(want[n][1] - prior, have[n][1]) and not explain.refuted(LEAVES_RESET):
            extra = T(f"n{n} is a leaf: its grad should be {show(want[n][1])} (the {show(prior)} it had plus "
                      f"{show(expected_total)}), got {show(have[n][1])}.",
                      f"n{n} 是叶子节点：它的 grad 应为 {show(want[n][1])}（原有的 {show(prior)} 加上 "
                      f"{show(expected_total)}），实际是 {show(have[n][1])}。")
            return _Diagnosis("backward", ["backward"], [], "leaf-accumulates",
                              _semantic_cause(explain, "backward", "leaf-accumulates", number, extra))
        contributions = senders[n]
        edges = [g for c in contributions for g in positions[(c, n)]]
        # `=` instead of `+=`: the grad is just one edge's value (the others, or the
        # leaf's earlier grad, were overwritten).
        if received is not None and (len(edges) > 1 or not matches(prior, 0.0)) \
                and not matches(expected_total, received):
            overwritten = [c for c in contributions for g in positions[(c, n)]
                           if matches(g, have[n][1]) and not explain.refuted(Model(assign=(labels[(c, n)][0],)))]
            if overwritten:
                c = overwritten[-1]
                entry = _blame_entry(explain, c, n, labels[(c, n)], contributions[c], received)
                entry["overwrote"] = True
                label = entry["label"]
                op_name = graph.node_steps[c][1]
                if len(edges) > 1:
                    extra = T(f"n{n} is used by {len(edges)} paths, but its grad {show(have[n][1])} is just what "
                              f"`{op_name}` at {explain.describe_node(c)} sent; together they send "
                              f"{show(expected_total)}.",
                              f"n{n} 被 {len(edges)} 条路径用到，它的 grad {show(have[n][1])} 却只等于 "
                              f"{explain.describe_node(c)} 的 `{op_name}` 传来的值；各路径加起来应为 "
                              f"{show(expected_total)}。")
                else:
                    extra = T(f"n{n} already had grad {show(prior)} from before this backward(); `{op_name}` at "
                              f"{explain.describe_node(c)} replaced it with {show(have[n][1])} instead of adding "
                              f"to it: it should be {show(want[n][1])}.",
                              f"n{n} 在这次 backward() 之前已有 grad {show(prior)}；{explain.describe_node(c)} 的 "
                              f"`{op_name}` 用 {show(have[n][1])} 覆盖了它，而不是加上去：应为 {show(want[n][1])}。")
                rule = explain.catalog.rule("paths-add")
                cause = T(f"{extra['en']} {rule['en']}", f"{extra['zh']}{rule['zh']}")
                return _Diagnosis(label, [label], [entry], "paths-add", cause)
        entries = []
        for c, sent in contributions.items():
            got_c = None
            if received is not None:
                got_c = received - sum(v for other, v in contributions.items() if other != c)
            entries.append(_blame_entry(explain, c, n, labels[(c, n)], sent, got_c))
        votes.append({label for e in entries for label in e["labels"]})
        blame.extend(entries)

    if not blame:
        outside = [n for n in wrong if n not in in_graph]
        if outside:
            n = outside[0]
            extra = T(f"n{n} is not part of n{root}'s graph, yet its grad changed to {show(have[n][1])} "
                      f"(should be {show(want[n][1])}).",
                      f"n{n} 不在 n{root} 的计算图里，它的 grad 却变成了 {show(have[n][1])}（应为 {show(want[n][1])}）。")
            return _Diagnosis("backward", ["backward"], [], "topological-order",
                              _semantic_cause(explain, "backward", "topological-order", number, extra))
        return _Diagnosis()
    ranked = _rank(explain, votes, in_graph, senders, labels, right, root)
    best = ranked[0]
    kept = [e for e in blame if best in e["labels"]]
    for entry in kept:
        entry["label"] = best
    return _Diagnosis(best, ranked, kept, "", _blame_cause(explain, kept))


def _rank(explain, votes, in_graph, senders, labels, right, root):
    """Labels ordered by how many wrong nodes they explain; ties broken by how
    often the same op was seen sending a right value elsewhere in the graph."""
    counts = Counter(label for vote in votes for label in vote)
    cleared = Counter()
    for n in in_graph:
        if n == root or n not in senders or not right(n) or not all(right(c) for c in senders[n]):
            continue
        for c, sent in senders[n].items():
            if not matches(sent, 0.0) and len(labels[(c, n)]) == 1:
                cleared[labels[(c, n)][0]] += 1
    order = {label: i for i, label in enumerate(LABEL_ORDER)}
    return sorted(counts, key=lambda label: (explain.cleared(label), -counts[label], cleared[label],
                                             order.get(label, 99)))


def _blame_entry(explain, sender, target, path_labels, expected, got):
    step = explain.graph.node_steps[sender]
    operands = step[2:]
    sides = [i for i, a in enumerate(operands) if a == f"n{target}"]
    if len(operands) == 1:
        side = ""
    elif len(sides) == 2:
        side = "both"
    else:
        side = "left" if sides[0] == 0 else "right"
    return {"node": sender, "op": step[1], "label": path_labels[0], "labels": list(path_labels),
            "input": target, "side": side, "expected": expected, "got": got}


def _blame_cause(explain, blame):
    en, zh = [], []
    for entry in blame[:MAX_LISTED]:
        c, n, op = entry["node"], entry["input"], entry["op"]
        built_en = f" (built from {BUILT_FROM[op][0]})" if op in BUILT_FROM else ""
        built_zh = f"（由 {BUILT_FROM[op][1]} 组成）" if op in BUILT_FROM else ""
        side_en, side_zh = SIDE.get(entry["side"], ("input", "输入"))
        where = explain.describe_node(c)
        if entry["side"] == "both":
            target_en, target_zh = f"its inputs (n{n} is both of them)", f"两个输入（都是 n{n}）"
        else:
            target_en, target_zh = f"its {side_en} n{n}", f"{side_zh} n{n}"
        if entry["got"] is not None:
            en.append(f"the gradient that `{op}`{built_en} at {where} sends to {target_en} is wrong: "
                      f"expected {show(entry['expected'])}, got {show(entry['got'])}")
            zh.append(f"{where} 的 `{op}`{built_zh} 传给{target_zh} 的梯度不对：应为 {show(entry['expected'])}，"
                      f"实际是 {show(entry['got'])}")
        else:
            en.append(f"the gradient that `{op}`{built_en} at {where} sends to {target_en} is wrong: "
                      f"expected {show(entry['expected'])}")
            zh.append(f"{where} 的 `{op}`{built_zh} 传给{target_zh} 的梯度不对：应为 {show(entry['expected'])}")
    if not en:
        return None
    label = blame[0]["label"]
    local = explain.catalog.local.get(label)
    text_en = "; ".join(en) + "."
    text_en = text_en[0].upper() + text_en[1:]
    text_zh = "；".join(zh) + "。"
    if len(blame) > MAX_LISTED:
        text_en = text_en[:-1] + f" (and {len(blame) - MAX_LISTED} more like it)."
        text_zh = text_zh[:-1] + f"（还有 {len(blame) - MAX_LISTED} 处类似）。"
    if local:
        text_en += f" The rule: {local['en']}"
        text_zh += f"正确的规则：{local['zh']}"
    return T(text_en, text_zh)


def _order_problem(explain, root, order):
    """Why a returned order is not a topological order of root's graph, or None."""
    graph = explain.graph
    positions = {}
    for index, node in enumerate(order):
        if node >= 0:
            if node in positions:
                return T(f"n{node} appears more than once in the order backward() returned.",
                         f"n{node} 在 backward() 返回的顺序里出现了不止一次。")
            positions[node] = index
    reachable = graph.ancestors(root)
    missing = sorted(reachable - positions.keys())
    if missing:
        n = missing[0]
        twins = [m for m in reachable if m != n and explain.expected["snapshots"] and _same_data(explain, m, n)]
        extra_en = f" (it has the same data as n{twins[0]})" if twins else ""
        extra_zh = f"（它和 n{twins[0]} 的 data 相同）" if twins else ""
        return T(f"n{n} is part of the graph but missing from the order backward() returned{extra_en}.",
                 f"n{n} 在计算图中，却不在 backward() 返回的顺序里{extra_zh}。")
    extra = sorted(n for n in positions if n not in reachable)
    if extra:
        return T(f"n{extra[0]} is not part of n{root}'s graph but is in the order backward() returned.",
                 f"n{extra[0]} 不在 n{root} 的计算图里，却出现在 backward() 返回的顺序里。")
    if not order or order[-1] != root:
        return T(f"The root n{root} must come last in the order.", f"根节点 n{root} 必须排在顺序的最后。")
    for node in sorted(reachable):
        for parent in graph.inputs_of(node):
            if positions[parent] > positions[node]:
                return T(f"n{parent} must come before n{node}, which is computed from it.",
                         f"n{parent} 必须排在由它算出的 n{node} 之前。")
    return None


def _same_data(explain, a, b):
    snapshot = explain.expected["snapshots"][-1]
    return a < len(snapshot) and b < len(snapshot) and snapshot[a][0] == snapshot[b][0]


# ------------------------------------------------------------ forward mode


def _dual_finding(explain, number, want, have, wrong):
    graph = explain.graph
    first_wrong = [n for n in wrong if all(matches(want[i][f], have[i][f])
                                           for i in graph.inputs_of(n) for f in (0, 1))]
    first = first_wrong[0] if first_wrong else wrong[0]
    en, zh = _wrong_list(explain, want, have, wrong, "der")
    headline = T(f"Forward-mode derivatives wrong: {en}.", f"前向模式的导数不对：{zh}。")
    step = graph.node_steps[first]
    votes = [set(_dual_labels(explain, n)) for n in first_wrong] or [set(_dual_labels(explain, first))]
    counts = Counter(label for vote in votes for label in vote)
    order = {label: i for i, label in enumerate(LABEL_ORDER)}
    ranked = sorted(counts, key=lambda label: (explain.cleared(label), -counts[label], order.get(label, 99)))
    label = ranked[0] if ranked else ""
    hint = matcher.pick(explain.matches(number), label, ranked)
    if hint is not None:
        label = hint.culprit
        ranked = [label] + [r for r in ranked if r != label]
        first = next((n for n in first_wrong if label in _dual_labels(explain, n)), first)
        step = graph.node_steps[first]
    op = step[1] if step[0] == "op" else "Dual(...)"
    desc = explain.describe_node(first)
    inputs = graph.inputs_of(first)
    inputs_en = ", ".join(f"n{i} (val {show(want[i][0])}, der {show(want[i][1])})" for i in inputs)
    where_en, where_zh = f"the derivative part of Dual's `{op}`", f"Dual 的 `{op}` 的导数部分"
    if label == "Dual.lift":
        numbers = ", ".join(show(a) for a in step[2:] if not isinstance(a, str)) if step[0] == "op" else ""
        where_en = f"how Dual lifts the plain number {numbers} it is given" if numbers else "how Dual lifts numbers"
        where_zh = f"Dual 如何提升普通数字 {numbers}" if numbers else "Dual 如何提升普通数字"
    cause = T(f"The first wrong one is n{first}.der of {desc}: expected {show(want[first][1])}, "
              f"got {show(have[first][1])}, while its inputs {inputs_en} are right: check {where_en}.",
              f"第一个出错的是 {desc} 的 der：应为 {show(want[first][1])}，实际是 {show(have[first][1])}，"
              f"而它的输入 {inputs_en} 都是对的：请检查{where_zh}。")
    local = explain.catalog.local.get(label)
    if local:
        cause = T(f"{cause['en']} The rule: {local['en']}", f"{cause['zh']}正确的规则：{local['zh']}")
    blame = [{"node": first, "op": op, "label": label, "labels": _dual_labels(explain, first), "input": None,
              "side": "", "expected": want[first][1], "got": have[first][1]}]
    return explain.finding(
        "der", headline, cause, snapshot=number, show=[first],
        culprit=label, candidates=ranked, blame=blame, culprits=[first], wrong_nodes=wrong,
        rule=explain.rule(hint.hint.rule) if hint else explain.rule("dual-rule", diagnosed=False),
        hint=hint.as_dict() if hint else None,
    )


def _dual_labels(explain, number):
    step = explain.graph.node_steps[number]
    if step[0] != "op":
        return ["Dual"]
    op = step[1]
    labels = list(DUAL_PRIMITIVES_OF.get(op, (f"Dual.{op}",)))
    if op in ("+", "*") and any(not isinstance(a, str) for a in step[2:]):
        labels.append("Dual.lift")
    return labels


# ------------------------------------------------------------ order tests


def _check_order(explain, number, order):
    backward_steps = [s for s in explain.steps if s[0] == "backward"]
    root = int(backward_steps[number][1][1:])
    call = render_step(backward_steps[number])
    if isinstance(order, dict):
        problem = T(f"it returned a {order['not_a_list']}, not a list of nodes.",
                    f"返回的是 {order['not_a_list']}，不是节点列表。")
    else:
        problem = _order_problem(explain, root, order)
        if problem is None:
            return None
    headline = T(f"`{call}` returned a wrong topological order: {problem['en']}",
                 f"`{call}` 返回的拓扑序不对：{problem['zh']}")
    hint = None
    if isinstance(order, list):
        if "same data" in problem["en"]:
            hint = explain.catalog.hint("visited-by-value")
            hint = {"id": hint.id, "rule": hint.rule, "culprit": "backward", "en": hint.en, "zh": hint.zh}
    rule = explain.rule("topological-order")
    cause = T(f"Rule: {rule['en']}", f"规则：{rule['zh']}")
    return explain.finding("order", headline, cause, culprit="backward", candidates=["backward"],
                           rule=rule, hint=hint)
