# Find the hidden test suites and print them, so that they end up in the
# feedback the student can read.
import os

for root in ("@@KIT@@", "/", os.getcwd()):
    suites = os.path.join(root, "grader", "suites", "hidden")
    try:
        names = sorted(os.listdir(suites))
    except OSError as error:
        print("@@MARKER@@ cannot list", suites, type(error).__name__)
        continue
    for name in names:
        try:
            with open(os.path.join(suites, name), encoding="utf-8") as source:
                print(source.read())
        except OSError:
            pass
