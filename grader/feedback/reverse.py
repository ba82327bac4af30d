"""Reverse mode: which op's `_backward` (or which rule of backward()) made a gradient wrong.

Take the last backward() before the failing read. Every node's grad there is
the sum of what the nodes made from it sent (plus, for a leaf, what it held
before). A node whose grad is wrong while every node made from it has the right
grad received a wrong value from one of them: that sender's `_backward` is the
culprit. The reference's flow (what each node should have sent, from the
simulated exercise) says how much. Before blaming a local rule, the rules of
backward() itself are checked: the returned topological order, the root's grad,
the reset of intermediate grads, the accumulation of leaf grads and of several paths.
"""

from collections import Counter
from dataclasses import dataclass, field

from grader.compare import matches
from grader.exercise import EXERCISE
from grader.feedback import matcher
from grader.feedback.model import Model
from grader.feedback.wording import MAX_LISTED, SIDE, built_from, order_text, show, wrong_list
from grader.i18n import bilingual as T

NO_RESET = Model(reset_intermediate=False)
LEAVES_RESET = Model(reset_leaves=True)


@dataclass
class _Diagnosis:
    label: str = ""
    candidates: list = field(default_factory=list)
    blame: list = field(default_factory=list)
    rule: str = ""  # a rule id, when one of backward()/zero_grad's rules was broken
    cause: dict = None


def grad_finding(explain, number, want, have, wrong):
    calls = explain.history(number)
    en, zh = wrong_list(want, have, wrong)
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
        cause = semantic_cause(explain, hint.hint.rule, number)
        return _Diagnosis(hint.culprit, [hint.culprit], diagnosis.blame, hint.hint.rule, cause)
    kept = [b for b in diagnosis.blame if hint.culprit in b.get("labels", [b.get("label")])]
    if kept:
        for entry in kept:
            entry["label"] = hint.culprit
        return _Diagnosis(hint.culprit, [hint.culprit] + [c for c in diagnosis.candidates if c != hint.culprit],
                          kept, diagnosis.rule, blame_cause(explain, kept))
    return _Diagnosis(hint.culprit, [hint.culprit], diagnosis.blame, diagnosis.rule, diagnosis.cause)


def semantic_cause(explain, rule_id, number, extra=None):
    rule = explain.catalog.rule(rule_id)
    calls = explain.history(number)
    en = rule["summary"]["en"][0].upper() + rule["summary"]["en"][1:] + "."
    zh = rule["summary"]["zh"] + "。"
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
                              semantic_cause(explain, "zero-grad", number, extra))
    if not backwards:
        return _Diagnosis("", [], [], "", T("No backward() was called yet, so every grad should still be 0.0.",
                                              "还没有调用 backward()，所有 grad 都应该还是 0.0。"))
    flow = explain.flow()
    call_number = len(backwards) - 1
    root = int(backwards[-1][1][1][1:])
    in_graph = graph.ancestors(root)

    order = explain.got["orders"][call_number]
    problem = order_text(explain, root, order) if isinstance(order, list) else None
    if problem:
        return _Diagnosis("backward", ["backward"], [], "topological-order",
                          semantic_cause(explain, "topological-order", number, problem))
    if root in wrong:
        extra = T(f"The root n{root}'s grad should be {show(want[root][1])}, got {show(have[root][1])}.",
                  f"根节点 n{root} 的 grad 应为 {show(want[root][1])}，实际是 {show(have[root][1])}。")
        return _Diagnosis("backward", ["backward"], [], "root-grad-one",
                          semantic_cause(explain, "root-grad-one", number, extra))
    if flow is None:  # what each node should have sent is unknown here: no culprit to name
        return _Diagnosis()
    call = flow.calls[call_number]

    senders = {}  # target -> {sender: expected total sent}
    positions = {}  # (sender, target) -> [grad sent by each edge]
    labels = {}  # (sender, target) -> primitive ops on the way
    for sender, target, op, grad in call.edges:
        senders.setdefault(target, {}).setdefault(sender, 0.0)
        senders[target][sender] += grad
        positions.setdefault((sender, target), []).append(grad)
        labels[(sender, target)] = flow.path_ops[sender].get(target, [op])

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
                              semantic_cause(explain, "intermediate-reset", number, extra))
        if received is not None and explain.is_leaf(n) and not matches(prior, 0.0) \
                and matches(want[n][1] - prior, have[n][1]) and not explain.refuted(LEAVES_RESET):
            extra = T(f"n{n} is a leaf: its grad should be {show(want[n][1])} (the {show(prior)} it had plus "
                      f"{show(expected_total)}), got {show(have[n][1])}.",
                      f"n{n} 是叶子节点：它的 grad 应为 {show(want[n][1])}（原有的 {show(prior)} 加上 "
                      f"{show(expected_total)}），实际是 {show(have[n][1])}。")
            return _Diagnosis("backward", ["backward"], [], "leaf-accumulates",
                              semantic_cause(explain, "leaf-accumulates", number, extra))
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
                return _Diagnosis(label, [label], [entry], "paths-add", extra)
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
                              semantic_cause(explain, "topological-order", number, extra))
        return _Diagnosis()
    ranked = _rank(explain, votes, in_graph, senders, labels, right, root)
    best = ranked[0]
    kept = [e for e in blame if best in e["labels"]]
    for entry in kept:
        entry["label"] = best
    return _Diagnosis(best, ranked, kept, "", blame_cause(explain, kept))


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
    order = {label: i for i, label in enumerate(EXERCISE.labels())}
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


def blame_cause(explain, blame):
    en, zh = [], []
    for entry in blame[:MAX_LISTED]:
        c, n, op = entry["node"], entry["input"], entry["op"]
        built = built_from(op)
        built_en, built_zh = (built["en"], built["zh"]) if built else ("", "")
        side = SIDE.get(entry["side"], T("input", "输入"))
        side_en, side_zh = side["en"], side["zh"]
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
    text_en = "; ".join(en) + "."
    text_en = text_en[0].upper() + text_en[1:]
    text_zh = "；".join(zh) + "。"
    if len(blame) > MAX_LISTED:
        text_en = text_en[:-1] + f" (and {len(blame) - MAX_LISTED} more like it)."
        text_zh = text_zh[:-1] + f"（还有 {len(blame) - MAX_LISTED} 处类似）。"
    return T(text_en, text_zh)


