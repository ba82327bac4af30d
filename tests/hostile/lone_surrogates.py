# Text no UTF-8 writer can encode: lone surrogates in an exception's type name,
# message and function name, in the type name and repr of a non-number, and as
# raw bytes on stdout (what a surrogate looks like in CESU-8).
import sys

sys.stdout.buffer.write(b"@@MARKER@@ \xed\xa0\x80 \xed\xbf\xbf\n")
sys.stdout.flush()
Broken = type("Broken\ud800", (Exception,), {})
Odd = type("Odd\udfff", (), {"__repr__": lambda self: "\ud800\udbff repr"})


def _raise(self):
    raise Broken("\ud800 lone surrogate \udfff in the message")


_raise.__code__ = _raise.__code__.replace(co_name="back\ud800ward")
Value.backward = _raise
_honest_tanh = Value.tanh


def _odd_tanh(self):
    out = _honest_tanh(self)
    out.data = Odd()
    return out


Value.tanh = _odd_tanh
