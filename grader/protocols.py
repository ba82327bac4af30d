"""The two interfaces the grading run is built on, declared once.

A `ProgramRunner` runs a graph program on a submission and answers with a
`Reply`: the sandboxed worker (grader/worker_client.py, the only one that runs
student code for a grade), `DeadWorker` (grader/grading.py: a submission that
cannot load), `KernelRunner` (grader/kernel_runner.py: a notebook's own kernel,
never a grade) and the kit's in-process stand-ins (tests, benchmarks).

A `SuiteEngine` is what a suite test talks to through its `engine` fixture
(grader/plugin.py): `Engine` (grader/engine.py) compares the submission with the
oracle (grader/oracle.py); replay's recorder (grader/replay.py) writes the
checks down instead.
"""

from typing import Optional, Protocol, runtime_checkable

from grader.feedback.finding import Finding
from grader.worker_client import LoadReport, Reply


@runtime_checkable
class ProgramRunner(Protocol):
    def run(self, steps: list) -> Reply: ...


@runtime_checkable
class GradedWorker(ProgramRunner, Protocol):
    """A runner the grading run owns: it also says what the submission printed
    and where it defines the exercise's functions, and it is stopped at the end."""

    load_report: Optional[LoadReport]

    def printed(self) -> str: ...

    def stop(self) -> None: ...


@runtime_checkable
class SuiteEngine(Protocol):
    def begin_test(self, category: Optional[str] = None) -> None: ...

    def check(self, graph, check_order: bool = False, rule: Optional[str] = None,
              order_only: bool = False) -> None: ...

    def outcome(self, graph) -> Reply: ...

    def refine(self, finding: Finding) -> Finding:
        """A failed test's finding, explained in full (once per failed test)."""
        ...

    def close(self) -> None: ...
