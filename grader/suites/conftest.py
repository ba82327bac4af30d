"""Shared set-up of the hidden and public suites (trusted code of the kit).

Generated tests read their frozen examples (grader/generated.py), so a
submission meets the same programs, and gets the same feedback, on every run
and every Python.
"""


def pytest_addoption(parser):
    parser.addoption("--submission", help="grade this submission directly (python -m grader does this for you)")


def pytest_configure(config):
    path = config.getoption("--submission")
    if path and not config.pluginmanager.has_plugin("grader"):
        from grader.standalone import plugin_for

        config.pluginmanager.register(plugin_for(path, config), "grader")
