"""One result model, built from the pytest-json-report file, written in each format.

Points come from the rubric: a category's points are shared among its tests in
proportion to their weights, in whole multiples of the rubric's unit (an exact
binary fraction such as 1/8) so that the tests of a category always add up to
exactly its points, and any sum of test points is exact in floating point:
GitHub Classroom's reporter adds `tests[].score` left to right as JavaScript
numbers and prints the sum, which must read exactly as the kit's total for every
combination of passed and failed tests.
"""

import sys
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from grader import __version__, junit, markdown, prairielearn
from grader.exercise import categories, category_label
from grader.i18n import LANGUAGES, both_in, order, pick
from grader.points import DEFAULT_UNIT, exact_sum, score_line, share_points

GRADER_VERSION = __version__
RUBRIC_FILE = Path(__file__).resolve().parent / "rubric.toml"
SUITES_DIR = Path(__file__).resolve().parent / "suites"


PASSED = {"en": "passed", "zh": "通过 / passed"}


@dataclass
class TestResult:
    nodeid: str
    name: str  # the test function, e.g. "test_tanh"
    category: str
    hidden: bool
    passed: bool
    max_score: float = 0.0
    score: float = 0.0
    finding: dict = None  # see grader.feedback.finding.Finding.as_dict
    number: str = ""
    line: int = 0
    doc: dict = None  # {"en", "zh"}: what the test checks (its docstring's two paragraphs)

    def title(self, lang="en"):
        """How results name it: "test_tanh: tanh's local rule", in `lang`."""
        return f"{self.name}: {pick(self.doc, lang)}" if self.doc else self.name

    def message(self, lang):
        if self.passed:
            return pick(PASSED, lang)
        if self.finding:
            return pick(self.finding, lang)
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
    places: dict = field(default_factory=dict)  # {"Value.tanh": {en, zh}}: where the file defines them

    def diagnoses(self):
        """The problems found, one per mistake (grader/feedback/diagnose.py)."""
        from grader.feedback.diagnose import diagnose

        return diagnose(self)

    @property
    def score(self):
        return exact_sum(t.score for t in self.tests)

    @property
    def max_score(self):
        return exact_sum(t.max_score for t in self.tests)

    def categories(self, tests=None):
        """{category: (earned, possible)} over `tests` (default: all of them)."""
        tests = self.tests if tests is None else tests
        return {c: (exact_sum(t.score for t in tests if t.category == c),
                    exact_sum(t.max_score for t in tests if t.category == c))
                for c in categories() if any(t.category == c for t in tests)}

    def first_line(self, lang):
        if self.problem:
            return pick(self.problem, lang)
        return score_line(self.tests, self.categories(), lang, name=category_label)


@dataclass
class Rubric:
    points: dict  # category -> points
    weights: dict  # "file.py::test" -> weight
    unit: Fraction  # every test's points are a whole number of these
    allowed_imports: tuple = ()  # packages a submission may really import where the worker has them


def load_rubric(path=RUBRIC_FILE):
    with open(path, "rb") as rubric_file:
        rubric = tomllib.load(rubric_file)
    points = rubric.get("categories", {})
    if not points:
        raise ValueError(f"{path}: no [categories]")
    unit = Fraction(str(rubric.get("points", {}).get("unit", DEFAULT_UNIT)))
    if unit <= 0 or unit.numerator != 1 and unit.denominator != 1 or not _power_of_two(unit):
        raise ValueError(f"{path}: [points] unit must be a power of two such as 1, 0.5, 0.25 or 0.125, not {unit}")
    for category, value in points.items():
        if (Fraction(str(value)) / unit).denominator != 1:
            raise ValueError(f"{path}: {category} = {value} is not a whole number of units of {float(unit)}")
    allowed = tuple(rubric.get("imports", {}).get("allowed", ()))
    return Rubric(points, rubric.get("weights", {}), unit, allowed)


def _power_of_two(unit):
    value = unit.numerator * unit.denominator
    return value & (value - 1) == 0


def _short_id(nodeid):
    """"hidden/test_x.py::test_y[...]" -> "test_x.py::test_y"."""
    path, _, name = nodeid.partition("::")
    return f"{Path(path).name}::{name.split('[')[0]}"


def _doc(doc):
    """{"en", "zh"} from a test's recorded docstring (older recordings: one string)."""
    if isinstance(doc, dict) and doc.get("en"):
        return {code: str(doc.get(code) or doc["en"]) for code in LANGUAGES}
    return {code: doc for code in LANGUAGES} if isinstance(doc, str) and doc else None


def tests_from_report(report, rubric=None):
    rubric = rubric or load_rubric()
    points, weights = rubric.points, rubric.weights
    tests = []
    for entry in report.get("tests", []):
        metadata = entry.get("metadata") or {}
        nodeid = entry["nodeid"]
        function = nodeid.partition("::")[2]
        doc = _doc(metadata.get("doc"))
        category = metadata.get("category") or _category_from_keywords(entry)
        finding = metadata.get("finding")
        passed = entry.get("outcome") == "passed"
        if not passed and finding is None:
            finding = _finding_from_longrepr(entry)
        tests.append(TestResult(
            nodeid=nodeid,
            name=function,
            doc=doc,
            category=category,
            hidden="hidden/" in nodeid.replace("\\", "/"),
            passed=passed,
            finding=finding,
            line=entry.get("lineno") or 0,
        ))
    for category in categories():
        members = [t for t in tests if t.category == category]
        if not members:
            continue
        shares = share_points(points.get(category, 0), [weights.get(_short_id(t.nodeid), 1) for t in members],
                              rubric.unit)
        for number, (test, share) in enumerate(zip(members, shares), start=1):
            test.max_score = share
            test.score = share if test.passed else 0.0
            test.number = f"{categories().index(category) + 1}.{number}"
    order = {c: i for i, c in enumerate(categories())}
    tests.sort(key=lambda t: (order.get(t.category, 99), int(t.number.split(".")[1]) if t.number else 0))
    return tests


