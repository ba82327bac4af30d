"""The grader's side of the worker: start it, ask it, time it, kill it.

Replies are untrusted: they are size-capped, parsed as JSON, validated, and
rebuilt with every string clipped before anything reads them. Any timeout,
crash, end of file or malformed reply kills the worker's whole process group
(and, outside bubblewrap, sweeps what it left behind); the next request starts
a fresh worker. What the submission prints is capped per worker and in total.
"""

import json
import os
import re
import secrets
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

from grader import sandbox

MAX_REPLY_BYTES = 8 * 1024 * 1024
OUTPUT_CAP_BYTES = 16 * 1024  # per worker, and for everything printed.
MAX_MESSAGE = 400  # an error message from the worker, in characters
MAX_NAME = 80  # a type or function name from the worker
# Control characters (other than tab and newline) do not belong in a results file,
# nor do the bidirectional overrides that make text display other than it reads.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@dataclass
class Limits:
    call_seconds: float = 5.0  # one graph program
    load_seconds: float = 10.0  # importing the submission
    budget_seconds: float = 60.0  # everything one submission may use
    memory_bytes: int = 1024 * 1024 * 1024
    file_bytes: int = 16 * 1024 * 1024
    open_files: int = 64
    processes: int = 64

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
    limits: list = field(default_factory=list)  # the rlimits the worker says held (informational)


@dataclass
class Reply:
    outcome: dict = None  # the interpreter's outcome (validated shape)
    failure: str = ""  # why there is no outcome: timeout, crash, bad reply, budget


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


def printable(text):
    """Text safe to put in a report: no terminal escapes or other control characters."""
    return _CONTROL.sub("\N{REPLACEMENT CHARACTER}", text.replace("\r\n", "\n").replace("\r", "\n"))


