# Crash the interpreter itself: lift the recursion limit and recurse through C
# code (map) until the C stack overflows: a segmentation fault in every
# backward() (Python 3.12 and later guard the C stack and raise RecursionError).
import sys

sys.setrecursionlimit(10 ** 6)


def _deeper(n):
    return list(map(_deeper, [n + 1]))


def _crashing_backward(self):
    return _deeper(0)


Value.backward = _crashing_backward