def _category_from_keywords(entry):
    """A test's category when its metadata lacks one (it failed before the plugin
    recorded it): its marker among the keywords. A test with none is the kit's bug."""
    for keyword in entry.get("keywords", []):
        if keyword in categories():
            return keyword
    raise ValueError(f"{entry.get('nodeid')}: no category of grader/rubric.toml; every test needs one")


def _finding_from_longrepr(entry):
    for stage in ("setup", "call", "teardown"):
        text = (entry.get(stage) or {}).get("longrepr")
        if text:
            last = [line for line in str(text).splitlines() if line.strip()][-1:]
            summary = ("The test could not run: " + last[0].strip())[:500] if last else "The test could not run."
            return {"en": summary, "zh": summary.replace("The test could not run", "测试无法运行"), "kind": "error"}
    return {"en": "failed", "zh": "未通过", "kind": "error"}


# ---------------------------------------------------------------- formats


# A test's output when the file could not be loaded: the reason is said once, at the top.
NOT_RUN = {"en": "Not run: the file could not be loaded (the message at the top says why).",
           "zh": "没有运行：文件无法加载（原因见页面顶部的消息）。"}


def gradescope(result, lang="en"):
    """Gradescope's results.json. The top-level output (Markdown) shows only the
    visible tests: hidden ones, and with them the total, appear when the instructor
    publishes the grades (Gradescope hides the total while any test is hidden)."""
    categories = result.categories()
    return {
        "score": result.score,
        "execution_time": round(result.execution_time, 3),
        "output": markdown.gradescope_output(result, lang),
        "output_format": "md",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [
            {
                "name": test.title(lang),
                "number": test.number,
                "score": test.score,
                "max_score": test.max_score,
                "status": "passed" if test.passed else "failed",
                "output": pick(NOT_RUN, lang) if result.problem else test.message(lang),
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
            "diagnoses": [d.as_json() for d in result.diagnoses()],
        },
    }


def classroom(result, lang="en"):
    """The GitHub Classroom runner result. The reporter adds tests[].score left to
    right and prints the sum: points are exact binary fractions (grader/points.py),
    so it prints exactly the kit's total. A submission that cannot be loaded is one
    errored test that says why (the reporter prints an errored test's message, once)."""
    max_score = int(round(result.max_score or rubric_total()))
    if result.problem or not result.tests:
        test = {"name": "load / 加载", "status": "error", "score": 0, "message": _both_languages(result, lang),
                "test_code": "", "filename": Path(result.submission).name, "line_no": 0}
        return {"version": 1, "status": "error", "max_score": max_score, "tests": [test]}
    tests = [
        {
            "name": test.title(lang),
            "status": "pass" if test.passed else "fail",
            "score": test.score,
            "message": test.message(lang),
            "test_code": test.nodeid,
            "filename": test.nodeid.partition("::")[0],
            "line_no": test.line,
        }
        for test in result.tests
    ]
    status = "pass" if result.score >= result.max_score else "fail"
    return {"version": 1, "status": status, "max_score": max_score, "tests": tests}


def _both_languages(result, lang):
    problem = result.problem or {lang: result.first_line(lang) for lang in LANGUAGES}
    return both_in(problem, lang)


GRADER_FAILED = {
    "en": "The autograder itself failed on this submission (this is not about your code), so this 0 is a "
          "placeholder, not a grade. The run is marked as a grader error for your instructor; please tell them, "
          "or submit again later.",
    "zh": "自动评分器本身在这份提交上出错了（不是你的代码的问题），所以这个 0 分只是占位，不是成绩。"
          "这次运行已标记为评分器错误；请告诉老师，或稍后重新提交。",
}


def gradescope_grader_failed(lang="en"):
    """The results.json for a run where the grader could not run at all: valid against
    grader/schemas/gradescope.schema.json, 0 out of the real maximum, marked
    `extra_data.grader_error` so that an instructor can find it."""
    rubric = load_rubric()
    total = rubric_total()
    first, second = order(lang)
    text = both_in(GRADER_FAILED, lang, "\n\n")
    return {
        "score": 0.0,
        "execution_time": 0.0,
        "output": f"**{markdown.escape(GRADER_FAILED[first])}**\n\n{markdown.escape(GRADER_FAILED[second])}\n",
        "output_format": "md",
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [{"name": "grader / 评分器", "number": "0.1", "score": 0.0, "max_score": total, "status": "failed",
                   "output": text, "tags": ["grader"], "visibility": "visible"}],
        "extra_data": {
            "max_score": total,
            "categories": {c: {"score": 0.0, "max_score": float(p)} for c, p in rubric.points.items()},
            "isolation": "none: the grader did not run",
            "grader_version": GRADER_VERSION,
            "grader_error": True,
            "diagnoses": [],
        },
    }


def rubric_total():
    return exact_sum(load_rubric().points.values())


FORMATS = {"gradescope": gradescope, "classroom": classroom, "junit": junit.document,
           "prairielearn": prairielearn.results}
