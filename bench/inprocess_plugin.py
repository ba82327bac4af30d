"""The baseline of the feedback benchmark: the suites with NO isolation.

    python -m pytest grader/suites/hidden -c grader/suites/pytest.ini \
        --rootdir grader/suites -q -p bench.inprocess_plugin --inprocess-submission FILE

This imports the submission into the pytest process itself and gives the tests
the very same `engine` fixture as the grader (grader/plugin.py's GraderPlugin
around an `Engine(worker, oracle)`), except that the "worker" is an object in
this process: `run(steps)` interprets the program directly on the submission's
module. No worker process, no sandbox, no time limits, no reply validation.

It exists only to measure what isolation costs (docs/PERFORMANCE.md). Never
grade with it: the submission shares the test runner's process, which is
exactly what the grader's trust boundary forbids.
"""

import importlib.util
from pathlib import Path

from grader.engine import Engine
from grader.oracle_recorded import default_oracle
from grader.plugin import GraderPlugin
from grader.worker.interpreter import Interpreter
from grader.worker_client import Reply


class InProcessWorker:
    """Duck-types grader.worker_client.Worker for Engine: run, printed, stop."""

    def __init__(self, module):
        self.interpreter = Interpreter(vars(module), source_file=getattr(module, "__file__", None))

    def run(self, steps):
        return Reply(outcome=self.interpreter.run(steps))

    def printed(self):
        return ""

    def stop(self):
        pass


def import_submission(path):
    path = Path(path).resolve()
    spec = importlib.util.spec_from_file_location("tiny_autograd", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pytest_addoption(parser):
    parser.addoption("--inprocess-submission", help="import this .py file into pytest and test it (benchmarks only)")


def pytest_configure(config):
    path = config.getoption("--inprocess-submission")
    if path and not config.pluginmanager.has_plugin("grader"):
        engine = Engine(InProcessWorker(import_submission(path)), default_oracle())
        config.pluginmanager.register(GraderPlugin(engine), "grader")
