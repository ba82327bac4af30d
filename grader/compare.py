"""Compare a submission's answers with the reference's and explain the difference.

Everything here runs on the trusted side and reads only plain data: the graph
program, the reference outcome, and the validated reply from the worker.
A `Finding` is one reason a test failed, in Chinese and English, with the
details (culprit nodes, the program as Python) that reports draw from.
"""

import math
from dataclasses import dataclass, field

from grader.program import render_python, render_step

REL_TOL = 1e-6
ABS_TOL = 1e-9
MAX_LISTED = 3
SIDE = {0: ("left input", "左输入"), 1: ("right input", "右输入")}
BUILT_FROM = {"-": "+ and * -1", "/": "* and ** -1", "neg": "* -1"}


@dataclass
class Finding:
    en: str
    zh: str
    kind: str  # worker | error | data | grad | der | order
    culprits: list = field(default_factory=list)  # node numbers whose op is to blame
    wrong_nodes: list = field(default_factory=list)
    snapshot: int = None  # which read showed it
    program: str = ""

    def text(self, lang):
        return self.zh if lang == "zh" else self.en

    def as_dict(self):
        return {
            "en": self.en,
            "zh": self.zh,
            "kind": self.kind,
            "culprits": self.culprits,
            "wrong_nodes": self.wrong_nodes,
            "snapshot": self.snapshot,
            "program": self.program,
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


class Explainer:
    def __init__(self, graph):
        self.graph = graph
        self.steps = graph.steps
        self.read_positions = [i for i, step in enumerate(self.steps) if step[0] == "read"]

    def history(self, snapshot):
        """The calls made before a read, as code: the sequence that shows the bug."""
        end = self.read_positions[snapshot]
        calls = [render_step(s) for s in self.steps[:end] if s[0] in ("backward", "zero_grad")]
        return "; ".join(calls) if calls else "building the graph"

    def describe_node(self, number):
        return f"n{number} = {render_step(self.graph.node_steps[number])}"

    def finding(self, en, zh, kind, **extra):
        return Finding(en, zh, kind, program=render_python(self.steps), **extra)


def compare(graph, expected, reply, check_order=False, locate=None):
    """Findings that explain how the submission's run differs (empty: the test passes).

    `locate(line, lang)` turns a line of the submission into "file, line N" (or a
    notebook cell) for error messages."""
    explain = Explainer(graph)
    explain.locate = locate or (lambda line, lang="en": f"line {line}")
    if reply.failure:
        return [explain.finding(f"The program could not finish: {reply.failure}.",
                                f"程序没能运行完：{reply.failure}。", "worker")]
    got = reply.outcome
    if not expected["ok"]:
        raise RuntimeError(f"the reference failed on a test program: {expected['error']}")
    if not got["ok"]:
        return [_error_finding(explain, got)]
    for number, (want, have) in enumerate(zip(expected["snapshots"], got["snapshots"])):
        findings = _compare_snapshot(explain, number, want, have)
        if findings:
            return findings
    if check_order:
        for number, order in enumerate(got["orders"]):
            finding = _check_order(explain, number, order)
            if finding:
                return [finding]
    return []


def _error_finding(explain, got):
    step = explain.steps[got["step"]]
    error = got["error"]
    where = error.get("where")
    place_en = place_zh = ""
    if isinstance(where, dict) and isinstance(where.get("line"), int):
        place_en = f" (in {where.get('function')}, {explain.locate(where['line'], 'en')})"
        place_zh = f"（{where.get('function')}，{explain.locate(where['line'], 'zh')}）"
    code = render_step(step) or step[0]
    return explain.finding(
        f"Running `{code}` raised {error['type']}: {error['message']}{place_en}.",
        f"运行 `{code}` 时抛出 {error['type']}：{error['message']}{place_zh}。",
        "error",
    )


def _compare_snapshot(explain, number, want, have):
    if len(have) != len(want):
        return [explain.finding("The worker returned the wrong number of nodes.", "返回的节点数量不对。", "worker")]
    graph = explain.graph
    wrong_data = [n for n in range(len(want)) if not matches(want[n][0], have[n][0])]
    when = explain.history(number)
    if wrong_data:
        n = wrong_data[0]
        field_name = "val" if graph.is_dual(n) else "data"
        return [explain.finding(
            f"Forward value wrong after {when}: n{n}.{field_name} of {explain.describe_node(n)} "
            f"should be {show(want[n][0])}, got {show(have[n][0])}.",
            f"前向计算的值不对（{when} 之后）：{explain.describe_node(n)} 的 {field_name} "
            f"应为 {show(want[n][0])}，实际是 {show(have[n][0])}。",
            "data", wrong_nodes=wrong_data, culprits=[n], snapshot=number)]
    wrong = [n for n in range(len(want)) if not matches(want[n][1], have[n][1])]
    if not wrong:
        return []
    if all(graph.is_dual(n) for n in wrong):
        return [_dual_finding(explain, number, want, have, wrong)]
    return [_grad_finding(explain, number, want, have, [n for n in wrong if not graph.is_dual(n)])]


def _grad_finding(explain, number, want, have, wrong):
    graph = explain.graph
    when = explain.history(number)
    lines_en, lines_zh = [], []
    for n in wrong[:MAX_LISTED]:
        lines_en.append(f"n{n}.grad should be {show(want[n][1])}, got {show(have[n][1])}")
        lines_zh.append(f"n{n}.grad 应为 {show(want[n][1])}，实际是 {show(have[n][1])}")
    more = len(wrong) - MAX_LISTED
    if more > 0:
        lines_en.append(f"and {more} more")
        lines_zh.append(f"另有 {more} 个")
    # The culprits: consumers whose own grad is right but that sent a wrong one on.
    wrong_set = set(wrong)
    blamed = []
    for n in wrong:
        consumers = graph.consumers_of(n)
        if consumers and all(c not in wrong_set for c in consumers):
            blamed.extend((c, n) for c in consumers if c not in [b[0] for b in blamed])
    culprit_en, culprit_zh = [], []
    for consumer, victim in blamed[:MAX_LISTED]:
        op = graph.node_steps[consumer][1]
        inputs = graph.inputs_of(consumer)
        side_en, side_zh = SIDE.get(inputs.index(victim), ("input", "输入")) if len(inputs) > 1 else ("input", "输入")
        built = f" (built from {BUILT_FROM[op]})" if op in BUILT_FROM else ""
        built_zh = f"（由 {BUILT_FROM[op]} 组成）" if op in BUILT_FROM else ""
        culprit_en.append(f"the gradient that `{op}`{built} at {explain.describe_node(consumer)} sends to its {side_en} n{victim}")
        culprit_zh.append(f"{explain.describe_node(consumer)} 的 `{op}`{built_zh} 传给{side_zh} n{victim} 的梯度")
    en = f"Gradients wrong after {when}: " + "; ".join(lines_en) + "."
    zh = f"梯度不对（{when} 之后）：" + "；".join(lines_zh) + "。"
    if culprit_en:
        en += " Likely culprit: " + "; ".join(culprit_en) + " is wrong."
        zh += " 最可能出错的是：" + "；".join(culprit_zh) + "。"
    elif _only_root(graph, wrong, explain, number):
        en += " The root's own grad is wrong: backward() must set it to 1.0."
        zh += " 根节点自己的 grad 不对：backward() 应把它设为 1.0。"
    return explain.finding(en, zh, "grad", culprits=[c for c, _ in blamed], wrong_nodes=wrong, snapshot=number)


def _only_root(graph, wrong, explain, number):
    end = explain.read_positions[number]
    roots = [int(s[1][1:]) for s in explain.steps[:end] if s[0] == "backward"]
    return bool(roots) and wrong == [roots[-1]]


def _dual_finding(explain, number, want, have, wrong):
    graph = explain.graph
    wrong_set = set(wrong)
    first = next((n for n in wrong if not (set(graph.inputs_of(n)) & wrong_set)), wrong[0])
    step = graph.node_steps[first]
    op = step[1] if step[0] == "op" else "Dual(...)"
    return explain.finding(
        f"Forward-mode derivative wrong: n{first}.der of {explain.describe_node(first)} should be "
        f"{show(want[first][1])}, got {show(have[first][1])}, while its inputs are right. "
        f"Check the derivative part of Dual's `{op}`.",
        f"前向模式的导数不对：{explain.describe_node(first)} 的 der 应为 {show(want[first][1])}，"
        f"实际是 {show(have[first][1])}，而它的输入都是对的。请检查 Dual 的 `{op}` 的导数部分。",
        "der", culprits=[first], wrong_nodes=wrong, snapshot=number)


def _check_order(explain, number, order):
    graph = explain.graph
    backward_steps = [s for s in explain.steps if s[0] == "backward"]
    root = int(backward_steps[number][1][1:])
    call = render_step(backward_steps[number])

    def fail(en, zh):
        return explain.finding(f"`{call}` returned a wrong topological order: {en}",
                               f"`{call}` 返回的拓扑序不对：{zh}", "order")

    if isinstance(order, dict):
        return fail(f"it returned a {order['not_a_list']}, not a list of nodes.",
                    f"返回的是 {order['not_a_list']}，不是节点列表。")
    positions = {}
    for index, node in enumerate(order):
        if node >= 0:
            if node in positions:
                return fail(f"n{node} appears more than once.", f"n{node} 出现了不止一次。")
            positions[node] = index
    reachable = graph.ancestors(root)
    missing = sorted(reachable - positions.keys())
    if missing:
        return fail(f"n{missing[0]} is part of the graph but missing from the order.",
                    f"n{missing[0]} 在图中，却不在拓扑序里。")
    if not order or order[-1] != root:
        return fail(f"the root n{root} must come last.", f"根节点 n{root} 必须排在最后。")
    for node in reachable:
        for parent in graph.inputs_of(node):
            if positions[parent] > positions[node]:
                return fail(f"n{parent} must come before n{node}, which is computed from it.",
                            f"n{parent} 必须排在由它算出的 n{node} 之前。")
    return None
