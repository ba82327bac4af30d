"""Where else courses grade: GitLab and Jenkins (JUnit XML), PrairieLearn, students' own machines.

* `--format junit`: one testcase per test, categories as test suites, the
  feedback in a failed test's <failure> text; the student bundle's
  .gitlab-ci.yml publishes it as the pipeline's JUnit report.
* `--format prairielearn`: the fields PrairieLearn's external grading reads.
* imports of libraries the grader does not have cost nothing until used;
* a notebook's outputs do not count towards its size limit;
* `make grade` takes the feedback language.
"""

import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import nbformat
import pytest
import yaml
from nbformat.v4 import new_code_cell, new_notebook, new_output

from authoring import dist
from grader import results
from grader.points import points_text
from make_env import make_environment
from mutants import BY_ID, REFERENCE, mutant_source

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_SOURCE = REFERENCE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def buggy(graded_once, mutant_file):
    return graded_once(mutant_file(BY_ID["relu_one_at_zero"]), "all")


# ---------------------------------------------------------------- JUnit


def test_junit_has_a_suite_per_category_and_a_case_per_test(buggy):
    root = ElementTree.fromstring(results.FORMATS["junit"](buggy, "en"))
    assert root.tag == "testsuites" and int(root.get("tests")) == len(buggy.tests)
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert list(suites) == list(buggy.categories())
    cases = root.findall("testsuite/testcase")
    assert [case.get("name") for case in cases] == [t.title("en") for t in buggy.tests]
    failed = [t for t in buggy.tests if not t.passed]
    failures = root.findall("testsuite/testcase/failure")
    assert len(failures) == len(failed) == int(root.get("failures")) > 0
    assert [f.text for f in failures] == [t.message("en") for t in failed], "the feedback is the failure text"
    for name, suite in suites.items():
        properties = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
        earned, possible = buggy.categories()[name]
        assert properties == {"score": points_text(earned), "max_score": points_text(possible)}


def test_junit_reports_an_unloadable_submission_once(graded_once, tmp_path):
    broken = tmp_path / "tiny_autograd.py"
    broken.write_text(REFERENCE_SOURCE.replace("def relu(self):", "def relu(self)", 1), encoding="utf-8")
    root = ElementTree.fromstring(results.FORMATS["junit"](graded_once(broken, "public"), "en"))
    (error,) = root.iter("error")
    assert "Syntax error" in error.text and "语法错误" in error.text
    assert len(list(root.iter("testcase"))) == 1


def test_junit_keeps_what_a_submission_printed_as_valid_xml(graded_once, tmp_path):
    noisy = tmp_path / "tiny_autograd.py"
    noisy.write_text(REFERENCE_SOURCE.replace("def relu(self):", "def relu(self)", 1)
                     + '\nprint("\\x00\\x07 <b>&</b> ]]>")\n', encoding="utf-8")
    ElementTree.fromstring(results.FORMATS["junit"](graded_once(noisy, "public"), "en"))


def test_the_gitlab_pipeline_publishes_the_report_it_writes(tmp_path):
    bundle = dist.build_student(tmp_path / "student", verify=False, log=lambda *a: None)
    pipeline = yaml.safe_load((bundle / ".gitlab-ci.yml").read_text(encoding="utf-8"))
    job = pipeline["grade"]
    report = job["artifacts"]["reports"]["junit"]
    assert job["artifacts"]["when"] == "always"
    (grading,) = [line for line in job["script"] if "-m grader grade" in line]
    assert f"--out {report}" in grading and "--format junit" in grading
    # Run the pipeline's grading line here (the image's `python` is this one).
    command = grading.replace("python -m", f"{sys.executable} -m").replace('"$SUBMISSION"',
                                                                          job["variables"]["SUBMISSION"])
    (bundle / "tiny_autograd.py").write_text(mutant_source(BY_ID["add_assigns"]), encoding="utf-8")
    subprocess.run(command, shell=True, cwd=bundle, check=True, capture_output=True, timeout=600)
    root = ElementTree.parse(bundle / report).getroot()
    assert int(root.get("failures")) > 0 and root.findall("testsuite/testcase/failure")
    assert (bundle / "results" / "report.html").is_file()


# ----------------------------------------------------------- PrairieLearn


def test_prairielearn_results_have_the_fields_it_reads(buggy):
    document = json.loads(json.dumps(results.FORMATS["prairielearn"](buggy, "en")))
    assert document["gradable"] is True
    assert document["score"] == buggy.score / buggy.max_score and 0 < document["score"] < 1
    assert document["message"].startswith("Score ")
    assert len(document["tests"]) == len(buggy.tests)
    for entry, test in zip(document["tests"], buggy.tests):
        assert set(entry) == {"name", "description", "points", "max_points", "message", "output"}
        assert entry["points"] == test.score and entry["max_points"] == test.max_score
        assert bool(entry["message"]) == (not test.passed)
    assert sum(t["points"] for t in document["tests"]) == buggy.score


def test_prairielearn_marks_an_unloadable_submission_ungradable(graded_once, tmp_path):
    empty = tmp_path / "tiny_autograd.py"
    empty.write_text("\n", encoding="utf-8")
    document = results.FORMATS["prairielearn"](graded_once(empty, "public"), "zh")
    assert document["gradable"] is False and "空" in document["message"] and "empty" in document["message"]
    assert document["format_errors"] == [document["message"]]


# ------------------------------------------------- imports the grader lacks


UNUSED_IMPORTS = "from graphviz import Digraph\nimport numpy as np\nimport matplotlib.pyplot as plt\n"


