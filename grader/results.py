"""One result model, built from the pytest-json-report file, written in each format.

Points come from the rubric: a category's points are shared among its tests in
proportion to their weights, rounded to hundredths so that the tests of a
category always add up to exactly its points.
"""

import sys
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from grader.plugin import CATEGORIES

GRADER_VERSION = "0.1.0"
RUBRIC_FILE = Path(__file__).resolve().parent / "rubric.toml"
SUITES_DIR = Path(__file__).resolve().parent / "suites"


@dataclass
class TestResult:
    nodeid: str
    name: str
    category: str
    hidden: bool
    passed: bool
    max_score: float = 0.0
    score: float = 0.0
    finding: dict = None  # see grader.compare.Finding.as_dict
    number: str = ""
    line: int = 0

    def message(self, lang):
        if self.passed:
            return "通过 / passed" if lang == "zh" else "passed"
        if self.finding:
            return self.finding["zh" if lang == "zh" else "en"]
        return "失败 / failed"


@dataclass
class GradeResult:
    submission: str
    suite: str
    tests: list
    problem: dict = None  # {"en": ..., "zh": ...}: why nothing could be graded
    notes: list = field(default_factory=list)  # [{"en": ..., "zh": ...}]
    printed: str = ""  # the submission's own output, capped
    isolation: str = ""
    execution_time: float = 0.0
    raw_report: dict = field(default=None, repr=False, compare=False)  # pytest-json-report, for debugging

    @property
    def score(self):
        return round(sum(t.score for t in self.tests), 2)

    @property
    def max_score(self):
        return round(sum(t.max_score for t in self.tests), 2)

    def categories(self):
        totals = {}
        for test in self.tests:
            earned, possible = totals.get(test.category, (0.0, 0.0))
            totals[test.category] = (round(earned + test.score, 2), round(possible + test.max_score, 2))
        return {c: totals[c] for c in CATEGORIES if c in totals}

    def first_line(self, lang):
        if self.problem:
            return self.problem["zh" if lang == "zh" else "en"]
        summary = ", ".join(f"{c} {e:g}/{p:g}" for c, (e, p) in self.categories().items())
        label = "得分" if lang == "zh" else "Score"
        return f"{label} {self.score:g}/{self.max_score:g} ({summary})"


def load_rubric(path=RUBRIC_FILE):
    with open(path, "rb") as rubric_file:
        rubric = tomllib.load(rubric_file)
    points = rubric.get("categories", {})
    unknown = set(points) - set(CATEGORIES)
    if unknown:
        raise ValueError(f"{path}: unknown categories {sorted(unknown)}")
    return points, rubric.get("weights", {})


def share_points(total, weights):
    """Split `total` by `weights` into hundredths that add up exactly (largest remainder)."""
    total_weight = sum(weights)
    exact = [Fraction(str(total)) * 100 * Fraction(str(w)) / Fraction(str(total_weight)) for w in weights]
    cents = [int(x) for x in exact]
    leftover = int(Fraction(str(total)) * 100) - sum(cents)
    by_remainder = sorted(range(len(exact)), key=lambda i: (-(exact[i] - cents[i]), i))
    for i in by_remainder[:leftover]:
        cents[i] += 1
    return [c / 100 for c in cents]


def _short_id(nodeid):
    """"hidden/test_x.py::test_y[...]" -> "test_x.py::test_y"."""
    path, _, name = nodeid.partition("::")
    return f"{Path(path).name}::{name.split('[')[0]}"


