"""What a test talks to: run a graph program on both sides and compare.

`Engine.check(graph)` runs the program on the reference (in this trusted
process, through the same interpreter) and on the submission (through the
worker), then raises `GradingFailure` with a bilingual `Finding` when they differ.
"""

import importlib.util
import json
from pathlib import Path

from grader.compare import Finding, compare
from grader.worker.interpreter import Interpreter

KIT_ROOT = Path(__file__).resolve().parent.parent
REFERENCE_FILE = KIT_ROOT / "reference" / "tiny_autograd.py"


class GradingFailure(AssertionError):
    def __init__(self, finding):
        super().__init__(finding.en)
        self.finding = finding


def load_reference(path=REFERENCE_FILE):
    spec = importlib.util.spec_from_file_location("tiny_autograd_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ReferenceOracle:
    """Expected outcomes computed by the reference solution, cached per program."""

    def __init__(self, module=None):
        self.interpreter = Interpreter(vars(module or load_reference()))
        self.cache = {}

    def expected(self, steps):
        key = json.dumps(steps)
        if key not in self.cache:
            self.cache[key] = self.interpreter.run(steps)
        return self.cache[key]


class Engine:
    def __init__(self, worker, oracle, locate=None):
        self.worker = worker
        self.oracle = oracle
        self.locate = locate
        self._sticky_failure = None  # a worker failure, repeated for the rest of one test

    def begin_test(self):
        self._sticky_failure = None

    def check(self, graph, check_order=False):
        expected = self.oracle.expected(graph.steps)
        if self._sticky_failure is not None:
            raise GradingFailure(self._sticky_failure)
        reply = self.worker.run(graph.steps)
        findings = compare(graph, expected, reply, check_order=check_order, locate=self.locate)
        if findings:
            if reply.failure:
                # Later examples of a generated test would only fail the same way
                # (or time out again): stop here and keep the program that failed.
                self._sticky_failure = findings[0]
            raise GradingFailure(findings[0])

    def outcome(self, graph):
        """The submission's raw outcome, for tests that check something custom."""
        return self.worker.run(graph.steps)


def finding_from_exception(error):
    """A Finding for a test that failed some other way (an error in the test itself)."""
    text = f"{type(error).__name__}: {error}"[:500]
    return Finding(text, text, "error")
