"""Grade without pytest: replay the graph programs the suite checks.

Tests are data: every check of the suites is `engine.check(graph, check_order,
rule)`, a test passes iff all its checks pass, and a failing check ends the
test. Generated tests run over frozen examples in order (grader/generated.py),
so the programs a test checks are fixed and do not depend on the submission, up
to its first failure. `record_plan` runs the suite once on a recording engine
and keeps, per test, its ordered checks and what the results need; the plan is
then replayed on each submission through the same `Engine` that the pytest run
uses (sticky worker failures, oracle, feedback), and the results are built by
the same `tests_from_report`. tests/test_replay.py checks that both ways give
identical results.

A batch records the plan once and grades each submission in roughly the time
its worker takes to start, instead of a pytest session per submission.
"""

import copy
import json

from grader.program import graph_from_steps
from grader.engine import GradingFailure
from grader.feedback.finding import finding_from_exception
from grader.generated import current_example
from grader.grading import grade, run_suite
from grader.plans import Check, Plan, PlannedTest  # noqa: F401 - the plan's types, re-exported


class ReplayUnsupported(RuntimeError):
    """The suite does something a plan cannot replay (grade it with pytest)."""


class _Recorder:
    """Stands in for the engine while the suite runs on nothing: every check passes
    (as on the reference) and is written down, grouped by test and example."""

    def __init__(self):
        self.tests = []  # one list of Check per test, in run order

    def begin_test(self, category=None):
        self.tests.append([])

    def check(self, graph, check_order=False, rule=None, order_only=False):
        self.tests[-1].append(Check(copy.deepcopy(graph.steps), bool(check_order), rule, bool(order_only),
                                    current_example()))

    def outcome(self, graph):
        raise ReplayUnsupported("a test reads a raw outcome (engine.outcome); only engine.check can be replayed")

    def refine(self, finding):
        return finding  # never called: every check passes while recording

    def close(self):
        pass


def record_plan(suite="public"):
    """Run the suite once, recording; raises ReplayUnsupported if it cannot be replayed."""
    recorder = _Recorder()
    report = run_suite(recorder, suite)
    entries = report.get("tests", [])
    failed = [entry["nodeid"] for entry in entries if entry.get("outcome") != "passed"]
    if failed or len(entries) != len(recorder.tests):
        raise ReplayUnsupported(f"recording the {suite} suite: {len(entries)} tests ran, "
                                f"{len(recorder.tests)} started, not passed: {failed[:5]}")
    tests = [
        PlannedTest(entry["nodeid"], entry.get("lineno") or 0, entry["metadata"]["category"],
                    entry["metadata"].get("doc", ""), checks)
        for entry, checks in zip(entries, recorder.tests)
    ]
    return Plan(suite, tests)


_PLANS = {}


def plan_for(suite="public"):
    """The plan of `suite`, recorded once per process."""
    if suite not in _PLANS:
        _PLANS[suite] = record_plan(suite)
    return _PLANS[suite]


def grade_by_replay(path, suite="public", plan=None, limits=None, isolation=None, oracle=None, begun=None):
    """Like grader.grading.grade (same preparation, worker, engine and results), but
    the suite's checks are replayed from `plan` instead of running pytest."""
    plan = plan or plan_for(suite)
    if plan.suite != suite:
        raise ValueError(f"a plan of the {plan.suite} suite cannot grade the {suite} suite")
    return grade(path, suite=suite, limits=limits, isolation=isolation, oracle=oracle,
                 run=lambda engine: replay(engine, plan), begun=begun)


def replay(engine, plan):
    """Run the plan's tests on `engine`; returns a report like pytest-json-report's.

    Every test is checked first, then each failed test's finding is refined, in
    the same order (refine() talks only to the feedback worker, so the graded
    worker meets the same programs in the same order as under pytest, and so does
    the feedback worker): the feedback worker, launched at the first failure that
    needs it, loads the submission while the remaining tests run."""
    done = [_run_test(engine, test) for test in plan.tests]
    return {"tests": [_entry(test, engine.refine(finding) if finding is not None else None)
                      for test, finding in done]}


def _run_test(engine, test):
    """(test, its unrefined finding or None)."""
    engine.begin_test(category=test.category)
    failure = _first_failure(engine, test.checks)
    if failure is None:
        return test, None
    _check, finding = failure
    engine.expect_refine(finding)
    return test, finding


def _entry(test, finding):
    metadata = {"category": test.category, "doc": test.doc}
    if finding is not None:
        metadata["finding"] = json.loads(json.dumps(finding.as_dict(), default=str))
    return {"nodeid": test.nodeid, "lineno": test.lineno, "outcome": "passed" if finding is None else "failed",
            "metadata": metadata}


def _first_failure(engine, checks):
    """(check, finding) of the first check that fails, in order; None if all pass."""
    for check in checks:
        try:
            engine.check(graph_from_steps(check.steps), check_order=check.check_order, rule=check.rule,
                         order_only=check.order_only)
        except GradingFailure as failure:
            return check, failure.finding
        except Exception as error:  # noqa: BLE001 - an error in a test fails that test, as under pytest
            return check, finding_from_exception(error)
    return None
