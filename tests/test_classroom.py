"""What a GitHub Classroom student sees: the reporter's sums, its runner check, the step summary.

The grading reporter (classroom-resources/autograding-grading-reporter) adds
`tests[].score` left to right as JavaScript numbers, starting from 0, and
prints the sum as "Points X/Y". Python's float addition is the same IEEE double
arithmetic, so adding here in the same order gives the reporter's number; the
kit's points are exact binary fractions, so that number is the kit's total for
every combination of passed and failed tests. The printed form is checked
against the exact decimal value of the double (JavaScript prints the shortest
decimal that reads back as the same double; for these numbers that is the exact
one, since no shorter decimal lies within half a step of them).

`CLASSROOM_REPORTER_JS=path/to/dist/main.js` also runs the reporter's own
code on real results (skipped without it: its code is not part of the kit).
"""

import base64
import json
import os
import random
import re
import shutil
import subprocess
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from grader import results
from grader.points import points_text
from mutants import BY_ID, REFERENCE

ROOT = Path(__file__).resolve().parent.parent


def reporter_sum(scores):
    total = 0  # the reporter's reduce starts from the number 0
    for score in scores:
        total += score
    return total


def exact_decimal(number):
    text = format(Decimal(number), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


@pytest.fixture(scope="module")
def suites(graded_once):
    """The Classroom result of the reference for each suite: every test passed, with its points."""
    return {suite: results.classroom(graded_once(REFERENCE, suite)) for suite in ("public", "all")}


def check_combination(tests, passed):
    scores = [test["score"] if keep else 0 for test, keep in zip(tests, passed)]
    kit_total = sum((Fraction(s) for s in scores), Fraction(0))
    total = reporter_sum(scores)
    assert total == kit_total, "the double sum is exact"
    assert exact_decimal(total) == points_text(total) == points_text(float(kit_total))


def test_every_pass_fail_combination_of_the_public_suite_prints_the_kits_total(suites):
    """All 2**n combinations at once: after each test, every running total the
    reporter can have reached (the test passed: its score is added, or not), each
    with the kit's exact total of the combinations that reach it. There are at
    most as many as there are multiples of the unit up to the total, not 2**n."""
    tests = suites["public"]["tests"]
    assert len(tests) >= 10
    reachable = {0: Fraction(0)}  # the reporter's running total -> the kit's exact total
    for test in tests:
        after = {}
        for total, exact in reachable.items():
            for added in (test["score"], 0):
                assert after.setdefault(total + added, exact + Fraction(added)) == exact + Fraction(added)
        reachable = after
    assert len(reachable) > len(tests)
    for total, exact in reachable.items():
        assert total == exact, "the double sum is exact"
        assert exact_decimal(total) == points_text(total) == points_text(float(exact))


def test_random_pass_fail_combinations_of_the_whole_suite_print_the_kits_total(suites):
    tests = suites["all"]["tests"]
    assert len(tests) > 60
    chooser = random.Random(13)
    for _ in range(3000):
        rate = chooser.random()
        check_combination(tests, [chooser.random() < rate for _ in tests])
    check_combination(tests, [True] * len(tests))


def test_the_reporters_sum_of_a_buggy_submission_is_the_kits_score(graded_once, mutant_file):
    result = graded_once(mutant_file(BY_ID["add_assigns"]), "all")
    document = results.classroom(result)
    assert 0 < result.score < result.max_score
    assert reporter_sum(t["score"] for t in document["tests"]) == result.score
    assert document["max_score"] == 100


def test_hundredths_would_not_print_exactly():
    """Why the unit is a binary fraction: points in hundredths show float noise."""
    assert points_text(reporter_sum([0.1, 0.2])) == "0.30000000000000004"
    assert points_text(reporter_sum([0.125, 0.25])) == "0.375"


def test_a_submission_that_cannot_load_is_reported_once(graded_once, tmp_path):
    broken = tmp_path / "tiny_autograd.py"
    broken.write_text(REFERENCE.read_text(encoding="utf-8").replace("def exp(self):", "def exp(self)", 1),
                      encoding="utf-8")
    document = results.classroom(graded_once(broken, "all"), "zh")
    (test,) = document["tests"]
    assert test["status"] == "error" and test["score"] == 0
    assert "语法错误" in test["message"] and "Syntax error" in test["message"] and "line" in test["message"]
    assert document["status"] == "error" and document["max_score"] == 100


# ----------------------------------------------------------- the real reporter


def run_reporter(document, runner="tinyautograd"):
    main_js = os.environ.get("CLASSROOM_REPORTER_JS")
    node = shutil.which("node")
    if not (main_js and Path(main_js).is_file() and node):
        pytest.skip("set CLASSROOM_REPORTER_JS to the reporter's dist/main.js (and install node) to run it")
    env = {"PATH": os.environ.get("PATH", ""), "INPUT_RUNNERS": runner}
    if document is not None:
        encoded = base64.b64encode(json.dumps(document, ensure_ascii=False).encode("utf-8")).decode("ascii")
        env[f"{runner.upper()}_RESULTS"] = encoded
    done = subprocess.run([node, main_js], capture_output=True, text=True, env=env, timeout=60)
    return done.stdout + done.stderr


def test_the_real_reporter_prints_the_kits_points(graded_once, mutant_file):
    result = graded_once(mutant_file(BY_ID["add_assigns"]), "all")
    printed = run_reporter(results.classroom(result))
    assert f"Points {points_text(result.score)}/100" in printed
    assert "must be a comma-separated list" not in printed


def test_the_real_reporter_shows_its_real_error_with_this_runner_id(graded_once):
    """On any error the reporter blames its input unless the runner id passes its check."""
    document = results.classroom(graded_once(REFERENCE, "public"))
    assert "Points 100/100" in run_reporter(document)
    no_results = run_reporter(None)  # an error: the results variable is missing
    assert "must be a comma-separated list" not in no_results and "::error::" in no_results
    assert "must be a comma-separated list" in run_reporter(None, runner="tiny_autograd")


def test_the_workflow_runner_id_passes_the_reporters_check():
    workflow = (ROOT / "authoring" / "dist_templates" / "student" / "classroom.yml").read_text(encoding="utf-8")
    (runners,) = re.findall(r"runners: (\S+)", workflow)
    assert re.fullmatch(r"([a-zA-Z0-9]+,)*[a-zA-Z0-9]+", runners)
