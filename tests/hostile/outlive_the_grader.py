# Outlive a grader that is killed from outside: the worker clears its own
# parent-death signal, starts a child that clears it too (and stays in the
# worker's group), and a daemon (double fork, new session, cleared parent-death
# signal, closed files, empty environment); then every backward() is slow, so
# that the grading is still running when the grader is killed.
import ctypes
import os
import sys
import time

PR_SET_PDEATHSIG = 1
SLEEPER = (
    "import ctypes, signal, time\n"
    "ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)\n"
    "for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP): signal.signal(s, signal.SIG_IGN)\n"
    "time.sleep(600)\n"
)
_libc = ctypes.CDLL(None)
_libc.prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0)
if os.fork() == 0:  # a child that stays in the worker's process group
    os.execv(sys.executable, [sys.executable, "-c", SLEEPER, "@@MARKER@@-child"])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.closerange(0, 1024)
        os.execve(sys.executable, [sys.executable, "-c", SLEEPER, "@@MARKER@@-daemon"], {})
    os._exit(0)
os.wait()
print("@@MARKER@@ started", flush=True)

_honest_backward = Value.backward


def _slow_backward(self):
    time.sleep(0.3)
    return _honest_backward(self)


Value.backward = _slow_backward
