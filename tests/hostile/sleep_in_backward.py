# Load fine, then hang without using CPU: backward() waits forever for an event
# nobody sets, in a thread that ignores the signals a polite grader would send.
import signal
import threading

for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(number, signal.SIG_IGN)


def _wait_forever(self):
    threading.Event().wait()


Value.backward = _wait_forever
