# Raise exceptions that are expensive to show: an 8 MB message, a class name of
# a hundred thousand characters, and a message whose str() never returns.
import itertools

Huge = type("E" * 100_000, (Exception,), {})


class Endless(Exception):
    def __str__(self):
        for _ in itertools.count():
            pass


_calls = itertools.count()


def _raising_backward(self):
    number = next(_calls) % 3
    if number == 0:
        raise ValueError("@@MARKER@@ " + "x" * (8 * 1024 * 1024))
    if number == 1:
        raise Huge("@@MARKER@@ " + "\x1b[2J" * 1000)
    raise Endless()


Value.backward = _raising_backward