def tests_from_report(report, rubric=None):
    points, weights = rubric or load_rubric()
    tests = []
    for entry in report.get("tests", []):
        metadata = entry.get("metadata") or {}
        nodeid = entry["nodeid"]
        function = nodeid.partition("::")[2]
        doc = metadata.get("doc") or ""
        category = metadata.get("category") or _category_from_keywords(entry)
        finding = metadata.get("finding")
        passed = entry.get("outcome") == "passed"
        if not passed and finding is None:
            finding = _finding_from_longrepr(entry)
        tests.append(TestResult(
            nodeid=nodeid,
            name=f"{function}: {doc}" if doc else function,
            category=category,
            hidden="hidden/" in nodeid.replace("\\", "/"),
            passed=passed,
            finding=finding,
            line=entry.get("lineno") or 0,
        ))
    for category in CATEGORIES:
        members = [t for t in tests if t.category == category]
        if not members:
            continue
        shares = share_points(points.get(category, 0), [weights.get(_short_id(t.nodeid), 1) for t in members])
        for number, (test, share) in enumerate(zip(members, shares), start=1):
            test.max_score = share
            test.score = share if test.passed else 0.0
            test.number = f"{CATEGORIES.index(category) + 1}.{number}"
    order = {c: i for i, c in enumerate(CATEGORIES)}
    tests.sort(key=lambda t: (order.get(t.category, 99), int(t.number.split(".")[1]) if t.number else 0))
    return tests


def _category_from_keywords(entry):
    for keyword in entry.get("keywords", []):
        if keyword in CATEGORIES:
            return keyword
    return "gradients"


def _finding_from_longrepr(entry):
    for stage in ("setup", "call", "teardown"):
        text = (entry.get(stage) or {}).get("longrepr")
        if text:
            last = [line for line in str(text).splitlines() if line.strip()][-1:]
            summary = ("The test could not run: " + last[0].strip())[:500] if last else "The test could not run."
            return {"en": summary, "zh": summary.replace("The test could not run", "测试无法运行"), "kind": "error"}
    return {"en": "failed", "zh": "未通过", "kind": "error"}


# ---------------------------------------------------------------- formats


def _output_text(result, lang):
    lines = [result.first_line(lang)]
    lines += [note["zh" if lang == "zh" else "en"] for note in result.notes]
    if result.printed.strip():
        header = "你的代码打印的内容（已截断）：" if lang == "zh" else "What your code printed (capped):"
        lines += ["", header, result.printed.rstrip()]
    return "\n".join(lines)


def gradescope(result, lang="en"):
    """Gradescope's results.json."""
    categories = result.categories()
    return {
        "score": result.score,
        "execution_time": round(result.execution_time, 3),
        "output": _output_text(result, lang),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [
            {
                "name": test.name,
                "number": test.number,
                "score": test.score,
                "max_score": test.max_score,
                "status": "passed" if test.passed else "failed",
                "output": test.message(lang),
                "tags": [test.category],
                "visibility": "after_published" if test.hidden else "visible",
            }
            for test in result.tests
        ],
        "extra_data": {
            "max_score": result.max_score,
            "categories": {c: {"score": e, "max_score": p} for c, (e, p) in categories.items()},
            "isolation": result.isolation,
            "grader_version": GRADER_VERSION,
            "suite": result.suite,
            "submission": result.submission,
        },
    }


def classroom(result, lang="en"):
    """The GitHub Classroom runner result; the reporter sums tests[].score."""
    status = "error" if result.problem else ("pass" if result.score >= result.max_score else "fail")
    tests = [
        {
            "name": test.name,
            "status": "pass" if test.passed else ("error" if result.problem else "fail"),
            "score": test.score,
            "message": test.message(lang) if not result.problem else result.first_line(lang),
            "test_code": test.nodeid,
            "filename": test.nodeid.partition("::")[0],
            "line_no": test.line,
        }
        for test in result.tests
    ]
    if not tests:
        # The reporter crashes on a result without tests and then posts nothing
        # for anyone: always give it one entry that says why.
        tests = [{"name": "grader", "status": "error", "score": 0, "message": result.first_line(lang),
                  "test_code": "", "filename": "", "line_no": 0}]
        status = "error"
    return {"version": 1, "status": status, "max_score": int(round(result.max_score)), "tests": tests}


FORMATS = {"gradescope": gradescope, "classroom": classroom}
