"""Grading end to end: full marks for the reference, nothing for the template,
the same result every time, and a command line that always leaves a results file.
"""

import json
import re
import subprocess
import sys
from fractions import Fraction

import pytest

from grader import cli, results
from grader.results import load_rubric
from mutants import BY_ID as MUTANTS_BY_ID, REFERENCE

ROOT = REFERENCE.parent.parent
TEMPLATE = ROOT / "student_template" / "tiny_autograd.py"
SEED = ROOT / "tests" / "seed_tiny_autograd.py"
TOTAL = sum(load_rubric().points.values())  # the points of every suite
CHINESE = re.compile(r"[\u4e00-\u9fff]")
# A submission with failures in several categories (partial credit).
PARTIAL_MUTANT = MUTANTS_BY_ID["add_assigns"]


@pytest.fixture(scope="module")
def partial_submission(mutant_file):
    return mutant_file(PARTIAL_MUTANT)


def run_cli(*argv):
    """The command line in this process (as `python -m grader` runs it); returns its exit code."""
    return cli.main([str(a) for a in argv])


def without_timing(data):
    data = dict(data)
    data.pop("execution_time", None)
    return data


@pytest.mark.parametrize("suite", ["public", "hidden", "all"])
def test_reference_gets_full_marks(suite, graded_once):
    result = graded_once(REFERENCE, suite)
    assert result.problem is None
    assert result.tests, f"suite {suite} ran no tests"
    failed = {t.nodeid: t.message("en") for t in result.tests if not t.passed}
    assert not failed
    assert result.score == result.max_score == TOTAL
    assert all(earned == possible for earned, possible in result.categories().values())


def test_the_seeds_own_code_gets_full_marks(graded_once):
    """The exercise's seed is its specification: its code (recursive topological
    sort, its own `-`, no Dual `__rsub__`) must earn every point."""
    result = graded_once(SEED, "all")
    assert result.problem is None
    assert not {t.nodeid: t.message("en") for t in result.tests if not t.passed}
    assert result.score == result.max_score == TOTAL


def test_template_gets_nothing_and_is_told_what_to_implement(graded_once):
    result = graded_once(TEMPLATE, "all")
    assert result.problem is None, "the template loads fine; only its stubs fail"
    assert {t.hidden for t in result.tests} == {False, True}, "suite 'all' runs public and hidden tests"
    assert result.score == 0
    for test in result.tests:
        assert not test.passed
        assert test.score == 0
        assert "NotImplementedError" in test.message("en"), test.nodeid
        assert "NotImplementedError" in test.message("zh"), test.nodeid


def test_template_gets_nothing_on_the_public_suite(graded_once):
    result = graded_once(TEMPLATE, "public")
    assert result.tests and all(not t.hidden for t in result.tests)
    assert result.score == 0 < result.max_score
    assert all("NotImplementedError" in t.message("en") for t in result.tests)


def test_grading_twice_gives_identical_results(partial_submission, grade_submission):
    first = grade_submission(partial_submission, suite="all")
    second = grade_submission(partial_submission, suite="all")
    assert 0 < first.score < first.max_score
    for lang in ("en", "zh"):
        assert without_timing(results.gradescope(first, lang)) == without_timing(results.gradescope(second, lang))
        assert results.classroom(first, lang) == results.classroom(second, lang)


@pytest.mark.parametrize("case", ["reference", "syntax_error"])
def test_command_line_exits_0_and_writes_results(case, tmp_path):
    if case == "reference":
        submission = REFERENCE
    else:
        submission = tmp_path / "broken.py"
        submission.write_text("def backward(self):\n    return [\n", encoding="utf-8")
    out = tmp_path / "out" / "results.json"
    completed = subprocess.run(
        [sys.executable, "-m", "grader", "grade", str(submission), "--suite", "public", "--out", str(out), "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["tests"]
    assert data["score"] == (TOTAL if case == "reference" else 0)
    assert out.with_name("results.pytest.json").is_file(), "the raw pytest report is kept beside the results"


def test_classroom_scores_add_up_to_the_gradescope_score(partial_submission, tmp_path):
    scores = {}
    for name in ("gradescope", "classroom"):
        out = tmp_path / f"{name}.json"
        assert run_cli("grade", partial_submission, "--suite", "public", "--out", out, "--format", name,
                       "--lang", "en", "--quiet") == 0
        scores[name] = json.loads(out.read_text(encoding="utf-8"))
    gradescope, classroom = scores["gradescope"], scores["classroom"]
    assert 0 < gradescope["score"] < gradescope["extra_data"]["max_score"]
    assert classroom["status"] == "fail"
    assert classroom["max_score"] == round(gradescope["extra_data"]["max_score"])
    # Exactly, in the hundredths the scores are written in, and as the reporter adds floats.
    assert sum(Fraction(str(t["score"])) for t in classroom["tests"]) == Fraction(str(gradescope["score"]))
    assert sum(t["score"] for t in classroom["tests"]) == pytest.approx(gradescope["score"], abs=1e-9)
    assert [t["score"] for t in classroom["tests"]] == [t["score"] for t in gradescope["tests"]]


def test_feedback_language_follows_lang(partial_submission, tmp_path):
    outputs = {}
    for lang in ("en", "zh"):
        out = tmp_path / f"{lang}.json"
        assert run_cli("grade", partial_submission, "--suite", "public", "--out", out, "--lang", lang, "--quiet") == 0
        outputs[lang] = json.loads(out.read_text(encoding="utf-8"))
    en, zh = outputs["en"], outputs["zh"]
    assert en["score"] == zh["score"]
    assert en["output"] != zh["output"]
    assert CHINESE.search(zh["output"].splitlines()[0])
    failed_en = [t["output"] for t in en["tests"] if t["status"] == "failed"]
    failed_zh = [t["output"] for t in zh["tests"] if t["status"] == "failed"]
    assert failed_en and len(failed_en) == len(failed_zh)
    for message_en, message_zh in zip(failed_en, failed_zh):
        assert message_en != message_zh
        assert CHINESE.search(message_zh)


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links and sticky folders")
def test_results_land_where_asked_even_when_someone_planted_links_and_folders_there(tmp_path):
    """In a folder anyone may write (like /tmp), another user planted a link at
    every name the grader writes (pointing at a file of the kit's) and a folder
    at one of them. The grader writes its files there and follows none of it."""
    import os
    import stat

    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    canary = tmp_path / "kit" / "rubric.toml"
    canary.parent.mkdir()
    canary.write_text("gradients = 40\n")
    for name in ("results.json", "results.json.tmp", "results.pytest.json"):
        (shared / name).symlink_to(canary)
    (shared / "report.html").mkdir()
    code = run_cli("grade", TEMPLATE, "--out", shared / "results.json", "--html", shared / "report.html", "--quiet")
    assert code == 0
    assert canary.read_text() == "gradients = 40\n"
    for name in ("results.json", "results.pytest.json", "report.html"):
        path = shared / name
        assert path.is_file() and not path.is_symlink(), name
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads((shared / "results.json").read_text(encoding="utf-8"))["tests"]
