"""`pytest grader/suites/public --submission FILE`: the suites without the CLI.

Used by benchmarks and by instructors who want plain pytest output. The
submission still runs only in a worker, prepared exactly as `grade` does.
"""

import atexit
import shutil
import tempfile
from pathlib import Path

from grader import sandbox
from grader.engine import Engine
from grader.grading import start_worker
from grader.oracle_recorded import default_oracle
from grader.plugin import GraderPlugin
from grader.submission import prepare


def plugin_for(path, config):
    prepared = prepare(path)
    workdir = Path(tempfile.mkdtemp(prefix="grader-"))
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)
    _problem, _notes, worker = start_worker(prepared, workdir, None, sandbox.detect())
    atexit.register(worker.stop)
    return GraderPlugin(Engine(worker, default_oracle(), locate=prepared.where))
