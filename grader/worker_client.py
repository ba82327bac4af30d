"""The grader's side of the worker: start it, ask it, time it, kill it.

Every wait on a worker has a deadline, writes included (grader/channel.py), and
the whole-submission budget pays for all of them. Replies are untrusted: they
are size-capped, parsed, validated and rebuilt (grader/replies.py) before
anything reads them. Any timeout, crash, end of file or malformed reply kills
the worker's processes (its control group, its process group, everything it
left behind: grader/sweep.py); the next request starts a fresh worker. What
the submission prints is capped per worker and in total. A call that hung
makes later programs with the same call cheaper to give up on (grader/hangs.py).

Why one module of about 440 lines: it is the trusted side of the boundary, and
every path by which a worker is started, waited for and killed is read here in
one place (the pipes themselves are grader/channel.py, the replies
grader/replies.py, the leftovers grader/sweep.py).
"""

import json
import mmap
import os
import secrets
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader import channel, replies, sandbox, sweep
from grader.cgroups import JOIN_FAILED
from grader.hangs import Hangs
from grader.keeper import KEEPER
from grader.text import printable

MAX_REPLY_BYTES = 8 * 1024 * 1024
OUTPUT_CAP_BYTES = 16 * 1024  # per worker, and for everything printed.
PROGRESS = struct.Struct("=QI")  # the worker's progress page: request id, step number
SUBMISSION_NAME = "tiny_autograd.py"  # the module the worker loads


@dataclass
class Limits:
    call_seconds: float = 5.0  # one graph program
    load_seconds: float = 10.0  # importing the submission
    budget_seconds: float = 60.0  # everything one submission may use
    memory_bytes: int = 512 * 1024 * 1024  # address space of one worker process
    file_bytes: int = 16 * 1024 * 1024
    open_files: int = 64
    processes: int = 8  # per uid: a throwaway uid's whole count (the exercise needs one)
    submission_memory_bytes: int = 1024 * 1024 * 1024  # all of a submission's processes (control group)
    submission_tasks: int = 32  # processes and threads of all of a submission's workers (control group)

    def for_worker(self):
        return {
            "cpu_seconds": int(self.budget_seconds) + 5,
            "memory_bytes": self.memory_bytes,
            "file_bytes": self.file_bytes,
            "open_files": self.open_files,
            "processes": self.processes,
            "core_bytes": 0,
        }


@dataclass
class LoadReport:
    ok: bool
    missing: list = field(default_factory=list)
    problem: str = ""  # why the worker could not load the submission
    error: dict = None  # the load error the worker reported, if any
    limits: list = field(default_factory=list)  # the layers the worker says held (informational)
    defined: dict = field(default_factory=dict)  # {"Value.tanh": line}: where the submission defines them


@dataclass
class Reply:
    outcome: dict = None  # the interpreter's outcome (validated shape)
    failure: str = ""  # why there is no outcome: timeout, crash, bad reply, budget
    # The failure as data: {"kind": "timeout" | "skipped" | "budget" | "cannot-load" | "died" |
    # "malformed", "call": the call that hung, when known}.
    cause: dict = None


class CappedOutput:
    """Drains a pipe on a thread and keeps only the first `cap` bytes."""

    def __init__(self, pipe, cap=OUTPUT_CAP_BYTES):
        self.cap, self.kept, self.total = cap, bytearray(), 0
        self._thread = threading.Thread(target=self._drain, args=(pipe,), daemon=True)
        self._thread.start()

    def _drain(self, pipe):
        while True:
            chunk = pipe.read1(65536) if hasattr(pipe, "read1") else pipe.read(65536)
            if not chunk:
                break
            self.total += len(chunk)
            room = self.cap - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
        pipe.close()

    def text(self):
        self._thread.join(timeout=1.0)
        return self.snapshot()

    def snapshot(self):
        shown = printable(bytes(self.kept).decode("utf-8", errors="replace"))
        if self.total > len(self.kept):
            shown += f"\n[... {self.total - len(self.kept)} more bytes of output not kept]"
        return shown


