# kill(-1): send SIGKILL to every process this user may signal.
import os
import signal

if os.getuid() == 0:
    # Safety interlock of the corpus: as root this would take the machine down.
    raise SystemExit("@@MARKER@@ refusing to kill(-1) as root")
try:
    os.kill(-1, signal.SIGKILL)
except OSError as error:
    print("@@MARKER@@ kill(-1) failed", type(error).__name__)
