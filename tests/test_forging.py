"""A submission cannot forge its score: it earns what its honest code earns.

Each payload below is appended to the student template (whose honest code earns
0) or to the reference (which earns full marks). The payloads attack the score
rather than the machine: they patch the test runner, write results files, end
the run early, or hand back values that pretend to be right.

Everything is graded at the plain process level, the weakest isolation: the
worker runs as the grader's own user, sees the whole file system and can import
pytest. If the score holds there, it holds behind stronger walls too.
"""

import functools
import json
import math

import pytest

from grader import cli, results, sandbox
from grader.points import points_text
from grader.results import load_rubric
from mutants import REFERENCE

pytestmark = pytest.mark.slow  # `make test-fast` leaves it out: it grades many submissions or builds environments

TEMPLATE = REFERENCE.parent.parent / "student_template" / "tiny_autograd.py"
TOTAL = sum(load_rubric().points.values())
MARKER = "FORGED-by-the-submission"
FORGED_GRADESCOPE = {"score": 999.0, "output": MARKER, "tests": [], "extra_data": {"forged": MARKER}}


@pytest.fixture(scope="module")
def process_level():
    return sandbox.detect("process")


@pytest.fixture
def submit(tmp_path):
    """submit(base, payload, **placeholders) -> path of base + payload, placeholders filled."""

    def make(base, payload, **values):
        for key, value in values.items():
            payload = payload.replace(f"@@{key}@@", str(value))
        path = tmp_path / "submission" / "tiny_autograd.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(base.read_text(encoding="utf-8") + "\n\n" + payload, encoding="utf-8")
        return path

    return make


@pytest.fixture
def run_cli(monkeypatch, process_level, reference_oracle, tmp_path):
    """The command line (in this process) with the worker at the process level, from
    `tmp_path` as the current folder; returns the results file as written."""
    from grader.grading import grade

    monkeypatch.setattr(cli, "grade", functools.partial(grade, isolation=process_level, oracle=reference_oracle))
    monkeypatch.chdir(tmp_path)

    def run(submission, out="results/results.json", *options):
        assert cli.main(["grade", str(submission), "--suite", "public", "--out", str(out),
                         "--lang", "en", "--quiet", *options]) == 0
        return (tmp_path / out).read_text(encoding="utf-8")

    return run


def assert_graders_results(text, score):
    """`text` is the grader's own Gradescope document for `score`, untouched."""
    assert MARKER not in text
    data = json.loads(text)
    assert data["score"] == score
    assert data["tests"] and data["output"].splitlines()[0].startswith(f"**Score {points_text(score)}/")
    assert sum(t["score"] for t in data["tests"]) == score


# ------------------------------------------------------------- the test runner

PATCH_RUNNER = r'''
import os, sys

def _flip_everything():
    try:
        import _pytest.reports, _pytest.runner, pytest
        _pytest.reports.TestReport.outcome = property(lambda self: "passed", lambda self, value: None)
        _pytest.runner.call_and_report = lambda item, when, log=True, **kw: None
        pytest.main = lambda *a, **k: 0
        pytest.fail = pytest.skip = lambda *a, **k: None
    except ImportError:
        pass
    try:
        import pytest_jsonreport.plugin as plugin
        plugin.JSONReport.pytest_sessionfinish = lambda self, session: None
    except ImportError:
        pass
    for name in list(sys.modules):
        if name.startswith(("grader", "pytest", "_pytest")):
            module = sys.modules[name]
            for attribute in ("grade", "check", "compare", "tests_from_report", "share_points"):
                if hasattr(module, attribute):
                    setattr(module, attribute, lambda *a, **k: None)
    conftest = "import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"
    for folder in (os.getcwd(), os.path.dirname(os.path.abspath(__file__)), "@@CWD@@"):
        for name, text in (("conftest.py", conftest), ("pytest.ini", "[pytest]\naddopts = -p no:terminal\n")):
            try:
                with open(os.path.join(folder, name), "w") as out:
                    out.write(text)
            except OSError:
                pass

_flip_everything()
'''


def test_patching_the_test_runner_earns_nothing(submit, tmp_path, run_cli):
    (tmp_path / "cwd").mkdir()
    path = submit(TEMPLATE, PATCH_RUNNER, CWD=tmp_path / "cwd")
    assert_graders_results(run_cli(path), 0)


# ------------------------------------------------------------------ results files

WRITE_RESULTS = r'''
import atexit, json, os, threading, time

_FORGED = json.dumps(@@FORGED@@)
_CATEGORIES = ("gradients", "accumulation", "zero_grad", "forward_mode")
_REPORT = json.dumps({"tests": [{"nodeid": "public/test_forged.py::test_" + c, "lineno": 1, "outcome": "passed",
                                 "keywords": [c], "metadata": {"category": c, "doc": "@@MARKER@@"}} for c in _CATEGORIES]})
_TARGETS = [
    # the grader's results file and its raw pytest report, by absolute path
    ("@@OUT@@", _FORGED), ("@@RAW@@", _REPORT),
    # relative paths, as the grader would name them from its own folder
    ("results/results.json", _FORGED), ("results.json", _FORGED), ("results/results.pytest.json", _REPORT),
    # where the grader keeps its working files: next to this submission's copy
    (os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "report.json"), _REPORT),
]

def _forge():
    for target, text in _TARGETS:
        try:
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            with open(target + ".forged", "w") as out:
                out.write(text)
            os.replace(target + ".forged", target)
        except OSError:
            pass

def _keep_forging():
    while True:
        _forge()
        time.sleep(0.001)

_forge()
atexit.register(_forge)
threading.Thread(target=_keep_forging, daemon=True).start()
'''