class Worker:
    """One submission's worker, restarted after every failure. `box` (a
    grader.cgroups.Box, optional) is the submission's control group;
    `allowed_imports`, the installed packages the rubric lets it import."""

    def __init__(self, submission_file, limits=None, isolation=None, box=None, allowed_imports=()):
        self.submission_file = Path(submission_file)
        self.limits = limits or Limits()
        self.isolation = isolation or sandbox.detect()
        self.box = box
        self.allowed_imports = tuple(allowed_imports)  # installed packages the rubric lets it import
        self.hangs = Hangs(self.limits.call_seconds)
        self.process = None
        self.output = None
        self.load_report = None
        self.budget_left = self.limits.budget_seconds
        self.starts = 0
        self.outputs = []  # capped output of every worker that has ended
        self._reset()

    def _reset(self):
        self._reader = None
        self._uid = None  # the uid the worker runs as (None: ours)
        self._group = None  # its own control group, inside the box
        self._staged = None  # its private copy of the submission
        self._progress = None  # (fd, page)
        self._born_after = 0
        self._spare = frozenset()  # our children that are not this worker's
        self._loading = None  # the _LoadReader of a worker launched but not yet started

    # ------------------------------------------------------------------ start

    def start(self):
        """Start a worker and wait for its load report (cached after a load error)."""
        if self.load_report is not None and not self.load_report.ok:
            return self.load_report
        if self._loading is None:
            failure = self.launch()
            if failure is not None:
                return failure
        loading, self._loading = self._loading, None
        loading.join()
        line, why, waited = loading.result
        self.budget_left -= waited
        message = replies.parse(line) if line is not None else None
        missing = replies.missing_names(message) if message else None
        if why:
            failure = self._failure_text(why, self.limits.load_seconds)
            self.stop()
            self.load_report = LoadReport(False, problem=f"while loading the submission: {failure}")
        elif message is not None and message.get("ready") is True and missing is not None:
            self.load_report = LoadReport(True, missing=missing, limits=replies.limit_names(message),
                                          defined=replies.definitions(message))
        elif message is not None and message.get("ready") is False and isinstance(message.get("load_error"), dict):
            self.stop()
            self.load_report = LoadReport(False, problem="import failed", error=replies.load_error(message["load_error"]))
        else:
            self.stop()
            self.load_report = LoadReport(False, problem="the worker sent a malformed load report")
        return self.load_report

    def launch(self):
        """Start the worker process without waiting for it to load the submission: its
        load report is read on a thread, with the same deadline and the same cost to
        the budget as when start() waits for it (start() then takes it). Returns None,
        or the LoadReport of a worker that could not even be started."""
        try:
            failure = self._spawn()
        except OSError as error:
            self.stop()
            self.load_report = LoadReport(False, problem=f"the worker could not be started ({error.strerror})")
            return self.load_report
        if failure:
            self.stop()
            self.load_report = LoadReport(False, problem=failure)
            return self.load_report
        self._loading = _LoadReader(self._reader, min(self.limits.load_seconds, max(self.budget_left, 0.1)))
        return None

    def _spawn(self):
        sweeping = self.isolation.level != "bubblewrap"
        sweep.protect_grader(subreaper=sweeping)
        self._uid = sandbox.worker_uid(self.isolation)
        if self._uid is not None:
            KEEPER.watch("uid", self._uid)  # before it exists: a grader dying now leaves nothing behind
        self._staged = self._stage(self._uid)
        self._progress = _progress_page()
        read_fd, write_fd = os.pipe()
        settings = {"limits": self.limits.for_worker(), "progress_fd": self._progress[0],
                    "allowed_imports": list(self.allowed_imports)}
        command, cwd = sandbox.worker_command(self.isolation, self._staged / SUBMISSION_NAME, write_fd, settings,
                                              uid=self._uid)
        if self.box is not None:
            self._group = self.box.worker_group()
            command = self._group.enter_command(command)
        if sweeping:
            self._born_after = sweep.boot_ticks_now()
            self._spare = frozenset(sweep.my_children())
        try:
            process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0,
                pass_fds=(write_fd, self._progress[0]), cwd=cwd, env=sandbox.worker_environment(),
                start_new_session=True,
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        self.process = process
        with _LIVE_LOCK:
            _LIVE_WORKERS.add(process.pid)
        if self.box is None and self._uid is None:
            KEEPER.watch("group", process.pid)
        self.starts += 1
        channel.set_nonblocking(process.stdin.fileno())
        self._reader = channel.LineReader(read_fd, MAX_REPLY_BYTES)
        self.output = CappedOutput(process.stdout)
        return ""

    def _stage(self, uid):
        """A private copy of the submission that only the worker's uid (and root) may read."""
        folder = Path(tempfile.mkdtemp(prefix="w-", dir=self.submission_file.parent))
        target = folder / SUBMISSION_NAME
        shutil.copyfile(self.submission_file, target)
        if uid is not None:
            os.chown(target, uid, uid)
            os.chown(folder, uid, uid)
        os.chmod(target, 0o400)
        os.chmod(folder, 0o500)
        return folder

    # ---------------------------------------------------------------- request

    def run(self, steps):
        """Run one graph program; never raises for anything the submission does."""
        if self.budget_left <= 0:
            return Reply(failure=f"the time budget of {self.limits.budget_seconds:g} s for this submission is used up",
                         cause={"kind": "budget"})
        limit, skipped = self.hangs.plan(steps)
        if skipped:
            return Reply(failure=skipped, cause={"kind": "skipped", "call": self.hangs.given_up(steps)})
        if self._loading is not None or self.process is None or self.process.poll() is not None:
            report = self.start()
            if not report.ok:
                return Reply(failure=report.problem, cause={"kind": "cannot-load"})
        request_id = secrets.randbits(52) | 1  # unpredictable: no reply can be written in advance
        data = (json.dumps({"id": request_id, "steps": steps}) + "\n").encode()
        seconds = min(limit, self.budget_left)
        started = time.monotonic()
        deadline = started + seconds
        try:
            failure = channel.send(self.process.stdin.fileno(), data, deadline)
            line, why = (None, "") if failure else self._reader.read_line(deadline)
        finally:
            self.budget_left -= time.monotonic() - started
        if failure:
            return self._fail(failure, {"kind": "timeout"})
        if why:
            hung = self._hung_call(request_id, steps) if why == "timeout" else ""
            kind = {"timeout": "timeout", "oversized": "malformed"}.get(why, "died")
            return self._fail(self._failure_text(why, seconds, hung), {"kind": kind, "call": hung, "seconds": seconds})
        message = replies.parse(line)
        if message is None or message.get("id") != request_id or not replies.valid_outcome(message.get("outcome"), steps):
            return self._fail("the worker sent a malformed reply", {"kind": "malformed"})
        return Reply(outcome=replies.clean_outcome(message["outcome"], steps))

    def _hung_call(self, request_id, steps):
        """The call that was running when the program timed out (from the progress page)."""
        page = self._progress[1] if self._progress else None
        if page is None:
            return ""
        running, step = PROGRESS.unpack_from(page, 0)
        return self.hangs.record(steps, step) if running == request_id else ""

    def _failure_text(self, why, seconds, hung=""):
        if why == "timeout":
            where = f" in `{hung}`" if hung else ""
            return f"timed out after {seconds:.3g} s{where} (infinite loop? very slow code?)"
        if why == "oversized":
            return "the worker sent an oversized reply"
        return self._death_reason()

    def _fail(self, reason, cause):
        self.stop()
        return Reply(failure=reason, cause=cause)

    def _death_reason(self):
        try:
            code = self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "the worker closed its reply channel"
        if self.isolation.level == "bubblewrap" and code > 128:
            code = 128 - code  # bwrap reports its child's death by signal N as exit status 128 + N
        if code == JOIN_FAILED and self._group is not None:
            return "the worker could not join its control group"
        if code < 0:
            name = _signal_name(-code)
            why = {
                "SIGKILL": "killed (memory or CPU limit?)",
                "SIGXCPU": "CPU time limit reached",
                "SIGSEGV": "the interpreter crashed (unbounded recursion?)",
                "SIGXFSZ": "file size limit reached",
            }.get(name, "killed by a signal")
            return f"the worker process ended: {name}, {why}"
        return f"the worker process exited with code {code} (sys.exit or os._exit in the submission?)"

    # ------------------------------------------------------------------- stop

    def stop(self):
        """Kill the worker's processes (its control group, its process group, and
        everything it left behind), then collect what it printed."""
        process = self.process
        if process is not None:
            self._kill(process)
            self.outputs.append(self.output.text() if self.output else "")
        if self._loading is not None:
            self._loading.join()  # its pipe ends with the worker: it returns at once
        self._release()
        self.process = None

    def _kill(self, process):
        pid = process.pid
        if self._group is not None:
            self._group.kill()
        if self.isolation.level != "bubblewrap":
            # Freeze the group first: a stopped process cannot fork while we look.
            _killpg(pid, signal.SIGSTOP)
            with _LIVE_LOCK:
                spare = self._spare | (_LIVE_WORKERS - {pid}) | {KEEPER.pid()}
            throwaway = self._uid if sandbox.is_throwaway(self._uid) else None
            sweep.sweep(pid, self._born_after, spare, uid=throwaway, group_stopped=True)
        # bubblewrap: pid 1 of the namespace dies with this group, and with it
        # every process inside, however it detached itself.
        _killpg(pid, signal.SIGKILL)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        with _LIVE_LOCK:
            _LIVE_WORKERS.discard(pid)
        try:
            process.stdin.close()
        except OSError:
            pass
        if self.box is None and self._uid is None:
            KEEPER.forget("group", pid)

    def _release(self):
        """What the worker held: its uid's leftovers, its group, its copy, its pipes."""
        if self._uid is not None:
            if self.isolation.level == "unprivileged":
                sweep.remove_files_of(self._uid)  # bubblewrap's /tmp went with its namespace
            KEEPER.forget("uid", self._uid)
        if self._group is not None:
            self._group.remove()
        if self._staged is not None:
            try:
                os.chmod(self._staged, 0o700)
            except OSError:
                pass
            shutil.rmtree(self._staged, ignore_errors=True)
        if self._reader is not None:
            os.close(self._reader.fd)
        if self._progress is not None:
            self._progress[1].close()
            os.close(self._progress[0])
        self._reset()

    def printed(self):
        """Everything the submission printed so far, capped per worker and in total."""
        running = self.output.snapshot() if self.process is not None and self.output else ""
        text = "".join(self.outputs) + running
        if len(text) <= OUTPUT_CAP_BYTES:
            return text
        return text[:OUTPUT_CAP_BYTES] + f"\n[... {len(text) - OUTPUT_CAP_BYTES} more characters of output not kept]"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class _LoadReader:
    """Reads a launched worker's load report on a thread: (line, why, seconds waited)."""

    def __init__(self, reader, seconds):
        self.result = (None, "eof", 0.0)
        self._thread = threading.Thread(target=self._read, args=(reader, seconds), daemon=True)
        self._thread.start()

    def _read(self, reader, seconds):
        started = time.monotonic()
        line, why = reader.read_line(started + seconds)
        self.result = (line, why, time.monotonic() - started)

    def join(self):
        self._thread.join()


_LIVE_WORKERS = set()  # pids of running workers of this process (never swept by another)
_LIVE_LOCK = threading.Lock()


def _progress_page():
    """(fd, mmap) of a small shared page the worker writes its progress into."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("grader-progress", 0)
    else:  # macOS: an unlinked temporary file does the same
        handle = tempfile.TemporaryFile()
        fd = os.dup(handle.fileno())
        handle.close()
    os.ftruncate(fd, PROGRESS.size)
    return fd, mmap.mmap(fd, PROGRESS.size)


def _killpg(pid, number):
    try:
        os.killpg(pid, number)
    except (ProcessLookupError, PermissionError, AttributeError):
        pass


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
