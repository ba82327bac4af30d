# Text no UTF-8 writer can encode: lone surrogates in an exception's message and
# in the name of the function that raised it, in the repr of a non-number, and
# as raw bytes on stdout (what a surrogate looks like in CESU-8). (Type names
# cannot hold them: Python refuses such a class.)
import sys

sys.stdout.buffer.write(b"@@MARKER@@ \xed\xa0\x80 \xed\xbf\xbf\n")
sys.stdout.flush()


class Odd:
    def __repr__(self):
        return "\ud800\udbff repr"


def _raise(self):
    raise ValueError("\ud800 lone surrogate \udfff in the message")


_raise.__code__ = _raise.__code__.replace(co_name="back\ud800ward")
Value.backward = _raise
_honest_tanh = Value.tanh


def _odd_tanh(self):
    out = _honest_tanh(self)
    out.data = Odd()
    return out


Value.tanh = _odd_tanh
