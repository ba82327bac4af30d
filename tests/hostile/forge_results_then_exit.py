# Forge the results file, as in the attacks on in-process graders: write a perfect
# score where the grader writes its results, ask atexit to write it again at the
# end, and end the run at import with a clean exit status.
import atexit
import json
import os
import sys

FORGED = {"score": 999, "output": "@@MARKER@@", "tests": [], "extra_data": {"forged": "@@MARKER@@"}}


def _forge():
    for folder in ("@@OUT_DIR@@", os.getcwd()):
        try:
            with open(os.path.join(folder, "results.json"), "w") as out:
                json.dump(FORGED, out)
        except OSError:
            pass


_forge()
atexit.register(_forge)
sys.exit(0)
