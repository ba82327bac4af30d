# A daemon that a sweep by uid would miss: double fork, new session, and (where
# it may: a root worker) a switch to another uid before it sleeps.
import os
import sys

SLEEPER = "import time; time.sleep(600)\n"
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        try:
            os.setgid(4242)
            os.setuid(4242)
            print("@@MARKER@@ switched uid", flush=True)
        except OSError:
            pass
        os.closerange(3, 1024)
        os.execve(sys.executable, [sys.executable, "-I", "-S", "-c", SLEEPER, "@@MARKER@@"], {})
    os._exit(0)
os.wait()
