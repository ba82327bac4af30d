"""grader/exercise.toml is the exercise: it must agree with the reference, and the worker with it."""

import math
import operator

import pytest

from grader import exercise
from grader.exercise import DUAL_VARIABLES, EXERCISE, REVERSE_VARIABLES, VALUE_VARIABLES
from grader.feedback.simulate import simulate
from grader.formula import Formula
from grader.program import Graph, apply
from grader.worker import interpreter

UPSTREAM = 1.7  # the output's grad: a rule that forgets it shows


def _points(op):
    """Inputs inside the op's domain: its probe points and a few more."""
    candidates = [tuple(p) for p in op.probes] or [(0.8, -1.3)]
    extra = [(1.3, 0.6), (-0.4, 2.5), (2.2, -0.7)]
    for a, b in extra:
        if op.exponents:
            for k in op.exponents:
                candidates.append((abs(a) + 0.3, k))
        else:
            candidates.append((a, b)[: op.arity])
    return [p for p in candidates if op.in_domain(a=p[0], b=p[-1], x=p[0], k=p[-1])]


@pytest.mark.parametrize("name", EXERCISE.primitives())
def test_each_primitives_value_and_local_rule_are_the_references(name, solution):
    op = EXERCISE.op(name)
    for point in _points(op):
        leaves = [solution.Value(point[0])] + ([solution.Value(point[1])] if op.arity == 2 and not op.exponents else [])
        args = leaves + ([point[1]] if op.exponents else [])
        out = apply(name, args)
        (out * UPSTREAM).backward()
        env = {"a": point[0], "x": point[0], "b": point[-1], "k": point[-1], "t": out.data, "g": UPSTREAM}
        assert Formula(op.value, VALUE_VARIABLES)(env) == pytest.approx(out.data, rel=1e-12), (name, point)
        for leaf, rule in zip(leaves, op.grad):
            assert Formula(rule, REVERSE_VARIABLES)(env) == pytest.approx(leaf.grad, rel=1e-12), (name, point)


@pytest.mark.parametrize("name", [n for n in EXERCISE.names() if not EXERCISE.op(n).primitive])
def test_each_derived_op_is_built_as_the_reference_builds_it(name, solution):
    """The recipe gives the reference's value and every gradient, with a number on
    either side where Python allows one."""
    op = EXERCISE.op(name)
    shapes = [("node", "node"), ("node", "number")] + ([("number", "node")] if op.reflected else [])
    for a, b in [(1.3, 0.7), (-2.0, 1.6)][: 2]:
        for shape in shapes[: 1] if op.arity == 1 else shapes:
            g = Graph()
            operands = [g.value(x) if kind == "node" else x for kind, x in zip(shape, (a, b))][: op.arity]
            out = apply(name, operands)
            g.backward(out * UPSTREAM)
            expected = interpreter.Interpreter(vars(solution)).run(g.steps)["snapshots"]
            simulated = simulate(g.steps)["snapshots"]
            flat = [number for snapshot in simulated for pair in snapshot for number in pair]
            assert flat == pytest.approx([n for snapshot in expected for pair in snapshot for n in pair], rel=1e-12)


@pytest.mark.parametrize("name", EXERCISE.primitives(dual=True))
def test_each_dual_primitives_derivative_is_the_references(name, solution):
    op = EXERCISE.op(name)
    for point in _points(op):
        duals = [solution.Dual(point[0], 0.7)] + ([solution.Dual(point[1], -1.9)] if op.arity == 2 else [])
        out = apply(name, duals)
        env = {"a": duals[0].val, "da": duals[0].der, "x": duals[0].val, "dx": duals[0].der,
               "b": duals[-1].val if op.arity == 2 else 0.0, "db": duals[-1].der if op.arity == 2 else 0.0,
               "t": out.val}
        assert Formula(op.der, DUAL_VARIABLES)(env) == pytest.approx(out.der, rel=1e-12), (name, point)


def test_the_graded_dual_api_is_the_seeds():
    """Dual: + - * exp tanh, and + * with a number on the left (the design's contract)."""
    assert set(EXERCISE.names(dual=True)) == {"+", "-", "*", "exp", "tanh"}
    assert set(EXERCISE.reflected(dual=True)) == {"+", "*"}


