"""Shared fixtures for the kit's own tests of the reference engine.

Nothing here is autouse: a test gets the reference engine or the sympy oracle
only by asking for the fixture by name (`solution`, the reference module; the
grader's suites have their own `engine` fixture, which is another thing).
"""

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference" / "tiny_autograd.py"


def load_module(path, name):
    """Import the file at `path` as a fresh module called `name` (not put in sys.modules)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def solution():
    """The reference solution, reference/tiny_autograd.py."""
    return load_module(REFERENCE, "reference_tiny_autograd")


@pytest.fixture(scope="session")
def sympy_gradient():
    """The exact oracle: sympy_gradient(f, point) -> (value, [∂f/∂x_i, ...]) as floats.

    `f(ops, *xs)` must build its expression from Python operators and the
    functions of `ops` (exp, log, tanh, relu, const), so that the very same `f`
    can also be run on Value or Dual inputs. The oracle builds f on sympy
    symbols, differentiates symbolically and evaluates at the exact binary
    value of each float in `point`, with 30 significant digits.
    """
    import sympy

    ops = SimpleNamespace(
        exp=sympy.exp,
        log=sympy.log,
        tanh=sympy.tanh,
        # relu'(0) = 0: the strict inequality sends 0 to the second branch.
        relu=lambda a: sympy.Piecewise((a, a > 0), (0, True)),
        # Constants and exponents enter as exact rationals (0.5 -> 1/2, 2.0 -> 2).
        const=sympy.Rational,
    )

    def gradient(f, point):
        symbols = sympy.symbols(f"x0:{len(point)}")
        expression = sympy.sympify(f(ops, *symbols))
        exact_point = {s: sympy.Rational(v) for s, v in zip(symbols, point)}

        def at_point(e):
            return float(e.xreplace(exact_point).evalf(30))

        return at_point(expression), [at_point(sympy.diff(expression, s)) for s in symbols]

    return gradient


@pytest.fixture(scope="session")
def reference_oracle():
    """One grader oracle for the whole run, so its cache of expected outcomes is shared."""
    from grader.oracle_reference import ReferenceOracle

    return ReferenceOracle()


@pytest.fixture(scope="session")
def grade_submission(reference_oracle):
    """grade_submission(path, suite="all", **options) -> GradeResult, in this process
    (the kit's suites run in a nested pytest.main)."""
    from grader.grading import grade

    def run(path, suite="all", **options):
        return grade(path, suite=suite, oracle=reference_oracle, **options)

    return run


@pytest.fixture(scope="session")
def graded_once(grade_submission):
    """graded_once(path, suite) -> GradeResult, graded once per session and shared.

    Only for files that do not change during the run (the reference, the
    template, the mutants of tests/mutants.py). Callers must not modify the result.
    """
    cache = {}

    def run(path, suite):
        key = (str(path), suite)
        if key not in cache:
            cache[key] = grade_submission(path, suite=suite)
        return cache[key]

    return run


@pytest.fixture(scope="session")
def mutant_file(tmp_path_factory):
    """mutant_file(mutant) -> the path of that mutant of the reference, written once per session."""
    from mutants import mutant_source

    folder = tmp_path_factory.mktemp("mutants")

    def path_of(mutant):
        path = folder / mutant.id / "tiny_autograd.py"
        if not path.exists():
            path.parent.mkdir()
            path.write_text(mutant_source(mutant), encoding="utf-8")
        return path

    return path_of
