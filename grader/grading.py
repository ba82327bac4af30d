"""Grade one submission: prepare it, start its worker, run the suite, build the result.

This is the trusted process. It runs pytest in-process on the kit's own suites
with the kit's own configuration; the submission only ever runs in the worker.
"""

import contextlib
import io
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

import pytest
from pytest_jsonreport.plugin import JSONReport

from grader import cgroups, sandbox
from grader.engine import Engine
from grader.feedback.advice import advice
from grader.keeper import KEEPER
from grader.oracle import Oracle
from grader.oracle_recorded import default_oracle
from grader.plugin import GraderPlugin
from grader.protocols import GradedWorker, SuiteEngine
from grader.imports import placeholder_note, unavailable_imports
from grader.results import SUITES_DIR, GradeResult, load_rubric, tests_from_report
from grader.submission import GRADED_FILES, prepare
from grader.text import file_name
from grader.worker_client import Limits, Reply, Worker

SUITES = ("public", "hidden", "all")


class DeadWorker:
    """Stands in for a worker when the submission cannot be loaded at all:
    every test then fails with the same first-line reason. `printed`: what the
    submission printed while it failed to load."""

    load_report = None

    def __init__(self, reason: str, printed: str = ""):
        self.reason = reason
        self._printed = printed

    def run(self, steps: list) -> Reply:
        return Reply(failure=self.reason, cause={"kind": "cannot-load"})

    def printed(self) -> str:
        return self._printed

    def stop(self) -> None:
        pass


def suite_paths(suite: str) -> list:
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; choose one of {SUITES}")
    names = ("public", "hidden") if suite == "all" else (suite,)
    return [SUITES_DIR / name for name in names if (SUITES_DIR / name).is_dir()]


def run_suite(engine: SuiteEngine, suite: str, quiet: bool = True) -> dict:
    """Run the suite with pytest in this process; returns the pytest-json-report dict."""
    args = [
        *map(str, suite_paths(suite)),
        "-c", str(SUITES_DIR / "pytest.ini"),
        "--rootdir", str(SUITES_DIR),
        "-p", "no:cacheprovider",
        "-q",
        # Plain Python tracebacks: pytest's default style parses the source of every
        # frame of every failure, which was half the time of grading a wrong submission.
        "--tb=native",
        # Suites check through engine.check, not bare asserts: skip assertion
        # rewriting, which re-parses every module when bytecode is not cached.
        "--assert=plain",
        # These two run a full gc.collect() at the end of every session: half the
        # time of a warm grade in batch mode, and they guard nothing of ours.
        "-p", "no:unraisableexception",
        "-p", "no:threadexception",
        # Where Hypothesis is installed (the kit's dev tools), its pytest plugin
        # would load with every run; the suites read frozen examples instead.
        "-p", "no:hypothesispytest",
        "--json-report-file=none",
        "--json-report-omit", "collectors", "log", "warnings",
    ]
    # The report is taken from memory, never read back from disk: while the suite
    # runs, a worker at the process level (same user) could rewrite any file here.
    recorder = JSONReport()
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink) if quiet else contextlib.nullcontext():
        exit_code = pytest.main(args, plugins=[GraderPlugin(engine), recorder])
    if exit_code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        raise RuntimeError(f"the grader's own suite did not run (pytest exit code {exit_code}):\n{sink.getvalue()[-3000:]}")
    return json.loads(json.dumps(recorder.report, default=str))


class Begun:
    """A submission made ready to grade: read, its private folder and control group
    made, its worker launched (loading on its own while something else runs).
    `begin()` makes one; `grade(begun=...)` uses it, or `discard()` undoes it."""

    def __init__(self, path, limits, isolation, graded_file):
        started = time.monotonic()
        self.path, self.limits, self.isolation = path, limits, isolation
        self.prepared = prepare(path, graded_file)
        self.workdir = private_workdir()
        self.box, self.worker = None, None
        try:
            self.box = open_box(isolation, limits)
            self.problem, self.notes, self.worker = launch_worker(self.prepared, self.workdir, limits, isolation,
                                                                  self.box)
        except BaseException:
            self.discard()
            raise
        self.seconds = time.monotonic() - started  # counted in the result's execution time

    def discard(self):
        """Stop its worker and remove what it made (a begun submission never graded)."""
        try:
            if self.worker is not None:
                self.worker.stop()
        finally:
            self.release()

    def release(self):
        """Remove its control group and folder (once)."""
        if self.workdir is not None:
            close_box(self.box)
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.box = self.workdir = None


def begin(path, limits: Optional[Limits] = None, isolation=None, graded_file: str = GRADED_FILES[0]) -> "Begun":
    """Prepare `path` for grading and launch its worker without waiting for it (see Begun)."""
    return Begun(path, limits or Limits(), isolation or sandbox.detect(), graded_file)