def test_unused_imports_of_missing_libraries_cost_nothing(grade_submission, tmp_path):
    submission = tmp_path / "tiny_autograd.py"
    submission.write_text(UNUSED_IMPORTS + REFERENCE_SOURCE, encoding="utf-8")
    result = grade_submission(submission, suite="public")
    assert result.problem is None and result.score == result.max_score
    (note,) = [n for n in result.notes if "standard library" in n["en"]]
    assert "`graphviz`, `matplotlib`, `numpy`" in note["en"] and "标准库" in note["zh"]


def test_using_a_missing_library_fails_only_the_tests_that_use_it(grade_submission, tmp_path):
    uses_numpy = REFERENCE_SOURCE.replace("import math\n", "import math\nimport numpy as np\n", 1).replace(
        "math.tanh(", "np.tanh(")
    assert "np.tanh(" in uses_numpy
    submission = tmp_path / "tiny_autograd.py"
    submission.write_text(uses_numpy, encoding="utf-8")
    result = grade_submission(submission, suite="public")
    assert result.problem is None and 0 < result.score < result.max_score
    failed = [t for t in result.tests if not t.passed]
    assert failed and all("numpy" in t.message("en") and "standard library" in t.message("en") for t in failed)
    assert any(t.passed for t in result.tests if t.category == "accumulation")


def test_a_class_built_on_a_missing_library_says_why_it_cannot_load(grade_submission, tmp_path):
    submission = tmp_path / "tiny_autograd.py"
    submission.write_text("from graphviz import Digraph\n\nclass Drawing(Digraph):\n    pass\n" + REFERENCE_SOURCE,
                          encoding="utf-8")
    result = grade_submission(submission, suite="public")
    assert result.problem and "graphviz" in result.problem["en"] and "line 3" in result.problem["en"]


def test_standard_library_imports_are_real(grade_submission, tmp_path):
    submission = tmp_path / "tiny_autograd.py"
    submission.write_text("import json, statistics, collections.abc\n" + REFERENCE_SOURCE
                          + "\nassert json.dumps([1]) == '[1]'\n", encoding="utf-8")
    result = grade_submission(submission, suite="public")
    assert result.problem is None and result.score == result.max_score
    assert not [n for n in result.notes if "standard library" in n["en"]]


def test_the_placeholder_finder_knows_the_standard_library():
    from grader.worker.placeholders import is_standard

    assert all(is_standard(name) for name in ("math", "json", "collections.abc", "sys", "itertools"))
    assert not any(is_standard(name) for name in ("numpy", "graphviz", "pytest", "tiny_autograd_extra"))


# ------------------------------------------------------------- notebooks


def test_a_notebook_with_large_outputs_is_graded_by_its_code(grade_submission, tmp_path):
    """A plot in the outputs makes the file far larger than the 1 MiB code limit."""
    plot = "iVBORw0KGgo" + "A" * (3 * 1024 * 1024)
    cell = new_code_cell(REFERENCE_SOURCE, outputs=[new_output("display_data", data={"image/png": plot})])
    path = tmp_path / "tiny_autograd.ipynb"
    path.write_text(nbformat.writes(new_notebook(cells=[cell])), encoding="utf-8")
    assert path.stat().st_size > 3 * 1024 * 1024
    result = grade_submission(path, suite="public")
    assert result.problem is None and result.score == result.max_score


def test_a_notebook_with_too_much_code_is_refused_and_says_so(grade_submission, tmp_path):
    path = tmp_path / "tiny_autograd.ipynb"
    path.write_text(nbformat.writes(new_notebook(cells=[new_code_cell("x = 1\n" * 200_000)])), encoding="utf-8")
    result = grade_submission(path, suite="public")
    assert result.problem and "code" in result.problem["en"] and "KiB" in result.problem["en"]


# ------------------------------------------------------------ languages


@pytest.mark.parametrize("variables, lang", [(["FEEDBACK_LANG=zh"], "zh"), (["LANG=zh_CN.UTF-8"], "zh"),
                                             (["LANG=zh"], "zh"), (["FEEDBACK_LANG=en", "LANG=zh"], "en")])
def test_make_grade_takes_the_feedback_language(variables, lang):
    done = subprocess.run(["make", "-n", "grade", *variables], cwd=ROOT, capture_output=True, text=True, check=True,
                          env=make_environment())
    assert f"--lang {lang}" in done.stdout


# ------------------------------------------------------------------- CI


def test_ci_runs_the_tests_with_the_default_the_oldest_and_the_newest_python(tmp_path):
    """.ci/run with stand-ins for make, npm and pyenv: the workflow linter installed
    first (where npm is), then `make test`, then once per pyenv Python."""
    stubs = tmp_path / "bin"
    stubs.mkdir()
    calls = tmp_path / "calls"
    (stubs / "make").write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    (stubs / "pyenv").write_text('#!/bin/sh\n[ "$1" = prefix ] && [ "$2" != 3.13 ] && '
                                 f'echo {tmp_path}/py$2 && exit 0\nexit 1\n')
    (stubs / "bwrap").write_text("#!/bin/sh\n")  # so that .ci/run installs nothing here
    (stubs / "npm").write_text("#!/bin/sh\nexit 1\n")  # make (a stand-in) is what calls it
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    (tmp_path / "py3.9" / "bin").mkdir(parents=True)
    (tmp_path / "py3.9" / "bin" / "python3").write_text("#!/bin/sh\n")
    (tmp_path / "py3.9" / "bin" / "python3").chmod(0o755)
    done = subprocess.run(["bash", str(ROOT / ".ci" / "run")], env={"PATH": f"{stubs}:/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # The whole suite, hostile and isolation tests included, on every Python.
    assert calls.read_text().splitlines() == ["lint-tools", "test",
                                              f"test PYTHON={tmp_path}/py3.9/bin/python3 VENV=.venv-3.9"]
    assert "Python 3.13 is not installed" in done.stdout
