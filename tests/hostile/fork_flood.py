# A fork flood: start processes until the system says no (or @@FORK_CAP@@, a
# safety cap for levels that do not bound it), each one replacing itself with a
# sleeper that ignores polite signals. Then report how many there were.
import errno
import os
import sys

SLEEPER = (
    "import signal, time\n"
    "for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP): signal.signal(s, signal.SIG_IGN)\n"
    "time.sleep(600)\n"
)
started, refused = 0, None
while started < @@FORK_CAP@@:
    try:
        pid = os.fork()
    except OSError as error:
        refused = errno.errorcode.get(error.errno, str(error.errno))
        break
    if pid == 0:
        try:
            os.execv(sys.executable, [sys.executable, "-I", "-S", "-c", SLEEPER, "@@MARKER@@"])
        finally:
            os._exit(1)
    started += 1
print(f"@@MARKER@@ fork flood: started={started} refused={refused}")
