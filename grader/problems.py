"""A student's problems, read from their results document.

A failed test is evidence; a problem is what the student fixes. Every results
document the kit writes carries its problems as `extra_data.diagnoses`
(grader/feedback/diagnose.py): `{"id", "op", "summary": {"en", "zh"}, "tests",
"points", "program", ...}`. The gradebook's `problems` column and the class
report read them through `problems_of` only, so a results file from any kit
version, or a damaged one, gives a list and never an exception.

A submission the grader failed on is one problem, `grader-error`; a student who
lost points with no diagnosis recorded (an older results file) gets
`unexplained`, so that a lost point never goes without a problem.
"""

GRADER_ERROR = {"id": "grader-error", "summary": {
    "en": "The grader failed on this submission (not the student's fault); a re-run tries it again.",
    "zh": "评分器在这份提交上出错了（不是学生的问题）；重新运行会再试一次。"}}
UNEXPLAINED = {"id": "unexplained", "summary": {"en": "Points lost without a recorded cause.",
                                                "zh": "失分原因没有记录。"}}


def problems_of(document):
    """[{"id", "op", "summary": {"en", "zh"}, "tests": [...], "points", "program"}] of one
    results document (a parsed results.json), sorted by id and op. Never raises."""
    document = document if isinstance(document, dict) else {}
    extra = _dict(document.get("extra_data"))
    found = [_problem(d) for d in _list(extra.get("diagnoses")) if isinstance(d, dict) and _name(d.get("id"))]
    if not found and (extra.get("grader_error") or _dict(extra.get("batch")).get("status") == "error"):
        found = [_whole(GRADER_ERROR, _lost(document))]
    elif not found and _lost(document) > 0:  # never a lost point without a problem
        found = [_whole(UNEXPLAINED, _lost(document))]
    return sorted(found, key=lambda p: (p["id"], p["op"] or "", p["tests"], p["points"]))


def problem_ids(document):
    """The sorted, distinct ids of the document's problems (the gradebook's column)."""
    return sorted({p["id"] for p in problems_of(document)})


def program_size(program):
    """How small a program is (a sort key): fewer lines, then characters; none at all is the largest."""
    program = str(program or "")
    return (0, program.count("\n"), len(program), program) if program else (1, 0, 0, "")


def _problem(diagnosis):
    return {"id": _name(diagnosis["id"]), "op": _name(diagnosis.get("op")), "summary": _summary(diagnosis.get("summary")),
            "tests": [str(t) for t in _list(diagnosis.get("tests"))], "points": _number(diagnosis.get("points")),
            "program": str(diagnosis.get("program") or "")}


def _whole(problem, points):
    return {**problem, "op": None, "tests": [], "points": points, "program": ""}


def _lost(document):
    return max(0.0, _number(_dict(document.get("extra_data")).get("max_score")) - _number(document.get("score")))


def _name(value):
    """An id or op as text, or None."""
    return str(value) if isinstance(value, (str, int, float)) and value not in ("", None) else None


def _summary(value):
    value = _dict(value)
    return {"en": str(value.get("en", "")), "zh": str(value.get("zh", ""))}


def _dict(value):
    return value if isinstance(value, dict) else {}


def _list(value):
    return value if isinstance(value, list) else []


def _number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
