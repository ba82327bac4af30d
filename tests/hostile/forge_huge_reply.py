# Write replies straight into the reply channel that are valid in shape but carry
# megabytes of text, control characters and absurd numbers, to flood or garble
# the results the grader writes from them.
import json
import os
import sys

reply_fd = int(sys.argv[3])
requests_fd = None
for name in sorted(os.listdir("/proc/self/fd"), key=int):
    fd = int(name)
    if fd > 2 and fd != reply_fd and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
        requests_fd = fd
        break

HUGE = "\x1b[2J\x1b[31m@@MARKER@@ " + "A" * (512 * 1024)  # megabytes per reply, under the reply cap
LONG = HUGE[:10_000]


def send(message):
    os.write(reply_fd, (json.dumps(message) + "\n").encode())


send({"ready": True, "missing": [], "limits": []})
with os.fdopen(requests_fd, "r") as requests:
    for number, line in enumerate(requests):
        request = json.loads(line)
        if number % 2 == 0:
            outcome = {
                "ok": False,
                "step": 0,
                "error": {"type": HUGE, "message": HUGE,
                          "where": {"file": HUGE, "line": 1, "function": HUGE}},
                "snapshots": [],
                "orders": [],
            }
        else:
            count = sum(1 for step in request["steps"] if step[0] in ("value", "dual", "op"))
            reads = sum(1 for step in request["steps"] if step[0] == "read")
            backwards = sum(1 for step in request["steps"] if step[0] == "backward")
            outcome = {
                "ok": True,
                "snapshots": [[[10 ** 400, {"not_a_number": LONG, "repr": LONG}]] * count] * reads,
                "orders": [[10 ** 300] * 1000] * backwards,
            }
        send({"id": request["id"], "outcome": outcome})
os._exit(0)
