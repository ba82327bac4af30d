"""Forward mode: which part of Dual made a derivative wrong."""

from collections import Counter

from grader.compare import matches
from grader.exercise import EXERCISE
from grader.feedback import matcher
from grader.feedback.wording import show, wrong_list
from grader.i18n import bilingual as T


def dual_finding(explain, number, want, have, wrong):
    graph = explain.graph
    first_wrong = [n for n in wrong if all(matches(want[i][f], have[i][f])
                                           for i in graph.inputs_of(n) for f in (0, 1))]
    first = first_wrong[0] if first_wrong else wrong[0]
    en, zh = wrong_list(want, have, wrong, "der")
    headline = T(f"Forward-mode derivatives wrong: {en}.", f"前向模式的导数不对：{zh}。")
    step = graph.node_steps[first]
    votes = [set(dual_labels(explain, n)) for n in first_wrong] or [set(dual_labels(explain, first))]
    counts = Counter(label for vote in votes for label in vote)
    order = {label: i for i, label in enumerate(EXERCISE.labels())}
    ranked = sorted(counts, key=lambda label: (explain.cleared(label), -counts[label], order.get(label, 99)))
    label = ranked[0] if ranked else ""
    hint = matcher.pick(explain.matches(number), label, ranked)
    if hint is not None:
        label = hint.culprit
        ranked = [label] + [r for r in ranked if r != label]
        first = next((n for n in first_wrong if label in dual_labels(explain, n)), first)
        step = graph.node_steps[first]
    if step[0] == "dual":
        return _leaf_finding(explain, number, headline, wrong, first, want, have)
    op = step[1]
    desc = explain.describe_node(first)
    inputs = graph.inputs_of(first)
    inputs_en = ", ".join(f"n{i} (val {show(want[i][0])}, der {show(want[i][1])})" for i in inputs)
    where_en, where_zh = f"the derivative part of Dual's `{op}`", f"Dual 的 `{op}` 的导数部分"
    if label == EXERCISE.dual_lift:
        numbers = ", ".join(show(a) for a in step[2:] if not isinstance(a, str)) if step[0] == "op" else ""
        where_en = f"how Dual lifts the plain number {numbers} it is given" if numbers else "how Dual lifts numbers"
        where_zh = f"Dual 如何提升普通数字 {numbers}" if numbers else "Dual 如何提升普通数字"
    cause = T(f"The first wrong one is n{first}.der of {desc}: expected {show(want[first][1])}, "
              f"got {show(have[first][1])}, while its inputs {inputs_en} are right: check {where_en}.",
              f"第一个出错的是 {desc} 的 der：应为 {show(want[first][1])}，实际是 {show(have[first][1])}，"
              f"而它的输入 {inputs_en} 都是对的：请检查{where_zh}。")
    blame = [{"node": first, "op": op, "label": label, "labels": dual_labels(explain, first), "input": None,
              "side": "", "expected": want[first][1], "got": have[first][1]}]
    return explain.finding(
        "der", headline, cause, snapshot=number, show=[first],
        culprit=label, candidates=ranked, blame=blame, culprits=[first], wrong_nodes=wrong,
        rule=explain.rule(hint.hint.rule) if hint else explain.rule("dual-rule", diagnosed=False),
        hint=hint.as_dict() if hint else None,
    )


def _leaf_finding(explain, number, headline, wrong, first, want, have):
    """A leaf's der is wrong: the only code that made it is Dual's constructor."""
    desc = explain.describe_node(first)
    if len(explain.graph.node_steps[first]) > 2:
        cause = T(f"n{first}.der of {desc} should be the der it was given, {show(want[first][1])}, got "
                  f"{show(have[first][1])}: check what `Dual.__init__` keeps.",
                  f"{desc} 的 der 应为创建时给定的 {show(want[first][1])}，实际是 {show(have[first][1])}："
                  f"请检查 `Dual.__init__` 保存了什么。")
    else:
        cause = T(f"{desc} is made without a der, so it is a constant: its der should be "
                  f"{show(want[first][1])}, got {show(have[first][1])}: check the default of `der` in `Dual.__init__`.",
                  f"{desc} 创建时没有给 der，所以它是常数：它的 der 应为 {show(want[first][1])}，实际是 "
                  f"{show(have[first][1])}：请检查 `Dual.__init__` 中 `der` 的默认值。")
    blame = [{"node": first, "op": "Dual", "label": "Dual", "labels": ["Dual"], "input": None, "side": "",
              "expected": want[first][1], "got": have[first][1]}]
    return explain.finding("der", headline, cause, snapshot=number, show=[first], culprit="Dual",
                           candidates=["Dual"], blame=blame, culprits=[first], wrong_nodes=wrong,
                           rule=explain.rule("dual-constant"), method="Dual.__init__")


def dual_labels(explain, number):
    step = explain.graph.node_steps[number]
    if step[0] != "op":
        return ["Dual"]
    labels = list(EXERCISE.primitives_of(step[1], dual=True))
    if any(not isinstance(a, str) for a in step[2:]) and EXERCISE.dual_lift not in labels:
        labels.append(EXERCISE.dual_lift)  # a plain number was lifted to a Dual
    return labels


