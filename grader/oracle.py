"""Where the expected answers come from: the oracle of a grading run.

An oracle answers three questions about a graph program, and a grading run
never asks anything else of the reference:

    expected(steps)     the reference's outcome: what a test compares with
    flow(steps)         what each node of the reference sent its inputs in every
                        backward() (the feedback's localizer names culprits with it)
    predictions(steps)  the numbers each known misconception of the catalog gives
                        (the feedback shows a hint when the submission's are those);
                        `hints`, a set of hint ids: only those hints' models

and may offer `runner()`, a function that runs any program on the reference
(shrinking a failing program, probing a submission: the kit's extra feedback).

This module is only the contract (the Protocol and the data it answers with).
`ReferenceOracle` (grader/oracle_reference.py; the kit, Gradescope) computes the
answers: `expected` with the reference solution, `flow` and `predictions` with
the simulated exercise (grader/feedback/simulate.py). The student bundle ships
neither: its `RecordedOracle` (grader/oracle_recorded.py) answers all three from
outcomes recorded at `make dist`.
"""

from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional, Protocol, runtime_checkable


@dataclass
class Call:
    """What one backward() call of the reference did: the grads before it and every grad sent."""

    root: int
    before: list  # program node grads just before the call (None for Dual nodes)
    edges: list  # (sender node, target node, primitive op, grad sent)


@dataclass
class Flow:
    """The reference's gradient flow through a program."""

    calls: List[Call]
    path_ops: list  # per program node: {input node: the primitive ops between them}

    def as_json(self):
        return {"calls": [{"root": c.root, "before": c.before, "edges": [list(e) for e in c.edges]} for c in self.calls],
                "path_ops": [sorted([target, ops] for target, ops in paths.items()) for paths in self.path_ops]}

    @classmethod
    def from_json(cls, data):
        calls = [Call(c["root"], c["before"], [tuple(e) for e in c["edges"]]) for c in data["calls"]]
        return cls(calls, [{int(target): list(ops) for target, ops in paths} for paths in data["path_ops"]])


@dataclass
class Prediction:
    """The numbers one misconception gives on a program."""

    hint: str  # the catalog's hint id
    culprit: str  # what it is in: an op label, "backward", ...
    op: str  # the op its text names, if any
    key: str  # the model, as text (grader.feedback.model.model_key)
    outcome: dict  # {"ok", "snapshots"}
    model: object = None  # the Model itself (the kit only: probes may refute it)


@runtime_checkable
class Oracle(Protocol):
    def expected(self, steps: list) -> dict: ...

    def flow(self, steps: list) -> Optional[Flow]: ...

    def predictions(self, steps: list, hints=None) -> Iterator[Prediction]: ...

    def runner(self) -> Optional[Callable[[list], dict]]: ...

    def begin_test(self) -> None: ...
