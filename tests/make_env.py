"""The environment for a `make` that a test runs: without what the outer `make test` passes down.

`make test PYTHON=... VENV=.venv-3.9` (what CI runs) hands its variables to every
make started below it through MAKEFLAGS; a test that runs `make grade` in a
bundle must not inherit them.
"""

import os

INHERITED = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PYTHON", "VENV", "PY", "PYTEST_ARGS")


def make_environment(**extra):
    env = {key: value for key, value in os.environ.items() if key not in INHERITED}
    env.update(extra)
    return env
