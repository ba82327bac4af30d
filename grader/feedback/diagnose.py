"""Failed tests grouped by their cause: one Diagnosis per mistake.

A failed test is evidence; what a student fixes is a mistake. Every failed
test's finding names its mistake (`Finding.diagnosis`: the rule of the catalog
it breaks, or the misconception it matches, and the op it is in); tests with the
same rule and op show the same mistake and make one Diagnosis, whose `id` is the
misconception when some of them matched one (else the rule). A failure with no
explanation is a problem of its own, never dropped; a submission that cannot
be loaded at all has exactly one problem.

Each diagnosis carries its three hint levels (grader/feedback/hints.toml): the
symptom with the smallest program that shows it (its headline and program come
from the same finding, so their numbers agree), a nudge, and the rule spelled out.
Reports show them all: the terminal, the HTML report, the Markdown summary and
`extra_data.diagnoses` of the results (design section 10).
"""

import builtins
from collections import Counter
from dataclasses import dataclass, field
from typing import List, Optional

from grader.exercise import EXERCISE, SEMANTIC_LABELS
from grader.feedback.catalog import load
from grader.i18n import bilingual
from grader.points import exact_sum

_DUAL = "Dual."
NUMBER_KINDS = ("grad", "der", "data")
NUMBERS = "wrong-numbers"  # the key of an op's wrong numbers, before its rule is chosen


@dataclass
class Diagnosis:
    id: str  # the misconception (a hint id) or the broken rule (a rule id) of the catalog
    op: Optional[str]  # the op or function it is in, or None
    summary: dict  # {en, zh}: the mistake in a sentence
    symptom: dict  # {en, zh}: what the numbers show (level 1)
    nudge: Optional[dict]  # level 2
    explanation: Optional[dict]  # level 3
    program: str  # the smallest program that shows it ("" when there is none)
    smallest: bool  # whether `program` was shrunk
    where: Optional[dict]  # {en, zh}: where to look in the student's file, when known
    tests: list = field(default_factory=list)  # the TestResults it explains
    points: float = 0.0  # the points it costs
    category: str = ""  # where most of those points are lost
    lost: dict = field(default_factory=dict)  # category -> points lost there, in the rubric's order
    finding: dict = None  # the finding whose symptom and program are shown

    def as_json(self):
        """The results' entry (design section 10): only what the grader wrote. The symptom
        quotes the submission (its exception's text), so it stays in the tests' output."""
        return {"id": self.id, "op": self.op, "summary": self.summary, "tests": [t.name for t in self.tests],
                "points": self.points, "category": self.category, "lost": self.lost,
                "nudge": self.nudge, "where": self.where, "program": self.program}


def diagnose(result) -> List[Diagnosis]:
    """The result's problems, the costliest first (then in test order)."""
    if result.problem:
        return [_load_problem(result)]
    groups, order = {}, []
    for test in result.tests:
        if test.passed:
            continue
        finding = test.finding or {}
        key = _key(test, finding)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(test)
    _fold_backward_errors(groups, order, {id(t): n for n, t in enumerate(result.tests)})
    found = [_diagnosis(key, groups[key], result) for key in order]
    found.sort(key=lambda d: -d.points)  # stable: equal costs stay in test order
    return found


def _fold_backward_errors(groups, order, position):
    """An exception raised by an op's _backward while another problem shows that
    same op's wrong gradient is one mistake: `1 / t` for `1 / x` in log is wrong
    numbers at most inputs and ZeroDivisionError at t = 0."""
    for key in list(order):
        rule, op = key
        target = _backward_error_op(groups[key]) if rule == "no-exception" else None
        into = next((k for k in order if k != key and k[1] == target and k[0] != "unexplained"), None)
        if into is not None:
            groups[into] = sorted(groups[into] + groups.pop(key), key=lambda t: position[id(t)])
            order.remove(key)


def _backward_error_op(tests):
    """The op label whose _backward raised in every one of `tests`, or None."""
    labels = set()
    for test in tests:
        finding = test.finding or {}
        error, steps = finding.get("error") or {}, finding.get("steps") or []
        step = error.get("step")
        within = EXERCISE.op_of_function(error.get("within"))
        if within is None or not isinstance(step, int) or not 0 <= step < len(steps) or steps[step][0] != "backward":
            return None
        labels.add(EXERCISE.label(*within))
    return labels.pop() if len(labels) == 1 else None


def _key(test, finding):
    """Wrong numbers in one op are one mistake, whichever rule a test saw broken
    (a hint's `=` for `+=` and plain wrong numbers in the same `_backward`); rules
    of backward()/zero_grad, exceptions and hangs are told apart by their rule."""
    diagnosis = finding.get("diagnosis")
    if not diagnosis:
        return ("unexplained", test.nodeid)
    op = diagnosis.get("op")
    if finding.get("kind") in NUMBER_KINDS and op and op not in SEMANTIC_LABELS:
        return (NUMBERS, op)
    return (diagnosis["rule"], op)


