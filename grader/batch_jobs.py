"""Grading a class's submissions in a few long-lived processes (for grader/batch.py).

`run_jobs` keeps N grading processes busy (forkserver where the OS has it, else
spawn). Each grades the jobs it is sent one after the other with `grade_job`,
which writes the student's results file and HTML report and returns the row of
the gradebook; nothing of one submission reaches another's grading but the
per-process caches of what does not depend on the student (the replay plan,
the oracle's answers).

Ready sandboxes: the parent sends each grading process the job after its
current one, and the process *begins* that next submission (reads it, makes its
folder and control group, launches its worker: grader/grading.py, `begin`)
before it grades the current one, so the next worker loads its own submission,
in its own fresh sandbox, while the current one is graded. A worker still
serves exactly one submission, and is never reused for another.

Robustness: a watchdog kills a grading process that outlives every limit and
starts a new one; the job it was grading gets an error row, the job it had only
begun is sent again. An exception inside the grader costs only that submission.
"""

import multiprocessing
import multiprocessing.connection
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader import files
from grader.problems import problem_ids
from grader.text import one_line
from grader.worker_client import Limits

WATCHDOG_MARGIN_SECONDS = 120.0  # beyond the submission's own limits
LOOKAHEAD_SECONDS = 0.02  # how long a grading process waits for its next job before grading the current one
AHEAD = 2  # jobs a grading process holds: the one it grades and the one it has begun


@dataclass
class Job:
    student: str
    path: str
    results_file: str
    content_hash: str


@dataclass
class Row:
    student: str
    status: str  # graded | problem | error
    score: float = 0.0
    max_score: float = 0.0
    categories: dict = field(default_factory=dict)  # category -> earned points
    note: str = ""
    seconds: float = 0.0
    reused: bool = False
    problems: list = field(default_factory=list)  # diagnosis ids (grader/problems.py)


@dataclass
class Options:
    suite: str = "all"
    lang: str = "en"
    limits: Limits = field(default_factory=Limits)
    fingerprint: str = ""
    plan: object = None  # a grader.replay.Plan: replay it instead of running pytest


def row_from_results(student, data, reused=False, seconds=0.0):
    extra = data.get("extra_data") or {}
    batch = extra.get("batch") or {}
    categories = {name: value.get("score", 0.0) for name, value in (extra.get("categories") or {}).items()}
    return Row(
        student=student,
        status=batch.get("status", "graded"),
        score=data.get("score", 0.0),
        max_score=extra.get("max_score", 0.0),
        categories=categories,
        note=batch.get("note", ""),
        seconds=seconds,
        reused=reused,
        problems=problem_ids(data),
    )


# ------------------------------------------------------------ grading one


def grade_job(job, options, oracle=None, begun=None):
    """Grade one submission, write its results file, return its Row. Never raises.
    `begun`: what grader.grading.begin made of this job's path earlier, or None."""
    from grader import results
    from grader.grading import grade

    started = time.monotonic()
    result = None
    try:
        if not (Path(job.path).is_file() or Path(job.path).is_dir()):
            if begun is not None:
                begun.discard()
            # A pipe or a device: reading it could block the grader forever.
            status = "problem"
            note = f"{job.student}: not a regular file or folder; nothing was graded"
            data = error_results(note, grader_error=False)
        else:
            if options.plan is not None:
                from grader.replay import grade_by_replay

                result = grade_by_replay(job.path, options.suite, options.plan, limits=options.limits, oracle=oracle,
                                         begun=begun)
            else:
                result = grade(job.path, suite=options.suite, limits=options.limits, oracle=oracle, begun=begun)
            data = results.gradescope(result, options.lang)
            status = "problem" if result.problem else "graded"
            note = result.first_line(options.lang) if result.problem else ""
    except Exception as error:  # the grader failed, not the submission
        if begun is not None:
            begun.discard()  # nothing of it is left behind (a no-op once grade() has released it)
        status = "error"
        note = one_line(f"the grader failed on this submission: {type(error).__name__}: {error}", 500)
        data = error_results(note)
    data.setdefault("extra_data", {})["batch"] = {
        "student": job.student,
        "content_sha256": job.content_hash,
        "grader_fingerprint": options.fingerprint,
        "status": status,
        "note": note,
        "report": _student_report(result, job.results_file, options.lang),
    }
    try:
        files.write_json(job.results_file, data)
    except OSError as error:
        status, note = "error", one_line(f"could not write {job.results_file}: {error}", 500)
    row = row_from_results(job.student, data, seconds=time.monotonic() - started)
    row.status, row.note = status, note
    return row


def _student_report(result, results_file, lang):
    """The student's own HTML report beside their results file (the instant drawings, not
    Graphviz); its file name, or "" when none was written."""
    if result is None:
        return ""
    path = Path(results_file).with_suffix(".html")
    try:
        from grader import html_report

        html_report.write(result, path, lang, use_dot=False)
    except Exception:  # a report never costs a grade
        return ""
    return path.name


def error_results(note, grader_error=True):
    """A valid results file (grader/schemas/gradescope.schema.json) for a submission
    that could not be graded: 0 out of the real maximum, saying why; marked
    `extra_data.grader_error` when the grader, not the submission, failed."""
    from grader import markdown, results

    data = results.gradescope_grader_failed()
    text = f"这份提交没有被评分 / not graded: {one_line(note, 500)}"
    data["output"] = markdown.escape(text)
    data["tests"][0]["output"] = text
    if not grader_error:
        del data["extra_data"]["grader_error"]
    return data


# -------------------------------------------------------- grading processes


