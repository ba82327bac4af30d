"""Run graph programs on the classes of this very process (a notebook's kernel), with a time limit.

Only the notebook's checks use this (grader/notebook_check.py). It is no
sandbox and claims none: the student's code already runs in the student's own
kernel, and nothing here is a grade. What it adds to the interpreter is a time
limit per program and a budget per check, so that an infinite loop ends the
check with a message instead of hanging the notebook, and replies of the same
shape as the grader's worker gives (grader/replies.py), so that the trusted
comparison reads them unchanged.

The limit is SIGALRM from `signal.setitimer` where that works: a POSIX system
and the main thread, which is where Jupyter and Colab run cells. Elsewhere
(Windows, a cell run on another thread) a trace function checks the clock on
every line of Python: slower, and blind to a call that blocks inside C such as
a long `time.sleep`, but it stops any Python loop.
"""

import json
import signal
import sys
import threading
import time

from grader import replies
from grader.hangs import Hangs
from grader.worker.functions import exercise_functions, owners
from grader.worker.interpreter import Interpreter
from grader.worker_client import Reply

CALL_SECONDS = 2.0  # one program: the public ones take microseconds on a correct engine
BUDGET_SECONDS = 60.0  # everything one check runs
REPEAT_SECONDS = 0.05  # the alarm repeats until the program gives up, even if student code catches it once


class ProgramTimeout(BaseException):
    """Raised inside the running program when its time is up (a BaseException, so
    that an `except Exception` in student code does not swallow it)."""


class Interrupted(Exception):
    """The student pressed the kernel's stop button during a check."""


def student_files(namespace):
    """The file names of the code defined in `namespace` itself (a kernel's cells):
    an error raised there is located by its line."""
    module = namespace.get("__name__")
    files = set()
    for value in list(namespace.values()):
        try:
            if getattr(value, "__module__", None) != module:
                continue
            members = list(vars(value).values()) if isinstance(value, type) else [value]
            for member in members:
                member = getattr(member, "__func__", getattr(member, "fget", member))
                code = getattr(member, "__code__", None)
                if code is not None:
                    files.add(code.co_filename)
        except Exception:  # noqa: BLE001 - an odd object of the student's locates nothing
            continue
    return frozenset(files)


class KernelRunner:
    """`run(steps) -> Reply`, like the grader's worker, on `namespace`'s classes."""

    def __init__(self, namespace, call_seconds=CALL_SECONDS, budget_seconds=BUDGET_SECONDS):
        files = student_files(namespace)
        self.interpreter = Interpreter(namespace, source_file=files,
                                       owners=owners(exercise_functions(namespace, files)))
        self.call_seconds = call_seconds
        self.budget_seconds = budget_seconds
        self.budget_left = budget_seconds
        self.hangs = Hangs(call_seconds)  # as in grading: a call that hung gets less time, then none
        self.by_signal = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()

    def run(self, steps):
        if self.budget_left <= 0:
            return Reply(failure=f"the time budget of {self.budget_seconds:g} s for this check is used up",
                         cause={"kind": "budget"})
        limit, skipped = self.hangs.plan(steps)
        if skipped:
            return Reply(failure=skipped, cause={"kind": "skipped", "call": self.hangs.given_up(steps)})
        seconds = min(limit, self.budget_left)
        running = [None]

        def note(index):
            running[0] = index

        started = time.monotonic()
        try:
            outcome = self._run_limited(steps, seconds, note)
        finally:
            self.budget_left -= time.monotonic() - started
        error = (outcome or {}).get("error") or {}
        if outcome is None or error.get("type") == ProgramTimeout.__name__:
            hung = self.hangs.record(steps, running[0])
            where = f" in `{hung}`" if hung else ""
            return Reply(failure=f"timed out after {seconds:.3g} s{where} (infinite loop? very slow code?)",
                         cause={"kind": "timeout", "call": hung, "seconds": seconds})
        if error.get("type") == "KeyboardInterrupt":
            raise Interrupted()
        plain = json.loads(json.dumps(outcome))
        if not replies.valid_outcome(plain, steps):
            return Reply(failure="the program's outcome could not be read", cause={"kind": "malformed"})
        return Reply(outcome=replies.clean_outcome(plain, steps))

    def _run_limited(self, steps, seconds, note):
        """The interpreter's outcome, or None when the time ran out outside the student's code.
        The limit never interrupts this module's own code (see _interrupts), so the
        clean-up in `finally` always runs to its end."""
        if not self.by_signal:
            previous = sys.gettrace()
            sys.settrace(_tracer(time.monotonic() + seconds))
            try:
                return self.interpreter.run(steps, on_step=note)
            except ProgramTimeout:
                return None
            finally:
                sys.settrace(previous)
        previous = signal.signal(signal.SIGALRM, _expire)
        try:
            signal.setitimer(signal.ITIMER_REAL, seconds, REPEAT_SECONDS)
            return self.interpreter.run(steps, on_step=note)
        except ProgramTimeout:
            return None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            # None: a handler installed from outside Python, which cannot be put back.
            signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)


def _interrupts(frame):
    """Whether the time limit may raise in `frame`: anywhere but in this module, whose
    code runs only before and after the program (a signal can arrive at any bytecode)."""
    return frame is not None and frame.f_code.co_filename != _OWN_FILE


def _expire(signum, frame):
    if _interrupts(frame):
        raise ProgramTimeout()


def _tracer(deadline):
    def trace(frame, event, arg):
        if not _interrupts(frame):
            return None
        if time.monotonic() > deadline:
            raise ProgramTimeout()
        return trace

    return trace


_OWN_FILE = _expire.__code__.co_filename
