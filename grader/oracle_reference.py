"""The oracle of the kit and of Gradescope: the reference solution itself.

`expected` runs a program on the reference (in this trusted process, through
the worker's interpreter); `flow` and `predictions` come from the simulated
exercise (grader/feedback/simulate.py). The contract is grader/oracle.py.
"""

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator, Optional

from grader.oracle import Flow, Prediction
from grader.paths import REFERENCE_FILE
from grader.worker.interpreter import Interpreter


def load_reference(path: Path = REFERENCE_FILE) -> ModuleType:
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

    def __init__(self, module: Optional[ModuleType] = None):
        self.interpreter = Interpreter(vars(module or load_reference()))
        self.cache = {}
        self._flows, self._simulated = {}, {}

    def expected(self, steps: list) -> dict:
        key = json.dumps(steps)
        if key not in self.cache:
            if len(self.cache) >= self.MAX_CACHED:
                self.cache.clear()
            self.cache[key] = self.interpreter.run(steps)
        return self.cache[key]

    def flow(self, steps: list) -> Flow:
        key = json.dumps(steps)
        if key not in self._flows:
            from grader.feedback.simulate import simulate

            if len(self._flows) >= self.MAX_CACHED:
                self._flows.clear()
            simulated = simulate(steps)
            self._flows[key] = Flow(simulated["calls"], simulated["path_ops"])
        return self._flows[key]

    def predictions(self, steps: list, hints: Optional[set] = None) -> Iterator[Prediction]:
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

    def runner(self) -> Optional[Callable[[list], dict]]:
        return self.interpreter.run

    def begin_test(self) -> None:
        pass


class SimulatedOracle(ReferenceOracle):
    """Answers from the simulated exercise alone, reference outcomes included
    (an explanation asked for without an oracle; the kit's own tests)."""

    def __init__(self):
        self.cache, self._flows, self._simulated = {}, {}, {}

    def expected(self, steps: list) -> dict:
        from grader.feedback.simulate import simulate

        return simulate(steps)
