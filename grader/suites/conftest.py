"""Shared set-up of the hidden and public suites (trusted code of the kit).

Hypothesis is derandomized with fixed example counts so a submission gets the
same tests, and the same feedback, on every run.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "grading",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=25,
    print_blob=False,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile("grading")


def pytest_addoption(parser):
    parser.addoption("--submission", help="grade this submission directly (python -m grader does this for you)")


def pytest_configure(config):
    path = config.getoption("--submission")
    if path and not config.pluginmanager.has_plugin("grader"):
        from grader.standalone import plugin_for

        config.pluginmanager.register(plugin_for(path, config), "grader")
