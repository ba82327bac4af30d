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

`ReferenceOracle` (the kit, Gradescope) computes them: `expected` with the
reference solution, `flow` and `predictions` with the simulated exercise
(grader/feedback/simulate.py). The student bundle ships neither: its
`RecordedOracle` (grader/oracle_recorded.py) answers all three from outcomes
recorded at `make dist`.
"""

import importlib.util
import json
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional, Protocol

from grader.paths import REFERENCE_FILE
from grader.worker.interpreter import Interpreter


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


class Oracle(Protocol):
    def expected(self, steps: list) -> dict: ...

    def flow(self, steps: list) -> Optional[Flow]: ...

    def predictions(self, steps: list, hints=None) -> Iterator[Prediction]: ...

    def runner(self) -> Optional[Callable[[list], dict]]: ...

    def begin_test(self) -> None: ...

    def saw_failure(self) -> None: ...


def load_reference(path=REFERENCE_FILE):
    spec = importlib.util.spec_from_file_location("tiny_autograd_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ReferenceOracle:
    """The reference solution's answers, cached per program; the feedback's from the simulated exercise.

    Every answer depends on the program alone, never on a submission, so one
    oracle serves a whole class (a batch's grading process keeps it): the
    expected outcomes, the flows and the simulated misconceptions of programs
    that earlier submissions met (the suite's, the shrinker's) are computed once.
    The caches are cleared when they grow past MAX_CACHED programs."""

    MAX_CACHED = 20000

    def __init__(self, module=None):
        self.interpreter = Interpreter(vars(module or load_reference()))
        self.cache = {}
        self._flows, self._simulated = {}, {}

    def expected(self, steps):
        key = json.dumps(steps)
        if key not in self.cache:
            if len(self.cache) >= self.MAX_CACHED:
                self.cache.clear()
            self.cache[key] = self.interpreter.run(steps)
        return self.cache[key]

    def flow(self, steps):
        key = json.dumps(steps)
        if key not in self._flows:
            from grader.feedback.simulate import simulate

            if len(self._flows) >= self.MAX_CACHED:
                self._flows.clear()
            simulated = simulate(steps)
            self._flows[key] = Flow(simulated["calls"], simulated["path_ops"])
        return self._flows[key]

    def predictions(self, steps, hints=None):
        """In the catalog's order, every model that could matter for this program
        (of the hints in `hints`, when given)."""
        from grader.feedback.catalog import load
        from grader.feedback.matcher import features, relevant
        from grader.feedback.model import model_key

        program, key = features(steps), json.dumps(steps)
        for hint in load().hints:
            if hints is not None and hint.id not in hints:
                continue
            for hint_model in hint.models:
                if relevant(hint_model, program):
                    outcome = self._simulate(key, steps, hint_model.model)
                    yield Prediction(hint.id, hint_model.culprit, hint_model.op, model_key(hint_model.model),
                                     {"ok": outcome["ok"], "snapshots": outcome["snapshots"]}, hint_model.model)

    def _simulate(self, key, steps, model):
        if (key, model) not in self._simulated:
            from grader.feedback.simulate import simulate

            if len(self._simulated) >= self.MAX_CACHED:
                self._simulated.clear()
            self._simulated[key, model] = simulate(steps, model)
        return self._simulated[key, model]

    def runner(self):
        return self.interpreter.run

    def begin_test(self):
        pass

    def saw_failure(self):
        pass
