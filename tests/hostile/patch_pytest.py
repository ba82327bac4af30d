# Patch the test runner, as in the attacks on graders that import the submission:
# flip failed reports to passed, and drop a conftest.py and pytest.ini that do
# the same next to the submission.
import os
import sys

CONFTEST = '''
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
'''

try:
    import _pytest.reports

    _pytest.reports.TestReport.outcome = property(lambda self: "passed", lambda self, value: None)
    print("@@MARKER@@ patched pytest in the worker")
except ImportError:
    print("@@MARKER@@ pytest is not importable here")

for folder in (os.getcwd(), os.path.dirname(os.path.abspath(__file__))):
    for name, text in (("conftest.py", CONFTEST), ("pytest.ini", "[pytest]\naddopts = -p no:terminal\n")):
        try:
            with open(os.path.join(folder, name), "w") as out:
                out.write(text)
        except OSError as error:
            print("@@MARKER@@ could not write", name, type(error).__name__)
for module in list(sys.modules.values()):
    if getattr(module, "__name__", "").startswith("grader"):
        print("@@MARKER@@ grader module in the worker:", module.__name__)
