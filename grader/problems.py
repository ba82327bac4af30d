"""A student's problems, read from their results document: the seam where diagnoses plug in.

A failed test is evidence; a problem is what the student fixes. The design
(section 10) puts the problems of a submission into its results document as
`extra_data.diagnoses`: a list of
`{"id", "op", "summary": {"en", "zh"}, "tests": [...], "points"}`. The gradebook's
`problems` column and the class report read them through `problems_of` only.

Until a results document carries diagnoses, `problems_of` derives a stand-in
from what `batch` records of each failed test (`extra_data.batch.failures`, see
`failures`): the failures are grouped by the misconception the feedback named
(its hint id), else by the rule the comparison found broken, else (a test that
could not finish: a timeout, a crash) as one problem `could-not-finish`; a
failed test with no record at all is its own problem, `test:NAME`. A submission
that could not be loaded is one problem, `cannot-load`; one the grader failed
on, `grader-error`. Every problem also gets the smallest program among its
tests' records (`program`, empty when none is known).

Whatever the source, a student who lost points has at least one problem, and
the result is sorted and the same for the same document.
"""

from grader.points import exact_sum

WHOLE_SUBMISSION = {
    "problem": ("cannot-load", {
        "en": "The submission could not be loaded (empty, a syntax error, no graded file, ...): the note says what.",
        "zh": "提交无法加载（空文件、语法错误、没有要评分的文件……）：备注里写明了原因。"}),
    "error": ("grader-error", {
        "en": "The grader failed on this submission (not the student's fault); a re-run tries it again.",
        "zh": "评分器在这份提交上出错了（不是学生的问题）；重新运行会再试一次。"}),
}
COULD_NOT_FINISH = {"en": "A test program could not finish (a time limit, a crash).",
                    "zh": "测试程序无法运行完（超时或崩溃）。"}


def problems_of(document):
    """[{"id", "op", "summary": {"en", "zh"}, "tests": [...], "points", "program"}] of one
    results document (a parsed results.json), sorted by id and op. Never raises."""
    document = document if isinstance(document, dict) else {}
    extra = document.get("extra_data") if isinstance(document.get("extra_data"), dict) else {}
    batch = extra.get("batch") if isinstance(extra.get("batch"), dict) else {}
    records = [f for f in _list(batch.get("failures")) if isinstance(f, dict)]
    diagnoses = [d for d in _list(extra.get("diagnoses")) if isinstance(d, dict) and d.get("id")]
    if diagnoses:
        found = [_from_diagnosis(d, records) for d in diagnoses]
    elif batch.get("status") in WHOLE_SUBMISSION:
        found = [_whole_submission(batch["status"], document)]
    else:
        found = _stand_in(document, records)
    if not found and _lost(document) > 0:  # never a lost point without a problem
        found = [{"id": "unexplained", "op": None, "summary": {"en": "Points lost without a recorded cause.",
                                                                 "zh": "失分原因没有记录。"},
                  "tests": [], "points": _lost(document), "program": ""}]
    return sorted(found, key=lambda p: (p["id"], p["op"] or ""))


def problem_ids(document):
    """The sorted, distinct ids of the document's problems (the gradebook's column)."""
    return sorted({p["id"] for p in problems_of(document)})


def failures(result):
    """What `batch` records of each failed test of a GradeResult (grader/results.py) in
    `extra_data.batch.failures`, for the stand-in above and for the smallest programs."""
    recorded = []
    for test in result.tests:
        if test.passed:
            continue
        finding = test.finding or {}
        rule = finding.get("rule") or {}
        hint = finding.get("hint") or {}
        text = hint if hint.get("en") else rule if rule.get("diagnosed") else finding.get("headline") or finding
        shrunk = finding.get("shrunk") or {}
        recorded.append({
            "test": _function(test.name), "number": test.number, "points": test.max_score - test.score,
            "hint": hint.get("id"), "rule": rule.get("id") if rule.get("diagnosed") else None,
            "kind": finding.get("kind"), "op": finding.get("culprit") or None,
            "summary": {"en": str(text.get("en", "")).split("\n")[0], "zh": str(text.get("zh", "")).split("\n")[0]},
            "program": shrunk.get("code") or finding.get("code") or "",
        })
    return recorded


# ------------------------------------------------------------------ details


def _stand_in(document, records):
    groups = {}
    for record in records:
        key = _name(record.get("hint")) or _name(record.get("rule"))
        if not key and record.get("kind") == "worker":
            key = "could-not-finish"
        key = key or "test:" + str(record.get("test"))
        op = None if key == "could-not-finish" else _name(record.get("op"))
        groups.setdefault((key, op), []).append(record)
    named = {r.get("test") for r in records}
    for test in _list(document.get("tests")):  # failed tests that batch recorded nothing of
        if isinstance(test, dict) and test.get("status") == "failed" and _function(test.get("name")) not in named:
            groups.setdefault(("test:" + _function(test.get("name")), None), []).append(
                {"test": _function(test.get("name")), "points": _number(test.get("max_score"))
                 - _number(test.get("score")), "summary": {"en": str(test.get("output", "")).split("\n")[0],
                                                         "zh": str(test.get("output", "")).split("\n")[0]}})
    found = []
    for (key, op), members in groups.items():
        # The member with the smallest program (then the first test by name) speaks for the problem.
        first = min(members, key=lambda m: (*program_size(m.get("program")), str(m.get("test"))))
        summary = COULD_NOT_FINISH if key == "could-not-finish" else _summary(first.get("summary"))
        found.append({"id": key, "op": op, "summary": summary,
                      "tests": sorted({str(m.get("test")) for m in members}),
                      "points": exact_sum(_number(m.get("points")) for m in members),
                      "program": str(first.get("program") or "")})
    return found


def _from_diagnosis(diagnosis, records):
    tests = [str(t) for t in _list(diagnosis.get("tests"))]
    wanted = {_function(t.rpartition("::")[2]) for t in tests} | set(tests)
    program = diagnosis.get("program") or smallest(
        r.get("program") for r in records if wanted & {r.get("test"), r.get("number")})
    return {"id": str(diagnosis["id"]), "op": _name(diagnosis.get("op")), "summary": _summary(diagnosis.get("summary")),
            "tests": tests, "points": _number(diagnosis.get("points")), "program": str(program or "")}


def _whole_submission(status, document):
    key, summary = WHOLE_SUBMISSION[status]
    return {"id": key, "op": None, "summary": summary, "tests": [], "points": _lost(document), "program": ""}


def smallest(programs):
    """The shortest of some programs (fewest lines, then characters, then text), or ""."""
    return min((str(p) for p in programs if p), key=program_size, default="")


def program_size(program):
    """How small a program is (a sort key): fewer lines, then characters; none at all is the largest."""
    program = str(program or "")
    return (0, program.count("\n"), len(program), program) if program else (1, 0, 0, "")


def _lost(document):
    extra = document.get("extra_data") if isinstance(document.get("extra_data"), dict) else {}
    return max(0.0, _number(extra.get("max_score")) - _number(document.get("score")))


def _function(name):
    """"test_x: what it checks" -> "test_x"."""
    return str(name or "").split(": ", 1)[0].split("[", 1)[0]


def _name(value):
    """An id or op as text, or None."""
    return str(value) if value not in (None, "") else None


def _summary(value):
    value = value if isinstance(value, dict) else {}
    return {"en": str(value.get("en", "")), "zh": str(value.get("zh", ""))}


def _list(value):
    return value if isinstance(value, list) else []


def _number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
