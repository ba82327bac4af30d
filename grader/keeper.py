"""The keeper: a small trusted process that cleans up after a grader that died.

A worker's processes must not outlive the grader, even when the grader is
killed from outside (SIGKILL by a watchdog, the out-of-memory killer, a CI
timeout) and even when the submission has cleared its parent-death signal and
detached itself. The kernel then tells nobody but the processes that hold the
other end of a pipe. So each grading process starts one keeper (in a session
of its own, so that signals to the grader's group do not reach it) and tells it,
line by line on that pipe, what to clean up if the grader goes away: the
control group of each submission, each throwaway uid, each worker's process
group. The grader unregisters what it cleaned up itself. When the pipe reaches
end of file (the grader exited, however it exited), the keeper kills what is
still registered, removes the groups, and exits.

It never runs student code and reads nothing from workers. It is killable only
by root, or by the grader's own user (which at the process level includes the
student's code: that level does not claim to hold against it).

    python -I -S keeper.py KIT_ROOT   (started by `Keeper.watch`, not by hand)
"""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

_KIT_ROOT = str(Path(__file__).resolve().parent.parent)


class Keeper:
    """The grader's side: one keeper per grading process, started on first use."""

    def __init__(self):
        self._process = None
        self._owner = None
        self._lock = threading.Lock()

    def pid(self):
        return self._process.pid if self._process is not None and self._owner == os.getpid() else None

    def watch(self, kind, value):
        self._send(f"watch {kind} {value}\n")

    def forget(self, kind, value):
        self._send(f"forget {kind} {value}\n")

    def _send(self, line):
        with self._lock:
            if self._owner != os.getpid() or self._process.poll() is not None:
                self._start()
            try:
                self._process.stdin.write(line.encode())
                self._process.stdin.flush()
            except OSError:
                self._process = None  # it will be started again for the next line

    def _start(self):
        if self._process is not None:  # a dead keeper, or a forked parent's (our copy of its pipe)
            try:
                self._process.stdin.close()
            except OSError:
                pass
        python = sys.executable or "/usr/bin/python3"
        # No environment: a worker that may read this process's /proc entries finds no secret there.
        self._process = subprocess.Popen(
            [python, "-I", "-S", __file__, _KIT_ROOT],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
        )
        self._owner = os.getpid()


KEEPER = Keeper()


# ------------------------------------------------------------- the keeper


def _clean_up(watched, seconds=3.0):
    """Kill everything registered, again and again until it stays gone: a worker the
    grader was starting when it died may only now be joining its group or uid."""
    from grader import cgroups, sweep

    groups = [cgroups.Group([Path(folder) for folder in value.split(":")]) for value in watched.get("cgroup", ())]
    uids = [int(value) for value in watched.get("uid", ()) if value.isdigit()]
    sessions = [int(value) for value in watched.get("group", ()) if value.isdigit()]
    deadline = time.monotonic() + seconds
    while True:
        for session in sessions:
            try:
                os.killpg(session, signal.SIGKILL)
            except OSError:
                pass
        found = sum(sweep.kill_uid(uid) for uid in uids)
        for group in groups:
            found += len(group.pids())
            group.kill(seconds=0.5)
        if time.monotonic() > deadline or (not found and time.monotonic() > deadline - seconds + 0.5):
            break
        time.sleep(0.05)
    for group in groups:
        group.remove()
    for uid in uids:
        sweep.remove_files_of(uid)


def main(argv):
    sys.path.insert(0, argv[1])
    from grader import sweep

    sweep.protect_grader()  # not dumpable, like the grader
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(number, signal.SIG_IGN)
    watched = {}
    for line in sys.stdin.buffer:
        parts = line.decode("utf-8", errors="replace").rstrip("\n").split(" ", 2)
        if len(parts) != 3:
            continue
        action, kind, value = parts
        if action == "watch":
            watched.setdefault(kind, set()).add(value)
        elif action == "forget":
            watched.get(kind, set()).discard(value)
    _clean_up(watched)


if __name__ == "__main__":
    main(sys.argv)