class _Recorder:
    """Records which method Python called on it."""

    def __init__(self, calls):
        self.calls = calls

    def __getattr__(self, name):
        if name.startswith("__") and name not in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__",
                                                  "__rmul__", "__truediv__", "__rtruediv__", "__pow__", "__neg__"):
            raise AttributeError(name)
        return lambda *args: self.calls.append(name)

    def __add__(self, other):
        return self.__getattr__("__add__")(other)

    def __radd__(self, other):
        return self.__getattr__("__radd__")(other)

    def __sub__(self, other):
        return self.__getattr__("__sub__")(other)

    def __rsub__(self, other):
        return self.__getattr__("__rsub__")(other)

    def __mul__(self, other):
        return self.__getattr__("__mul__")(other)

    def __rmul__(self, other):
        return self.__getattr__("__rmul__")(other)

    def __truediv__(self, other):
        return self.__getattr__("__truediv__")(other)

    def __rtruediv__(self, other):
        return self.__getattr__("__rtruediv__")(other)

    def __pow__(self, other):
        return self.__getattr__("__pow__")(other)

    def __neg__(self):
        return self.__getattr__("__neg__")()


def test_the_workers_dispatch_is_the_tables():
    """The worker spells the ops again (it imports nothing of the kit): the same
    names, each calling the table's method, and its reflection with a number on the left."""
    dispatched = {**interpreter.BINARY, **interpreter.UNARY, **{m: m for m in interpreter.METHODS}}
    missing = [name for name in EXERCISE.names() if name not in dispatched]
    assert not missing, f"grader/worker/interpreter.py does not dispatch the table's op(s) {missing}"
    extra = sorted(set(dispatched) - set(EXERCISE.names()))
    assert not extra, f"grader/worker/interpreter.py dispatches op(s) {extra} the table does not have"
    for name in EXERCISE.names():
        op = EXERCISE.op(name)
        calls = []
        node = _Recorder(calls)
        args = [node] if op.arity == 1 else [node, 2.0]
        interpreter.Interpreter._apply(name, args)
        assert calls == [op.method], name
        if op.reflected:
            calls.clear()
            interpreter.Interpreter._apply(name, [2.0, node])
            assert calls == [op.reflected], name


def test_the_builder_and_the_rendering_come_from_the_table():
    g = Graph()
    x, y = g.values(1.0, 2.0)
    for name in EXERCISE.names():
        op = EXERCISE.op(name)
        args = [x] if op.arity == 1 else [x, 2 if op.exponents else y]
        node = apply(name, args)
        assert g.node_steps[node.index][1] == name
    assert [step[1] for step in g.node_steps[2:]] == list(EXERCISE.names())


def test_a_table_with_an_unknown_key_or_a_recipe_of_unknown_ops_is_refused(tmp_path):
    text = exercise.TABLE_FILE.read_text(encoding="utf-8")
    bad_key = tmp_path / "key.toml"
    bad_key.write_text(text.replace('[ops.tanh]\n', '[ops.tanh]\nderivative = "1 - t * t"\n'), encoding="utf-8")
    with pytest.raises(ValueError, match="unknown keys"):
        exercise.load(bad_key)
    bad_recipe = tmp_path / "recipe.toml"
    bad_recipe.write_text(text.replace('built = "a * -1.0"', 'built = "a @ -1.0"'), encoding="utf-8")
    with pytest.raises(ValueError, match="recipe"):
        exercise.load(bad_recipe)


def test_the_tolerance_is_the_tables():
    assert EXERCISE.matches(1.0, 1.0 + 0.5e-6) and not EXERCISE.matches(1.0, 1.0 + 2e-6)
    assert EXERCISE.matches(0.0, 0.5e-9) and not EXERCISE.matches(0.0, 2e-9)
    assert math.isclose(EXERCISE.rel_tol, 1e-6) and operator.eq(EXERCISE.node_kinds, ("value", "dual", "op"))


def test_categories_are_the_rubrics():
    assert exercise.categories() == ("gradients", "accumulation", "zero_grad", "forward_mode")
