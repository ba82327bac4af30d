"""`pytest grader/suites/public --submission FILE`: the suites without the CLI.

Used by benchmarks and by instructors who want plain pytest output. The
submission still runs only in a worker.
"""

from grader.engine import Engine
from grader.oracle_recorded import default_oracle
from grader.plugin import GraderPlugin
from grader.submission import prepare
from grader.grading import DeadWorker
from grader.worker_client import Worker
from pathlib import Path
import atexit
import tempfile


def plugin_for(path, config):
    prepared = prepare(path)
    if prepared.problem:
        return GraderPlugin(Engine(DeadWorker(prepared.problem.en), default_oracle()))
    module = Path(tempfile.mkdtemp(prefix="grader-")) / "tiny_autograd.py"
    module.write_text(prepared.source, encoding="utf-8")
    worker = Worker(module)
    atexit.register(worker.stop)
    return GraderPlugin(Engine(worker, default_oracle()))