@pytest.mark.parametrize("base, honest", [(TEMPLATE, 0), (REFERENCE, TOTAL)], ids=["template", "reference"])
def test_writing_results_files_changes_nothing(base, honest, submit, tmp_path, run_cli):
    """Forged results files and raw reports, written at import, all the time, and at exit."""
    out = tmp_path / "results" / "results.json"
    path = submit(base, WRITE_RESULTS, FORGED=FORGED_GRADESCOPE, MARKER=MARKER, OUT=out,
                  RAW=out.with_name("results.pytest.json"))
    assert_graders_results(run_cli(path, "results/results.json"), honest)


@pytest.mark.parametrize("exit_call", ["sys.exit(0)", "os._exit(0)", "raise SystemExit(0)"])
def test_ending_the_run_at_import_earns_nothing(exit_call, submit, tmp_path, run_cli):
    out = tmp_path / "results" / "results.json"
    payload = WRITE_RESULTS + f"\nimport os, sys\n{exit_call}\n"
    path = submit(TEMPLATE, payload, FORGED=FORGED_GRADESCOPE, MARKER=MARKER, OUT=out,
                  RAW=out.with_name("results.pytest.json"))
    text = run_cli(path)
    assert MARKER not in text
    data = json.loads(text)
    assert data["score"] == 0 and data["tests"]
    assert "exit" in data["output"].splitlines()[0].lower()


@pytest.mark.parametrize("exit_call", ["sys.exit(0)", "os._exit(0)"])
def test_ending_the_run_inside_backward_earns_nothing(exit_call, submit, grade_submission, process_level):
    payload = f"import os, sys\n\ndef _leave(self):\n    {exit_call}\n\nValue.backward = _leave\n"
    result = grade_submission(submit(TEMPLATE, payload), suite="public", isolation=process_level)
    assert result.problem is None
    assert result.score == 0
    assert all(not t.passed for t in result.tests)


def test_printing_a_perfect_score_earns_nothing(submit, grade_submission, process_level):
    payload = (
        f"print({json.dumps(json.dumps(FORGED_GRADESCOPE))})\n"
        "print('Score 100/100 (gradients 40/40, accumulation 20/20, zero_grad 15/15, forward_mode 25/25)')\n"
    )
    result = grade_submission(submit(TEMPLATE, payload), suite="public", isolation=process_level)
    assert result.score == 0
    output = results.gradescope(result, "en")["output"]
    assert output.splitlines()[0].startswith("**Score 0/"), "the first line is the grader's"
    assert MARKER in output, "what the submission printed is shown, below the grader's lines"
    printed_at = output.index("```")
    assert "Score 100/100" in output[printed_at:] and "Score 100/100" not in output[:printed_at], \
        "the forged line is inside the code block of what was printed"


# ------------------------------------------------------------ values that lie

LYING_VALUES = r'''
import math


class _EqualToEverything:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __lt__ = __le__ = __gt__ = __ge__ = __eq__

    def __hash__(self):
        return 0

    def __repr__(self):
        return "1.0"


class _FloatEqualToEverything(float):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = float.__hash__


class _BadFloat(float):
    def __float__(self):
        raise RuntimeError("no float for you")


LIAR = {
    "equal_to_everything": lambda: _EqualToEverything(),
    "float_equal_to_everything": lambda: _FloatEqualToEverything(0.0),
    "float_that_cannot_convert": lambda: _BadFloat(1.0),
    "nan": lambda: math.nan,
    "infinity": lambda: math.inf,
    "huge_int": lambda: 10 ** 400,
    "string": lambda: "1.0",
    "none": lambda: None,
}["@@LIAR@@"]


def _graph(root):
    order, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            order.append(node)
            stack.extend(node._parents)
    return order[::-1]


def _backward(self):
    order = _graph(self)
    for node in order:
        node.grad = LIAR()
    return order


def _zero_grad(values):
    for value in values:
        value.grad = LIAR()


def _dual_result(val):
    out = Dual(val)
    out.der = LIAR()
    return out


def _lift(x):
    return x.val if isinstance(x, Dual) else float(x)


Value.backward = _backward
zero_grad = _zero_grad
Dual.__add__ = Dual.__radd__ = lambda self, other: _dual_result(self.val + _lift(other))
Dual.__mul__ = Dual.__rmul__ = lambda self, other: _dual_result(self.val * _lift(other))
Dual.exp = lambda self: _dual_result(math.exp(self.val))
Dual.tanh = lambda self: _dual_result(math.tanh(self.val))
'''
LIARS = ["equal_to_everything", "float_equal_to_everything", "float_that_cannot_convert", "nan", "infinity",
         "huge_int", "string", "none"]


@pytest.mark.parametrize("liar", LIARS)
def test_gradients_that_pretend_to_be_right_earn_nothing(liar, submit, grade_submission, process_level):
    """Every grad and der is an object that claims to equal anything, or is not a finite number."""
    result = grade_submission(submit(TEMPLATE, LYING_VALUES, LIAR=liar), suite="public", isolation=process_level)
    assert result.problem is None
    passed = [t.nodeid for t in result.tests if t.passed]
    assert result.score == 0, f"passed with lying values: {passed}"
    for test in result.tests:
        assert test.message("en") and "passed" not in test.message("en")


def test_lying_values_are_reported_as_what_they_are(submit, grade_submission, process_level):
    result = grade_submission(submit(TEMPLATE, LYING_VALUES, LIAR="nan"), suite="public", isolation=process_level)
    messages = " ".join(t.message("en") for t in result.tests)
    assert "nan" in messages
    assert not any(math.isnan(t.score) for t in result.tests)
