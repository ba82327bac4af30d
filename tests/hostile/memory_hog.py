# Eat all the memory there is: at import keep 64 MiB blocks until allocation
# fails, and in every backward() try to allocate 8 GiB at once.
blocks = []
try:
    while len(blocks) < 64:  # 4 GiB, far above the worker's limit (a cap for machines without one)
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
