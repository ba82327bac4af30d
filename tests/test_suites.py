"""The graded suites as written: fair programs, a public sample.

* Forward-mode tests run Dual programs only (no Value, no backward()), so a
  mistake in reverse mode cannot cost forward-mode points.
* The public suite is a sample of the hidden one, not a copy: its fixed tests
  check other programs than the hidden ones.
* A Dual built without a derivative (`g.dual(3.0)`) is run as the submission's
  own `Dual(3.0)`: the exercise's default der of 0 is what gets graded.
"""

import pytest

from grader.program import Graph
from grader.replay import record_plan
from grader.worker.interpreter import Interpreter


@pytest.fixture(scope="module")
def plans():
    return {suite: record_plan(suite) for suite in ("public", "hidden")}


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


def test_a_dual_without_der_is_the_submissions_own_default(engine):
    g = Graph()
    g.dual(3.0)
    g.dual(-1.5, 2.0)
    g.read()
    assert g.steps[:2] == [["dual", 3.0], ["dual", -1.5, 2.0]]
    assert g.as_python().splitlines() == ["n0 = Dual(3.0)", "n1 = Dual(-1.5, 2.0)"]

    reference = Interpreter(vars(engine)).run(g.steps)
    assert reference == {"ok": True, "snapshots": [[[3.0, 0.0], [-1.5, 2.0]]], "orders": []}
    # The interpreter passes no der of its own: a default der of 1 shows.
    other = Interpreter({"Dual": _DualWithDefaultOne}).run(g.steps)
    assert other["snapshots"] == [[[3.0, 1.0], [-1.5, 2.0]]]

