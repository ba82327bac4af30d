"""The graded suites as written: bilingual descriptions, fair programs, a public sample.

* Every test of both suites has a docstring of exactly two paragraphs: the
  English description, a blank line, then the Chinese one (the reports show
  the student's language).
* Forward-mode tests run Dual programs only (no Value, no backward()), so a
  mistake in reverse mode cannot cost forward-mode points.
* The public suite is a sample of the hidden one, not a copy: its fixed tests
  check other programs than the hidden ones.
* A Dual built without a derivative (`g.dual(3.0)`) is run as the submission's
  own `Dual(3.0)`: the exercise's default der of 0 is what gets graded.
"""

import importlib.util
import inspect
import re
from pathlib import Path

import pytest

from grader.program import Graph
from grader.replay import record_plan
from grader.worker.interpreter import Interpreter

SUITES_DIR = Path(__file__).resolve().parent.parent / "grader" / "suites"
CHINESE = re.compile(r"[\u4e00-\u9fff]")
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")  # with the full-width punctuation


def suite_tests(suite):
    """[(file name, test name, function)] of one suite, from its modules."""
    found = []
    for path in sorted((SUITES_DIR / suite).glob("test_*.py")):
        spec = importlib.util.spec_from_file_location(f"_suite_text_{suite}_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found += [(path.name, name, value) for name, value in vars(module).items()
                  if name.startswith("test_") and callable(value)]
    return found


def paragraphs(doc):
    return [p for p in re.split(r"\n\s*\n", inspect.cleandoc(doc or "")) if p.strip()]


@pytest.fixture(scope="module")
def plans():
    return {suite: record_plan(suite) for suite in ("public", "hidden")}


@pytest.mark.parametrize("suite", ["public", "hidden"])
def test_every_suite_test_is_described_in_english_then_chinese(suite):
    tests = suite_tests(suite)
    assert len(tests) >= 10
    wrong = []
    for file, name, function in tests:
        parts = paragraphs(function.__doc__)
        if len(parts) != 2:
            wrong.append(f"{file}::{name}: {len(parts)} paragraphs, expected English, a blank line, Chinese")
        elif CJK.search(parts[0]) or not CHINESE.search(parts[1]):
            wrong.append(f"{file}::{name}: the first paragraph must be English, the second Chinese")
    assert not wrong, "\n".join(wrong)


def test_the_paragraph_split_is_what_it_seems():
    assert paragraphs("x·x gives 2x.\n\n    x·x 的梯度是 2x。\n    ") == ["x·x gives 2x.", "x·x 的梯度是 2x。"]
    assert len(paragraphs("One line only.")) == 1
    assert len(paragraphs("English.\n\n中文。\n\nA third.")) == 3


def test_forward_mode_tests_run_dual_programs_only(plans):
    for plan in plans.values():
        tests = [test for test in plan.tests if test.category == "forward_mode"]
        assert tests
        for test in tests:
            for check in test.checks:
                kinds = {step[0] for step in check.steps}
                assert kinds <= {"dual", "op", "read"} and "dual" in kinds, (test.nodeid, kinds)


def test_the_public_tests_check_other_programs_than_the_hidden_ones(plans):
    """The fixed public tests share no program with the hidden suite. (A random one
    may: Hypothesis draws the simplest program, such as 0.5 + 0.5, first.)"""
    hidden = {repr(check.steps) for test in plans["hidden"].tests for check in test.checks}
    copied = [test.nodeid for test in plans["public"].tests for check in test.checks
              if check.example is None and repr(check.steps) in hidden]
    assert not copied


def test_the_order_tests_check_the_order_only(plans):
    """A wrong gradient must not fail a test named for the topological order."""
    for plan in plans.values():
        for test in plan.tests:
            if "order" in test.nodeid.partition("::")[2]:
                assert all(check.order_only for check in test.checks), test.nodeid


# ------------------------------------------------------------- Dual's default der


class _DualWithDefaultOne:
    def __init__(self, val, der=1.0):
        self.val, self.der = val, der


def test_a_dual_without_der_is_the_submissions_own_default(solution):
    g = Graph()
    g.dual(3.0)
    g.dual(-1.5, 2.0)
    g.read()
    assert g.steps[:2] == [["dual", 3.0], ["dual", -1.5, 2.0]]
    assert g.as_python().splitlines() == ["n0 = Dual(3.0)", "n1 = Dual(-1.5, 2.0)"]

    reference = Interpreter(vars(solution)).run(g.steps)
    assert reference == {"ok": True, "snapshots": [[[3.0, 0.0], [-1.5, 2.0]]], "orders": []}
    # The interpreter passes no der of its own: a default der of 1 shows.
    other = Interpreter({"Dual": _DualWithDefaultOne}).run(g.steps)
    assert other["snapshots"] == [[[3.0, 1.0], [-1.5, 2.0]]]

