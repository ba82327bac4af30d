# Hold more memory than one process may: start children that each touch most of
# what their own address-space limit allows, and keep it. Per process the limit
# holds; only a bound on all of a submission's processes stops the total.
import os
import sys

HOG = (
    "import sys, time\n"
    "blocks = []\n"
    "try:\n"
    "    while len(blocks) < 24:\n"
    "        block = bytearray(16 * 1024 * 1024)\n"
    "        for i in range(0, len(block), 4096): block[i] = 1\n"
    "        blocks.append(block)\n"
    "except MemoryError:\n"
    "    pass\n"
    "time.sleep(20)\n"
)
started = 0
for _ in range(7):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        try:
            os.execv(sys.executable, [sys.executable, "-I", "-S", "-c", HOG, "@@MARKER@@"])
        finally:
            os._exit(1)
    started += 1
print(f"@@MARKER@@ memory hogs started={started}", flush=True)