def _child_main(connection, options):
    """A grading process: grade the jobs it is sent, in order, until told to stop;
    the job after the current one is begun (its worker launched) before the current
    one is graded."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    oracle, upcoming, stopping = None, [], False  # upcoming: [job, begun or None], in order
    while True:
        if not upcoming:
            if stopping:
                return
            job = _receive(connection, None)
            if job is None:
                return
            upcoming.append([job, None])
        if len(upcoming) < AHEAD and not stopping:
            # The parent answers each row with the next job (if any): it is usually here by now.
            job = _receive(connection, LOOKAHEAD_SECONDS)
            if job is None:
                stopping = True
            elif job is not False:
                upcoming.append([job, None])
        for entry in upcoming[1:]:
            if entry[1] is None:
                entry[1] = _begin(entry[0], options)
        job, begun = upcoming.pop(0)
        if oracle is None:
            try:
                from grader.oracle_recorded import default_oracle

                oracle = default_oracle()
            except Exception:
                oracle = None  # grade() raises the same error per job, which becomes an error row
        connection.send(grade_job(job, options, oracle, begun=begun or None))


def _receive(connection, timeout):
    """The next job; None when told to stop (or the parent is gone); False when none
    came within `timeout` seconds (None: wait)."""
    try:
        if timeout is not None and not connection.poll(timeout):
            return False
        return connection.recv()
    except (EOFError, OSError):
        return None


def _begin(job, options):
    """The job begun (grader.grading.Begun), or False when it is not begun ahead
    (grade_job then does it all, and meets any error itself)."""
    try:
        if not (Path(job.path).is_file() or Path(job.path).is_dir()):
            return False
        from grader.grading import begin

        return begin(job.path, options.limits)
    except Exception:  # noqa: BLE001 - grade_job tries again and reports it
        return False


def _context():
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        # Imported once in the server, inherited by every grading process it forks.
        context.set_forkserver_preload(["grader.grading", "grader.batch", "grader.replay"])
        return context
    return multiprocessing.get_context("spawn")


class _Slot:
    """One grading process and the jobs it holds: the one it grades, then the one it has begun."""

    def __init__(self, context, options):
        self.context, self.options = context, options
        self.process = self.connection = None
        self.jobs, self.deadline = [], 0.0

    @property
    def job(self):
        return self.jobs[0] if self.jobs else None

    def ensure_started(self):
        if self.process is None or not self.process.is_alive():
            parent_end, child_end = self.context.Pipe()
            self.process = self.context.Process(target=_child_main, args=(child_end, self.options), daemon=True)
            self.process.start()
            child_end.close()
            self.connection = parent_end

    def give(self, job, timeout):
        self.ensure_started()
        if not self.jobs:
            self.deadline = time.monotonic() + timeout
        self.jobs.append(job)
        self.connection.send(job)

    def done(self, timeout):
        """The first job's row came: the next one's time starts now."""
        self.jobs.pop(0)
        self.deadline = time.monotonic() + timeout

    def kill(self):
        """Kill the process; returns the jobs it held but had not started grading."""
        if self.process is not None:
            self.process.kill()
            self.process.join(timeout=5)
        if self.connection is not None:
            self.connection.close()
        self.process = self.connection = None
        waiting, self.jobs = self.jobs[1:], []
        return waiting

    def stop(self):
        if self.process is not None and self.process.is_alive():
            try:
                self.connection.send(None)
            except OSError:
                pass
            self.process.join(timeout=5)
        self.kill()


def run_jobs(jobs, options, workers, on_row):
    """Grade `jobs` in `workers` processes; calls on_row(row) as each one ends."""
    if not jobs:
        return
    context = _context()
    watchdog = options.limits.budget_seconds + options.limits.load_seconds + WATCHDOG_MARGIN_SECONDS
    slots = [_Slot(context, options) for _ in range(max(1, min(workers, len(jobs))))]
    pending = list(reversed(jobs))
    try:
        while pending or any(slot.job for slot in slots):
            for depth in range(1, AHEAD + 1):  # every process its current job first, then its next
                for slot in slots:
                    if len(slot.jobs) < depth and pending:
                        slot.give(pending.pop(), watchdog)
            busy = [slot for slot in slots if slot.job]
            wait_for = max(0.05, min(slot.deadline for slot in busy) - time.monotonic())
            ready = multiprocessing.connection.wait([slot.connection for slot in busy], timeout=wait_for)
            for slot in busy:
                job = slot.job
                if slot.connection in ready:
                    try:
                        row = slot.connection.recv()
                    except (EOFError, OSError):
                        code = slot.process.exitcode if slot.process else None
                        row = _failed(job, options, f"the grading process died (exit code {code})")
                        pending.extend(reversed(slot.kill()))
                    else:
                        slot.done(watchdog)
                elif time.monotonic() > slot.deadline:
                    pending.extend(reversed(slot.kill()))
                    row = _failed(job, options, f"grading took longer than {watchdog:g} s and was stopped")
                else:
                    continue
                on_row(row)
    finally:
        for slot in slots:
            if slot.job is not None:
                slot.kill()
            else:
                slot.stop()


def _failed(job, options, note):
    """The row (and results file) of a submission whose grading process had to be stopped."""
    data = error_results(note)
    data["extra_data"]["batch"] = {
        "student": job.student,
        "content_sha256": job.content_hash,
        "grader_fingerprint": options.fingerprint,
        "status": "error",
        "note": note,
    }
    try:
        files.write_json(job.results_file, data)
    except OSError:
        pass
    return Row(job.student, "error", note=note, problems=problem_ids(data))
