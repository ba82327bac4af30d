"""Tests over generated examples, frozen into data (standard library only).

A suite test that checks many random graphs names what it needs:

    @generated(15, expr=expressions(size=(3, 10)))
    def test_random_graphs_order(engine, expr):
        ...

The examples were generated once, at authoring time, by Hypothesis
(`python -m authoring`, see authoring/freeze.py), and committed next to the
suite as `examples.json`. At grading time the test body runs over them in
order and stops at the first failure: no generation, no shrinking, so every
submission meets the same programs on every Python, the student bundle's
recorded outcomes cover exactly what its suite checks, and grading needs no
Hypothesis.

A test whose specification (count or strategies) no longer matches its frozen
examples fails with a message that says to run `make template`;
`python -m authoring --check` (and a test of the kit) finds that first.
"""

import contextlib
import functools
import inspect
import json
from dataclasses import dataclass
from pathlib import Path

from grader.expression import Expression

EXAMPLES_FILE = "examples.json"
FORMAT = 1


@dataclass(frozen=True)
class Spec:
    """What to generate: the name of a strategy of authoring/strategies.py and its arguments."""

    strategy: str
    args: dict

    def as_json(self):
        return {"strategy": self.strategy, "args": json.loads(json.dumps(self.args))}

    def decode(self, value):
        return Expression.from_json(value) if self.strategy in EXPRESSION_STRATEGIES else value


EXPRESSION_STRATEGIES = ("expressions", "dual_expressions", "single_ops")


def expressions(**args):
    """A random expression DAG (see authoring/strategies.py for `ops`, `leaves`, `size`, `kind`)."""
    return Spec("expressions", args)


def dual_expressions(**args):
    """A random expression over the Dual ops the seed defines, with a seed direction."""
    return Spec("dual_expressions", args)


def single_ops(**args):
    """One op (plain, with itself, with a constant on either side) over two leaves."""
    return Spec("single_ops", args)


def constants():
    """A constant operand (never 0, never 1)."""
    return Spec("constants", {})


def masks(bits=20):
    """A random bit mask, for a random subset (grader.expression.pick)."""
    return Spec("masks", {"bits": bits})


class StaleExamples(RuntimeError):
    """The frozen examples do not match the test (run `make template`)."""


def generated(count, **specs):
    """Run the test once per frozen example (at most `count`), in order; the first
    failure ends the test. The test's other arguments are pytest fixtures."""

    def decorate(test):
        @functools.wraps(test)
        def run(*args, **kwargs):
            for index, example in enumerate(examples_of(run)):
                with _running_example(index):
                    test(*args, **kwargs, **example)

        signature = inspect.signature(test)
        run.__signature__ = signature.replace(
            parameters=[p for name, p in signature.parameters.items() if name not in specs])
        run.__generated__ = Generated(count, specs, Path(inspect.getfile(test)).resolve(), test.__name__)
        return run

    return decorate


@dataclass(frozen=True)
class Generated:
    count: int
    specs: dict  # argument name -> Spec
    file: Path  # the test module
    name: str  # the test function

    @property
    def key(self):
        return f"{self.file.name}::{self.name}"

    @property
    def examples_file(self):
        return self.file.parent / EXAMPLES_FILE

    def header(self):
        """What the frozen entry must have been made for."""
        return {"count": self.count, "specs": {name: spec.as_json() for name, spec in sorted(self.specs.items())}}


def examples_of(test):
    """The decoded frozen examples of a @generated test: [{argument: value}, ...]."""
    info = test.__generated__
    entry = load_examples(info.examples_file).get(info.key)
    if entry is None:
        raise StaleExamples(f"{info.key} has no frozen examples in {info.examples_file.name}: run `make template`")
    if {k: entry.get(k) for k in ("count", "specs")} != info.header():
        raise StaleExamples(f"{info.key}: its frozen examples were made for another count or strategies: "
                            "run `make template`")
    return [{name: info.specs[name].decode(value) for name, value in example.items()}
            for example in entry["examples"][: info.count]]


@functools.lru_cache(maxsize=None)
def _load(path, _mtime):
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("format") != FORMAT or not isinstance(data.get("tests"), dict):
        raise StaleExamples(f"{path}: not a file of frozen examples of format {FORMAT}")
    return data["tests"]


def load_examples(path):
    """{"file.py::test": entry} of one examples.json; {} when there is none."""
    path = Path(path)
    if not path.is_file():
        return {}
    return _load(str(path), path.stat().st_mtime_ns)


# --- which example is running (grader/replay.py groups a test's checks by it)

_current = [None]


@contextlib.contextmanager
def _running_example(index):
    _current[0] = index
    try:
        yield
    finally:
        _current[0] = None


def current_example():
    """The index of the frozen example being run, or None outside a @generated test."""
    return _current[0]
