"""Shared set-up of the hidden and public suites (trusted code of the kit).

Hypothesis is derandomized with fixed example counts so a submission gets the
same tests, and the same feedback, on every run.
"""

from hypothesis import HealthCheck, Phase, settings

settings.register_profile(
    "grading",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=25,
    # No shrinking: the engine shrinks failing programs itself, with bounded cost.
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    print_blob=False,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile("grading")

# Hypothesis also draws "local constants": literals of every module loaded in the
# process that is not installed (the grader's modules, the reference, the CLI,
# the authoring tools...). Which of those happen to be imported would change the
# generated programs, so one submission could meet different tests under `grade`,
# `batch` and the student bundle (which answers from outcomes recorded at
# `make dist`). Use none. Hypothesis is pinned, so this private hook is stable.
from hypothesis.internal.conjecture import providers as _providers  # noqa: E402
from hypothesis.internal.constants_ast import Constants as _Constants  # noqa: E402

_NO_LOCAL_CONSTANTS = _Constants()
_providers._get_local_constants = lambda: _NO_LOCAL_CONSTANTS
_providers.CONSTANTS_CACHE.cache.clear()


def pytest_addoption(parser):
    parser.addoption("--submission", help="grade this submission directly (python -m grader does this for you)")


def pytest_configure(config):
    path = config.getoption("--submission")
    if path and not config.pluginmanager.has_plugin("grader"):
        from grader.standalone import plugin_for

        config.pluginmanager.register(plugin_for(path, config), "grader")