class Worker:

    def __init__(self, submission_file, limits=None, isolation=None):
        self.submission_file = submission_file
        self.limits = limits or Limits()
        self.isolation = isolation or sandbox.detect()
        self.process = None
        self.output = None
        self.load_report = None
        self.budget_left = self.limits.budget_seconds
        self.starts = 0
        self._reply_fd = None
        self._buffer = b""
        self._next_id = 0
        self._token = None  # marks this worker's processes, for the sweep
        self._uid = None  # the uid the worker runs as (None: ours)
        self._born_after = 0
        self._spare = frozenset()  # our children that are not this worker's
        self.swept = 0  # processes the last stop() killed beyond the worker itself
        self.outputs = []  # capped output of every worker that has ended

    # ------------------------------------------------------------------ start

    def start(self):
        """Start a worker and wait for its load report (cached after a load error)."""
        if self.load_report is not None and not self.load_report.ok:
            return self.load_report
        sweeping = self.isolation.level != "bubblewrap"
        sandbox.protect_grader(subreaper=sweeping)
        read_fd, write_fd = os.pipe()
        self._uid = sandbox.worker_uid(self.isolation)
        command, cwd = sandbox.worker_command(
            self.isolation, self.submission_file, write_fd, json.dumps(self.limits.for_worker()), uid=self._uid
        )
        self._token = secrets.token_hex(8)
        if sweeping:
            self._born_after = sandbox.boot_ticks_now()
            self._spare = frozenset(sandbox.my_children())
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=(write_fd,),
                cwd=cwd,
                env=sandbox.worker_environment(self._token),
                start_new_session=True,
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        self.process = process
        with _LIVE_LOCK:
            _LIVE_WORKERS.add(self.process.pid)
        self.starts += 1
        self._reply_fd, self._buffer = read_fd, b""
        self.output = CappedOutput(self.process.stdout)
        message, failure = self._read_message(min(self.limits.load_seconds, max(self.budget_left, 0.1)))
        if failure:
            self.stop()
            self.load_report = LoadReport(False, problem=f"while loading the submission: {failure}")
        elif message.get("ready") is True and _is_name_list(message.get("missing")):
            self.load_report = LoadReport(True, missing=message["missing"], limits=_limit_names(message))
        elif message.get("ready") is False and isinstance(message.get("load_error"), dict):
            self.stop()
            self.load_report = LoadReport(False, problem="import failed", error=_clean_load_error(message["load_error"]))
        else:
            self.stop()
            self.load_report = LoadReport(False, problem="the worker sent a malformed load report")
        return self.load_report

    # ---------------------------------------------------------------- request

    def run(self, steps):
        """Run one graph program; never raises for anything the submission does."""
        if self.budget_left <= 0:
            return Reply(failure=f"the time budget of {self.limits.budget_seconds:g} s for this submission is used up")
        if self.process is None or self.process.poll() is not None:
            report = self.start()
            if not report.ok:
                return Reply(failure=report.problem)
        self._next_id += 1
        request = json.dumps({"id": self._next_id, "steps": steps}) + "\n"
        try:
            self.process.stdin.write(request.encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            return self._fail("the worker process died before it could take the request")
        message, failure = self._read_message(min(self.limits.call_seconds, self.budget_left))
        if failure:
            return self._fail(failure)
        outcome = message.get("outcome")
        if message.get("id") != self._next_id or not _valid_outcome(outcome, steps):
            return self._fail("the worker sent a malformed reply")
        return Reply(outcome=_clean_outcome(outcome, steps))

    def _fail(self, reason):
        self.stop()
        return Reply(failure=reason)

    def _read_message(self, timeout):
        """One JSON line from the reply pipe within `timeout` seconds: (message, failure)."""
        started = time.monotonic()
        deadline = started + timeout
        try:
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None, f"timed out after {timeout:.3g} s (infinite loop? very slow code?)"
                ready, _, _ = select.select([self._reply_fd], [], [], left)
                if not ready:
                    continue
                chunk = os.read(self._reply_fd, 1 << 20)
                if not chunk:
                    return None, self._death_reason()
                self._buffer += chunk
                if len(self._buffer) > MAX_REPLY_BYTES:
                    return None, "the worker sent an oversized reply"
            line, _, self._buffer = self._buffer.partition(b"\n")
            try:
                message = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
            except (UnicodeDecodeError, ValueError, RecursionError):
                return None, "the worker sent a malformed reply"
            if not isinstance(message, dict):
                return None, "the worker sent a malformed reply"
            return message, ""
        finally:
            self.budget_left -= time.monotonic() - started

    def _death_reason(self):
        try:
            code = self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "the worker closed its reply channel"
        if self.isolation.level == "bubblewrap" and code > 128:
            code = 128 - code  # bwrap reports its child's death by signal N as exit status 128 + N
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
        """Kill the worker's whole process group (outside bubblewrap, also every
        process it left behind) and collect what it printed."""
        if self.process is None:
            return
        pid = self.process.pid
        if self.isolation.level != "bubblewrap":
            # Freeze the group first: a stopped process cannot fork while we look.
            _killpg(pid, signal.SIGSTOP)
            with _LIVE_LOCK:
                spare = self._spare | (_LIVE_WORKERS - {pid})
            self.swept = max(0, sandbox.sweep(pid, self._token, self._born_after, spare, uid=self._uid,
                                              group_stopped=True) - 1)
        # bubblewrap: pid 1 of the namespace dies with this group, and with it
        # every process inside, however it detached itself.
        _killpg(pid, signal.SIGKILL)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        with _LIVE_LOCK:
            _LIVE_WORKERS.discard(pid)
        for stream in (self.process.stdin,):
            try:
                stream.close()
            except OSError:
                pass
        if self._reply_fd is not None:
            os.close(self._reply_fd)
            self._reply_fd = None
        self.outputs.append(self.output.text())
        self.process = None

    def printed(self):
        """Everything the submission printed so far, capped per worker and in total."""
        running = self.output.snapshot() if self.process is not None else ""
        text = "".join(self.outputs) + running
        if len(text) <= OUTPUT_CAP_BYTES:
            return text
        return text[:OUTPUT_CAP_BYTES] + f"\n[... {len(text) - OUTPUT_CAP_BYTES} more characters of output not kept]"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


_LIVE_WORKERS = set()  # pids of running workers of this process (never swept by another)
_LIVE_LOCK = threading.Lock()


def _killpg(pid, number):
    try:
        os.killpg(pid, number)
    except (ProcessLookupError, PermissionError, AttributeError):
        pass


def _limit_names(message):
    names = message.get("limits")
    return [n for n in names if isinstance(n, str)][:20] if isinstance(names, list) else []


def _clip(value, limit):
    return printable(value if len(value) <= limit else value[:limit] + f"... [{len(value) - limit} more characters]")


def _clean_value(value):
    if isinstance(value, dict):
        if "nonfinite" in value:
            return {"nonfinite": value["nonfinite"]}
        return {"not_a_number": _clip(value["not_a_number"], MAX_NAME), "repr": _clip(value["repr"], 120)}
    try:
        return float(value)
    except OverflowError:  # an int no float can hold (the interpreter never sends one)
        return {"not_a_number": "int", "repr": "an integer too large for a float"}


def _clean_outcome(outcome, steps):
    """A validated outcome rebuilt from its known fields, numbers as floats, node
    numbers in range, every string clipped: a submission that writes its own
    replies cannot flood or garble the report."""
    nodes = sum(1 for step in steps if step[0] in ("value", "dual", "op"))
    clean = {
        "ok": outcome["ok"],
        "snapshots": [[[_clean_value(v) for v in pair] for pair in snapshot] for snapshot in outcome["snapshots"]],
        "orders": [
            {"not_a_list": _clip(order["not_a_list"], MAX_NAME)} if isinstance(order, dict)
            else [i if -1 <= i < nodes else -1 for i in order]
            for order in outcome["orders"]
        ],
    }
    if not outcome["ok"]:
        error = outcome["error"]
        where = error.get("where")
        clean["step"] = outcome["step"]
        clean["error"] = {"type": _clip(error["type"], MAX_NAME), "message": _clip(error["message"], MAX_MESSAGE)}
        if isinstance(where, dict) and isinstance(where.get("line"), int) and not isinstance(where["line"], bool):
            clean["error"]["where"] = {
                "file": _clip(str(where.get("file", "")), 200),
                "line": where["line"],
                "function": _clip(str(where.get("function", "")), MAX_NAME),
            }
        else:
            clean["error"]["where"] = None
    return clean


def _reject_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _is_name_list(value):
    return isinstance(value, list) and all(isinstance(v, str) and len(v) < 40 for v in value)


def _clean_load_error(error):
    def text(value, limit):
        return printable(value[:limit]) if isinstance(value, str) else ""

    line = error.get("line")
    return {
        "type": text(error.get("type"), 80),
        "message": text(error.get("message"), 400),
        "line": line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None,
    }


def _is_number_or_marker(value):
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    return isinstance(value, dict) and (
        value.get("nonfinite") in ("nan", "inf", "-inf")
        or (isinstance(value.get("not_a_number"), str) and isinstance(value.get("repr"), str))
    )


def _valid_outcome(outcome, steps):
    """The outcome has exactly the shape the interpreter produces for `steps`."""
    if not isinstance(outcome, dict) or not isinstance(outcome.get("ok"), bool):
        return False
    snapshots, orders = outcome.get("snapshots"), outcome.get("orders")
    if not isinstance(snapshots, list) or not isinstance(orders, list):
        return False
    node_steps = sum(1 for step in steps if step[0] in ("value", "dual", "op"))
    for snapshot in snapshots:
        if not isinstance(snapshot, list) or len(snapshot) > node_steps:
            return False
        for pair in snapshot:
            if not (isinstance(pair, list) and len(pair) == 2 and all(map(_is_number_or_marker, pair))):
                return False
    for order in orders:
        if isinstance(order, dict):
            if not isinstance(order.get("not_a_list"), str):
                return False
        elif not (isinstance(order, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in order)):
            return False
    if outcome["ok"]:
        return len(snapshots) == sum(1 for s in steps if s[0] == "read") and len(orders) == sum(
            1 for s in steps if s[0] == "backward"
        )
    step, error = outcome.get("step"), outcome.get("error")
    return (
        isinstance(step, int)
        and 0 <= step < len(steps)
        and isinstance(error, dict)
        and isinstance(error.get("type"), str)
        and isinstance(error.get("message"), str)
    )
