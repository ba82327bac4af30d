"""What a test talks to: run a graph program on both sides and compare.

`Engine.check(graph)` runs the program on the reference (in this trusted
process, through the same interpreter) and on the submission (through the
worker), then raises `GradingFailure` with a bilingual `Finding` when they differ.
"""

import dataclasses
from typing import Callable, Optional

from grader.feedback.finding import Finding
from grader.feedback.explain import explain
from grader.oracle import Oracle
from grader.protocols import ProgramRunner
from grader.worker_client import Reply, Worker

SHRINK_CALL_SECONDS = 2.0  # one program, on the shrinking worker
SHRINK_BUDGET_SECONDS = 30.0  # all shrinking of one submission


class GradingFailure(AssertionError):
    def __init__(self, finding):
        super().__init__(finding.en)
        self.finding = finding


class Engine:
    def __init__(self, worker: ProgramRunner, oracle: Oracle, locate: Optional[Callable[[int], str]] = None,
                 shrink_worker: Optional[ProgramRunner] = None):
        self.worker = worker
        self.oracle = oracle
        self.locate = locate
        self._sticky_failure = None  # a worker failure, repeated for the rest of one test
        self.category = None  # the running test's category, for the explanation
        # Shrinking runs on a worker of its own, so it cannot touch the graded
        # worker's time budget or state (see refine()).
        self._shrink_worker = shrink_worker
        self._own_shrink_worker = False
        self._evidence, self._evidence_tried = None, False

    def begin_test(self, category: Optional[str] = None) -> None:
        self._sticky_failure = None
        self.category = category
        self.oracle.begin_test()

    def check(self, graph, check_order: bool = False, rule: Optional[str] = None, order_only: bool = False) -> None:
        """Raise GradingFailure unless the submission gives the reference's numbers.

        `check_order`: also the orders backward() returned; `order_only`: only them
        (a test of the order that a wrong gradient must not fail).
        `rule` (optional): the id of the rule this check is about, from
        grader/feedback/hints.toml ("leaf-accumulates", "intermediate-reset",
        "zero-grad", ...); the explanation names it when the numbers alone do not."""
        expected = self.oracle.expected(graph.steps)
        if self._sticky_failure is not None:
            raise GradingFailure(self._sticky_failure)
        reply = self.worker.run(graph.steps)
        # Cheap here (a generated test makes many checks): no hints. refine()
        # explains the test's final failure in full, once.
        findings = explain(graph, expected, reply, check_order=check_order, locate=self.locate,
                           rule=rule, category=self.category, hints=frozenset(), order_only=order_only,
                           oracle=self.oracle)
        if findings:
            if reply.failure:
                # Later examples of a generated test would only fail the same way
                # (or time out again): stop here and keep the program that failed.
                self._sticky_failure = findings[0]
            raise GradingFailure(findings[0])

    def outcome(self, graph) -> Reply:
        """The submission's raw outcome, for tests that check something custom."""
        return self.worker.run(graph.steps)

    # ------------------------------------------------------------ feedback

    def refine(self, finding: Finding) -> Finding:
        """Explain a test's final finding in full: with the probes' evidence and
        the hints, and with the smallest program that fails the same way. Called
        once per failed test, after its outcome is decided; never raises, never
        changes whether the test passed."""
        try:
            from grader.feedback.refine import refine

            return refine(self, finding)
        except Exception:  # noqa: BLE001 - feedback must never break grading
            return finding

    def expect_refine(self, finding):
        """A test has failed with `finding`, to be refined later: launch the feedback
        worker now if refine() will need it (see Worker.launch), so that it loads
        while other tests run. Never raises, never changes a result."""
        try:
            from grader.feedback.refine import needs_feedback_worker

            if needs_feedback_worker(finding) and self.reference_runner() is not None:
                worker = self.shrink_worker()
                if worker is not None and worker.process is None and worker.load_report is None:
                    worker.launch()
        except Exception:  # noqa: BLE001 - feedback must never break grading
            pass

    def evidence(self):
        """What the probes say about this submission (see grader/feedback/probes.py),
        gathered once, on the feedback worker; None when it cannot be gathered."""
        if not self._evidence_tried:
            self._evidence_tried = True
            try:
                from grader.feedback.probes import Evidence

                run_reference = self.reference_runner()
                worker = self.shrink_worker() if run_reference is not None else None
                if worker is not None:
                    self._evidence = Evidence.gather(run_reference, worker.run)
            except Exception:  # noqa: BLE001 - feedback must never break grading
                self._evidence = None
        return self._evidence

    def shrink_worker(self) -> Optional[ProgramRunner]:
        """A second worker on the same submission, started on first use; None when
        the graded worker is not a real one (a dead submission)."""
        if self._shrink_worker is None and isinstance(self.worker, Worker):
            limits = dataclasses.replace(
                self.worker.limits,
                call_seconds=min(self.worker.limits.call_seconds, SHRINK_CALL_SECONDS),
                # Never more than the submission's own budget: a hostile submission
                # must not buy itself extra time through its failures.
                budget_seconds=min(SHRINK_BUDGET_SECONDS, self.worker.limits.budget_seconds),
            )
            self._shrink_worker = Worker(self.worker.submission_file, limits, self.worker.isolation,
                                         box=self.worker.box, allowed_imports=self.worker.allowed_imports)
            self._own_shrink_worker = True
        return self._shrink_worker

    def reference_runner(self) -> Optional[Callable[[list], dict]]:
        """Runs any program on the reference (not only recorded ones), or None."""
        return self.oracle.runner()

    def close(self) -> None:
        if self._own_shrink_worker and self._shrink_worker is not None:
            self._shrink_worker.stop()
