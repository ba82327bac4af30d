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
    """The reference solution's answers, cached per program; the feedback's from the simulated exercise."""

    def __init__(self, module: Optional[ModuleType] = None):
        self.interpreter = Interpreter(vars(module or load_reference()))
        self.cache = {}

    def expected(self, steps: list) -> dict:
        key = json.dumps(steps)
        if key not in self.cache:
            self.cache[key] = self.interpreter.run(steps)
        return self.cache[key]

    def flow(self, steps: list) -> Flow:
        from grader.feedback.simulate import simulate

        simulated = simulate(steps)
        return Flow(simulated["calls"], simulated["path_ops"])

    def predictions(self, steps: list) -> Iterator[Prediction]:
        """In the catalog's order, every model that could matter for this program."""
        from grader.feedback.catalog import load
        from grader.feedback.matcher import features, relevant
        from grader.feedback.model import model_key
        from grader.feedback.simulate import simulate

        program = features(steps)
        for hint in load().hints:
            for hint_model in hint.models:
                if relevant(hint_model, program):
                    outcome = simulate(steps, hint_model.model)
                    yield Prediction(hint.id, hint_model.culprit, hint_model.op, model_key(hint_model.model),
                                     {"ok": outcome["ok"], "snapshots": outcome["snapshots"]}, hint_model.model)

    def runner(self) -> Optional[Callable[[list], dict]]:
        return self.interpreter.run

    def begin_test(self) -> None:
        pass


class SimulatedOracle(ReferenceOracle):
    """Answers from the simulated exercise alone, reference outcomes included
    (an explanation asked for without an oracle; the kit's own tests)."""

    def __init__(self):
        self.cache = {}

    def expected(self, steps: list) -> dict:
        from grader.feedback.simulate import simulate

        return simulate(steps)