def _diagnosis(key, tests, result):
    findings = [t.finding or {} for t in tests]
    # The smallest program: its headline, its numbers. A hang is shown as it first
    # happened: later tests only say the call was no longer run.
    hangs = [f for f in findings if (f.get("failure") or {}).get("kind") == "timeout"]
    shown = hangs[0] if hangs else min(findings, key=_size)
    ids = Counter((f.get("diagnosis") or {}).get("id") for f in findings if (f.get("diagnosis") or {}).get("id"))
    hinted = [(f.get("diagnosis") or {}).get("id") for f in findings if f.get("hint")]
    rule, op = key
    diagnosis_id = Counter(hinted).most_common(1)[0][0] if hinted else (ids.most_common(1)[0][0] if ids else rule)
    best = next((f for f in findings if (f.get("diagnosis") or {}).get("id") == diagnosis_id), shown)
    if rule == NUMBERS:
        rule = (best.get("diagnosis") or {}).get("rule") or rule
    lost = {}
    for test in tests:
        lost[test.category] = exact_sum([lost.get(test.category, 0.0), test.max_score - test.score])
    shrunk = shown.get("shrunk") or {}
    return Diagnosis(
        id=diagnosis_id if rule != "unexplained" else "unexplained",
        op=op if rule != "unexplained" else None,
        summary=_summary(diagnosis_id, rule, op, best, tests),
        symptom=(shrunk.get("headline") if shrunk.get("code") else None) or shown.get("headline")
        or _message(tests[0]),
        nudge=best.get("nudge"),
        explanation=best.get("explanation"),
        program=shrunk.get("code") or shown.get("code") or "",
        smallest=bool(shrunk.get("code")),
        where=_where(op, best, result),
        tests=tests,
        points=exact_sum(t.max_score - t.score for t in tests),
        category=max(lost, key=lambda c: (lost[c], -_category_rank(c))) if lost else "",
        lost={c: lost[c] for c in sorted(lost, key=_category_rank) if lost[c]},
        finding=shown,
    )


def _size(finding):
    shrunk = finding.get("shrunk") or {}
    steps = shrunk.get("steps") if shrunk.get("code") else finding.get("steps")
    return (len(steps) if steps else 10 ** 6, 0 if shrunk.get("code") else 1)


def _category_rank(category):
    from grader.exercise import categories

    return categories().index(category) if category in categories() else 99


def _message(test):
    return {"en": test.message("en").split("\n")[0], "zh": test.message("zh").split("\n")[0]}


def _shown_op(op):
    """How a summary names where the mistake is: "Dual *" for the op "Dual.*",
    "Value.__mul__" for a function."""
    if op.startswith(_DUAL) and op != EXERCISE.dual_lift and op[len(_DUAL):] in EXERCISE.ops:
        return f"Dual {op[len(_DUAL):]}"
    return op


def _summary(diagnosis_id, rule, op, finding, tests):
    """The mistake in a sentence: the misconception's name, or the rule's, saying where."""
    catalog = load()
    hint = catalog.hint(diagnosis_id)
    if hint is not None and finding.get("hint"):
        return finding["hint"]["summary"]
    if rule == "unexplained":
        return bilingual(f"`{tests[0].name}` fails in a way the feedback cannot name: its output says how",
                         f"`{tests[0].name}` 失败了，但反馈说不出是哪种错误：请看这个测试的输出")
    found = catalog.rule(rule)
    text = found["summary"] if found and found.get("summary") else bilingual(rule, rule)
    if op:
        where_en = f"`{_shown_op(op)}`"
        method = f"`{_method_of(op) or op}`"
        if rule == "implemented":
            return bilingual(f"{method} is still to be written (NotImplementedError)",
                             f"{method} 还没有写（NotImplementedError）")
        if rule == "no-exception":
            error = _builtin_error((finding.get("error") or {}).get("type"))
            return bilingual(f"{method} raises {error or 'an exception'}", f"{method} 抛出了{error or '异常'}")
        return bilingual(f"{text['en']} (in {where_en})", f"{text['zh']}（在 {where_en} 中）")
    return text


def _builtin_error(name):
    """`name` when it is one of Python's own exceptions: a submission names its own
    classes as it likes, and a summary is the grader's words."""
    found = getattr(builtins, name, None) if isinstance(name, str) and name.isidentifier() else None
    return name if isinstance(found, type) and issubclass(found, BaseException) else None


def _where(op, finding, result):
    """Where to look: the submission's function the mistake is in, and where the file defines it."""
    places = getattr(result, "places", None) or {}
    method = _method_of(op)
    if method and method in places:
        place = places[method]
        return bilingual(f"`{method}`, {place['en']}", f"`{method}`，{place['zh']}")
    return bilingual(f"`{method}`", f"`{method}`") if method else None


def _method_of(op):
    """The submission's function an op label points at: "Value.tanh", "Dual.__mul__", "zero_grad"."""
    if not op:
        return None
    if op == "zero_grad":
        return "zero_grad"
    if op == "backward":
        return "Value.backward"
    if op.endswith("()"):  # a call named by the hangs, e.g. "Value.backward()"
        return op[:-2]
    if op.startswith(("Value.", "Dual.")) and op.partition(".")[2] not in EXERCISE.ops:
        return op  # a function the worker named, e.g. "Value.__mul__"
    name = op[len(_DUAL):] if op.startswith(_DUAL) else op
    if name in EXERCISE.ops:
        return f"{'Dual' if op.startswith(_DUAL) else 'Value'}.{EXERCISE.op(name).method}"
    return None


def _load_problem(result):
    text = result.problem
    catalog = load()
    rule = catalog.rule("loads")
    return Diagnosis(
        id="loads", op=None, summary=rule["summary"], symptom=text, nudge=rule.get("nudge"),
        explanation={"en": rule["en"], "zh": rule["zh"]}, program="", smallest=False, where=None,
        tests=[t for t in result.tests if not t.passed], points=exact_sum(t.max_score - t.score for t in result.tests),
        category="", lost={}, finding=None)
