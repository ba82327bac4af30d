# Leave a daemon behind: double fork, new session, close everything, ignore the
# polite signals, and sleep; the honest code then goes on as normal.
import os
import sys

SLEEPER = (
    "import signal, time\n"
    "for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP): signal.signal(s, signal.SIG_IGN)\n"
    "time.sleep(600)\n"
)

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.closerange(0, 1024)
        # A clean environment: whatever marks the worker's processes is gone.
        os.execve(sys.executable, [sys.executable, "-c", SLEEPER, "@@MARKER@@"], {})
    os._exit(0)
os.wait()