def grade(path, suite: str = "public", limits: Optional[Limits] = None, isolation=None, oracle: Optional[Oracle] = None,
          run: Optional[Callable[[Engine], dict]] = None, graded_file: str = GRADED_FILES[0],
          begun: Optional[Begun] = None) -> GradeResult:
    """Grade the submission at `path`; always returns a GradeResult (its `raw_report`
    is the pytest-json-report, for a debugging copy).

    `run(engine) -> report` replaces the pytest run (see grader/replay.py).
    `graded_file`: the file a folder's submission is graded by (grader/submission.py).
    `begun`: what begin() made of the same path, limits and isolation, launched earlier."""
    started = time.monotonic()
    earlier = begun.seconds if begun is not None else 0.0
    if begun is None:
        begun = begin(path, limits, isolation, graded_file)
    isolation, prepared = begun.isolation, begun.prepared
    try:
        problem, notes, worker = finish_start(prepared, begun.problem, begun.notes, begun.worker)
        engine = Engine(worker, oracle or default_oracle(), locate=prepared.where)
        try:
            report = run(engine) if run else run_suite(engine, suite)
            if problem is None and isinstance(worker, Worker):
                notes = [*notes, *advice(worker.run)]  # every score is fixed by now
        finally:
            engine.close()
            worker.stop()
        return GradeResult(
            submission=file_name(os.fsencode(path)),
            suite=suite,
            tests=tests_from_report(report),
            problem=problem,
            notes=notes,
            printed=worker.printed(),
            isolation=isolation.describe(),
            execution_time=time.monotonic() - started + earlier,
            raw_report=report,
            places=_places(worker, prepared),
        )
    finally:
        begun.release()


def _places(worker: GradedWorker, prepared) -> dict:
    """Where the submission defines the exercise's functions, as a student reads it (file line or notebook cell)."""
    report = worker.load_report
    defined = report.defined if report is not None and report.ok else {}
    return {name: {"en": prepared.where(line), "zh": prepared.where(line, "zh")} for name, line in defined.items()}


def private_workdir():
    """A folder for one submission's files: others may pass through it (a worker's
    uid must reach its own copy inside) but not list or read it."""
    workdir = Path(tempfile.mkdtemp(prefix="grader-"))
    os.chmod(workdir, 0o711)
    return workdir


def open_box(isolation, limits):
    """The submission's control group (grader/cgroups.py), or None where there is none."""
    if not isolation.cgroups:
        return None
    box = cgroups.Box.create(limits.submission_memory_bytes, limits.submission_tasks)
    if box is not None:
        KEEPER.watch("cgroup", box.key())
    return box


def close_box(box):
    if box is not None:
        box.kill()
        box.remove()
        KEEPER.forget("cgroup", box.key())


def start_worker(prepared, workdir, limits, isolation, box=None):
    """(problem, notes, worker): a running worker, or a DeadWorker and the reason."""
    problem, notes, worker = launch_worker(prepared, workdir, limits, isolation, box)
    return finish_start(prepared, problem, notes, worker)


def launch_worker(prepared, workdir, limits, isolation, box=None):
    """(problem, notes, worker): a launched worker (see Worker.launch), or a DeadWorker and the reason."""
    notes = [{"en": note.en, "zh": note.zh} for note in prepared.notes]
    if prepared.problem:
        problem = {"en": prepared.problem.en, "zh": prepared.problem.zh}
        return problem, notes, DeadWorker(prepared.problem.en)
    allowed = load_rubric().allowed_imports
    placeholders = placeholder_note(unavailable_imports(prepared.source, allowed))
    notes += [placeholders] if placeholders else []
    module = workdir / "prepared.py"  # the grader's copy; each worker gets a private one (Worker._stage)
    fd = os.open(module, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(prepared.source.encode("utf-8", errors="replace"))
    worker = Worker(module, limits or Limits(), isolation, box=box, allowed_imports=allowed)
    worker.launch()
    return None, notes, worker


def finish_start(prepared, problem, notes, worker):
    """(problem, notes, worker) once a launched worker has loaded the submission (or failed to)."""
    if not isinstance(worker, Worker):
        return problem, notes, worker
    report = worker.start()
    if not report.ok:
        problem = _load_problem(prepared, report)
        worker.stop()
        return problem, notes, DeadWorker(problem["en"], worker.printed())
    if report.missing:
        names = ", ".join(f"`{name}`" for name in report.missing)
        notes = [*notes, {
            "en": f"{prepared.display} does not define {names}: the tests that use it fail.",
            "zh": f"{prepared.display} 没有定义 {names}：用到它的测试都会失败。",
        }]
    return None, notes, worker


def _load_problem(prepared, report):
    if report.error:
        error = report.error
        return {
            "en": f"Importing {prepared.where(error['line'])} raised {error['type']}: {error['message']}",
            "zh": f"导入 {prepared.where(error['line'], 'zh')} 时抛出 {error['type']}：{error['message']}",
        }
    return {
        "en": f"{prepared.display} could not be loaded: {report.problem}",
        "zh": f"无法加载 {prepared.display}：{report.problem}",
    }
