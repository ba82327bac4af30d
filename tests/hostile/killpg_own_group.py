# Kill the worker's own process group from inside backward(), taking the worker
# (and anything else in its group) down in the middle of a request.
import os
import signal

_honest_backward = Value.backward
_calls = [0]


def _suicidal_backward(self):
    _calls[0] += 1
    if _calls[0] % 2:
        os.killpg(os.getpgid(0), signal.SIGKILL)
    return _honest_backward(self)


Value.backward = _suicidal_backward
