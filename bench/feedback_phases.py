"""Where one student's feedback time goes: a timed run of one grading command.

    python -m bench.feedback_phases grader|inprocess SUBMISSION SUITE OUT_JSON [SPAWNED_AT]

`grader` runs `python -m grader grade SUBMISSION --suite SUITE` (results into a
temporary folder) and `inprocess` runs the unisolated pytest baseline of
bench/inprocess_plugin.py, both inside this process with timers around the
phases: imports, pytest start-up and collection, the worker's start, the graph
programs on the worker, the reference, comparison, feedback, Hypothesis and
pytest between them, and the reports. SPAWNED_AT (time.monotonic() of the
parent just before it started this process; the clock is system-wide on
Linux) gives the interpreter's own start-up. The figures go to OUT_JSON.
"""

import time

STARTED = time.monotonic()  # before any import of ours: after interpreter start-up

import atexit  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

PHASES = {}
_OPEN = []
MARKS = {"started": STARTED}


def _write_at_exit(path):
    MARKS["exit"] = time.monotonic()
    with open(path, "w", encoding="utf-8") as out:
        json.dump({"marks": MARKS, "phases": PHASES}, out, indent=1)


def timed(owner, name, label):
    """Wrap owner.name (owner[name] for a dict) so its calls add their seconds
    and count to PHASES[label]."""
    original = owner[name] if isinstance(owner, dict) else getattr(owner, name)

    def wrapper(*args, **kwargs):
        started = time.monotonic()
        _OPEN.append(0.0)  # time spent in timed calls nested in this one
        try:
            return original(*args, **kwargs)
        finally:
            elapsed = time.monotonic() - started
            nested = _OPEN.pop()
            if _OPEN:
                _OPEN[-1] += elapsed
            PHASES.setdefault(label, []).append((started, elapsed - nested))  # exclusive of nested phases

    if isinstance(owner, dict):
        owner[name] = wrapper
    else:
        setattr(owner, name, wrapper)


class PytestTimer:
    """Marks the start and end of pytest's collection and of its test loop."""

    def pytest_sessionstart(self):
        MARKS["pytest_session_start"] = time.monotonic()

    def pytest_collection(self):
        MARKS["collection_start"] = time.monotonic()

    def pytest_collection_finish(self):
        MARKS["collection_end"] = time.monotonic()

    def pytest_runtestloop(self):
        MARKS["tests_start"] = time.monotonic()

    def pytest_sessionfinish(self):
        MARKS["tests_end"] = time.monotonic()


def main(argv):
    mode, submission, suite, out = argv[1:5]
    if len(argv) > 5:
        MARKS["spawned"] = float(argv[5])
    atexit.register(_write_at_exit, out)  # registered first: runs after every other handler

    import pytest

    MARKS["pytest_imported"] = time.monotonic()
    from grader import cli, engine, grading, sandbox, worker_client

    MARKS["imported"] = time.monotonic()
    timed(grading.sandbox, "detect", "isolation detection")
    timed(grading, "prepare", "reading the submission")
    timed(sandbox, "staged_worker_dir", "staging the worker code")
    timed(worker_client.Worker, "start", "worker start")
    timed(cli.results.FORMATS, "gradescope", "results file")
    timed(cli.terminal, "summary", "terminal summary")
    timed(worker_client.Worker, "run", "programs on the worker")
    timed(engine.ReferenceOracle, "expected", "programs on the reference")
    timed(engine, "compare", "comparison")
    timed(engine.Engine, "refine", "feedback: shrinking")
    timed(engine.Engine, "evidence", "feedback: probes")
    original_main = pytest.main

    def main_with_timer(args, plugins=()):
        MARKS["pytest_main"] = time.monotonic()
        try:
            return original_main(args, plugins=[*plugins, PytestTimer()])
        finally:
            MARKS["pytest_main_end"] = time.monotonic()

    pytest.main = main_with_timer

    if mode == "grader":
        import tempfile

        import runpy

        folder = tempfile.mkdtemp(prefix="bench-feedback-")
        sys.argv = ["grader", "grade", submission, "--suite", suite, "--out", f"{folder}/results.json"]
        try:  # exactly what `python -m grader` runs, its exit included
            runpy.run_module("grader", run_name="__main__", alter_sys=True)
        except SystemExit as done:
            code = done.code
    else:
        code = pytest.main([
            f"grader/suites/{suite}", "-c", "grader/suites/pytest.ini", "--rootdir", "grader/suites", "-q",
            "-p", "bench.inprocess_plugin", "--inprocess-submission", submission,
        ])
    MARKS["done"] = time.monotonic()
    return int(code) if code in (0, 1) else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
