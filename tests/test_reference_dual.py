"""Forward mode: Dual(x, v) carries the directional derivative ∇f·v.

* Each Dual op (+ * - unary -, exp, tanh, and the forms with a plain number on
  either side) gives sympy's exact directional derivative.
* On random expression graphs built from the ops both engines support, the
  forward-mode result equals ∇f·v assembled from reverse mode's backward(),
  for random directions v; with the unit directions it recovers the whole gradient.
"""

import math
import operator
from dataclasses import dataclass
from functools import reduce
from types import SimpleNamespace
from typing import Callable, Optional

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

# Value and Dual both spell exp and tanh as methods, so one namespace runs both.
METHOD_OPS = SimpleNamespace(exp=lambda a: a.exp(), tanh=lambda a: a.tanh(), const=lambda c: c)
FLOAT_OPS = SimpleNamespace(exp=math.exp, tanh=math.tanh, const=lambda c: c)

BOUND = 1e3  # every node value stays within ±BOUND
POINTS = st.floats(-3.0, 3.0)
DIRECTIONS = st.floats(-2.0, 2.0)
CONSTANTS = st.one_of(
    st.sampled_from([-3, -2, -1, 1, 2, 3]),
    st.floats(0.25, 3.0),
    st.floats(-3.0, -0.25),
)


@dataclass(frozen=True)
class Op:
    id: str
    text: str  # how the op reads, with graph operands {a}, {b} and a constant {c}
    arity: int  # number of graph operands, 1 or 2
    apply: Callable  # apply(ops, a, b, c)
    consts: Optional[st.SearchStrategy] = None


OPS = [
    Op("add", "{a} + {b}", 2, lambda o, a, b, c: a + b),
    Op("mul", "{a} * {b}", 2, lambda o, a, b, c: a * b),
    Op("sub", "{a} - {b}", 2, lambda o, a, b, c: a - b),
    Op("neg", "-{a}", 1, lambda o, a, b, c: -a),
    Op("exp", "exp({a})", 1, lambda o, a, b, c: o.exp(a)),
    Op("tanh", "tanh({a})", 1, lambda o, a, b, c: o.tanh(a)),
    Op("add_constant", "{a} + {c}", 1, lambda o, a, b, c: a + o.const(c), CONSTANTS),
    Op("radd", "{c} + {a}", 1, lambda o, a, b, c: o.const(c) + a, CONSTANTS),
    Op("mul_constant", "{a} * {c}", 1, lambda o, a, b, c: a * o.const(c), CONSTANTS),
    Op("rmul", "{c} * {a}", 1, lambda o, a, b, c: o.const(c) * a, CONSTANTS),
    Op("sub_constant", "{a} - {c}", 1, lambda o, a, b, c: a - o.const(c), CONSTANTS),
    Op("rsub", "{c} - {a}", 1, lambda o, a, b, c: o.const(c) - a, CONSTANTS),
]
TANH = next(op for op in OPS if op.id == "tanh")


def in_range(op, a, b, c):
    """exp only below 5, and every result within ±BOUND, so nothing overflows."""
    if op.id == "exp" and a >= 5:
        return False
    return abs(op.apply(FLOAT_OPS, a, b, c)) <= BOUND


@dataclass(frozen=True)
class Graph:
    """A straight-line program over leaves x0..: every step may reuse any earlier node;
    the root is the sum of the nodes nobody consumed."""

    point: tuple
    direction: tuple
    steps: tuple  # (op, argument indices, constant)

    def __call__(self, o, *leaves):
        nodes = list(leaves)
        for op, args, c in self.steps:
            nodes.append(op.apply(o, nodes[args[0]], nodes[args[-1]], c))
        used = {i for _, args, _ in self.steps for i in args}
        return reduce(operator.add, [node for i, node in enumerate(nodes) if i not in used])

    def __repr__(self):
        names = [f"x{i}" for i in range(len(self.point))]
        lines = [f"x{i} = {x!r} (direction {v!r})" for i, (x, v) in enumerate(zip(self.point, self.direction))]
        for k, (op, args, c) in enumerate(self.steps):
            lines.append(f"n{k} = " + op.text.format(a=names[args[0]], b=names[args[-1]], c=repr(c)))
            names.append(f"n{k}")
        used = {i for _, args, _ in self.steps for i in args}
        lines.append("root = " + " + ".join(name for i, name in enumerate(names) if i not in used))
        return "Graph(\n    " + "\n    ".join(lines) + "\n)"


@st.composite
def graphs(draw, max_leaves=4, min_steps=3, max_steps=10):
    point = draw(st.lists(POINTS, min_size=1, max_size=max_leaves))
    direction = draw(st.lists(DIRECTIONS, min_size=len(point), max_size=len(point)))
    values = list(point)
    steps = []
    for _ in range(draw(st.integers(min_steps, max_steps))):
        i = draw(st.integers(0, len(values) - 1))
        j = draw(st.integers(0, len(values) - 1))
        op = draw(st.sampled_from(OPS))
        c = draw(op.consts) if op.consts is not None else None
        if not in_range(op, values[i], values[j], c):
            op, c = TANH, None
        steps.append((op, (i,) if op.arity == 1 else (i, j), c))
        values.append(op.apply(FLOAT_OPS, values[i], values[j], c))
    return Graph(tuple(point), tuple(direction), tuple(steps))


def forward_mode(solution, f, point, direction):
    """f evaluated on Dual(x_i, v_i): (value, directional derivative)."""
    out = f(METHOD_OPS, *[solution.Dual(x, v) for x, v in zip(point, direction)])
    return out.val, out.der


def reverse_mode(solution, f, point):
    """f evaluated on Value(x_i), then backward(): (value, gradient)."""
    leaves = [solution.Value(x) for x in point]
    root = f(METHOD_OPS, *leaves)
    root.backward()
    return root.data, [leaf.grad for leaf in leaves]


def dot(u, v):
    return sum(a * b for a, b in zip(u, v))


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.id)
@settings(derandomize=True, max_examples=25, deadline=None, database=None)
@given(data=st.data())
def test_each_dual_op_gives_the_exact_directional_derivative(solution, sympy_gradient, op, data):
    """op(Dual(a, da), Dual(b, db)).der == ∂op/∂a·da + ∂op/∂b·db exactly, .val == op(a, b);
    also when both operands are the same Dual."""
    same = op.arity == 2 and data.draw(st.booleans(), label="same Dual for a and b")
    two = op.arity == 2 and not same
    point = tuple(data.draw(st.lists(POINTS, min_size=1 + two, max_size=1 + two), label="point"))
    direction = tuple(data.draw(st.lists(DIRECTIONS, min_size=1 + two, max_size=1 + two), label="direction"))
    c = data.draw(op.consts, label="c") if op.consts is not None else None
    assume(in_range(op, point[0], point[-1], c))

    def f(o, *xs):
        return op.apply(o, xs[0], xs[-1], c)

    val, der = forward_mode(solution, f, point, direction)
    exact_value, exact_gradient = sympy_gradient(f, point)
    assert math.isclose(val, exact_value, rel_tol=1e-12, abs_tol=1e-12)
    assert math.isclose(der, dot(exact_gradient, direction), rel_tol=1e-9, abs_tol=1e-9)


@settings(derandomize=True, max_examples=80, deadline=None, database=None)
@given(graph=graphs())
def test_forward_mode_equals_gradient_dot_direction_from_backward(solution, graph):
    """On random graphs (+ * - exp tanh, constants on either side, shared nodes),
    Dual gives the same value as Value and der == ∇f·v with ∇f from backward()."""
    val, der = forward_mode(solution, graph, graph.point, graph.direction)
    data, gradient = reverse_mode(solution, graph, graph.point)
    assert math.isclose(val, data, rel_tol=1e-12, abs_tol=1e-12)
    scale = max(1.0, sum(abs(g * v) for g, v in zip(gradient, graph.direction)))
    assert abs(der - dot(gradient, graph.direction)) <= 1e-10 * scale


@settings(derandomize=True, max_examples=30, deadline=None, database=None)
@given(graph=graphs())
def test_n_forward_passes_along_unit_directions_recover_the_whole_gradient(solution, graph):
    """Forward mode along e_i gives ∂f/∂x_i: one pass per input, the same numbers backward() gives at once."""
    _, gradient = reverse_mode(solution, graph, graph.point)
    n = len(graph.point)
    for i in range(n):
        unit = [1.0 if k == i else 0.0 for k in range(n)]
        _, der = forward_mode(solution, graph, graph.point, unit)
        assert math.isclose(der, gradient[i], rel_tol=1e-10, abs_tol=1e-10), f"∂f/∂x{i}"


@settings(derandomize=True, max_examples=40, deadline=None, database=None)
@given(graph=graphs())
def test_random_dual_graphs_agree_with_sympy(solution, sympy_gradient, graph):
    """The directional derivative on random graphs is also sympy's exact ∇f·v."""
    val, der = forward_mode(solution, graph, graph.point, graph.direction)
    exact_value, exact_gradient = sympy_gradient(graph, graph.point)
    assert math.isclose(val, exact_value, rel_tol=1e-12, abs_tol=1e-12)
    scale = max(1.0, sum(abs(g * v) for g, v in zip(exact_gradient, graph.direction)))
    assert abs(der - dot(exact_gradient, graph.direction)) <= 1e-9 * scale


def test_dual_derivative_part_defaults_to_zero(solution):
    """Dual(x) is a constant: its der is 0.0."""
    assert solution.Dual(2.5).der == 0.0
    assert solution.Dual(2.5).val == 2.5


@pytest.mark.parametrize(
    "expression, expected_der",
    [
        (lambda d: 3.0 + d, 1.0),
        (lambda d: d + 3.0, 1.0),
        (lambda d: 3.0 * d, 3.0),
        (lambda d: d * 3.0, 3.0),
        (lambda d: 3.0 - d, -1.0),
        (lambda d: d - 3.0, 1.0),
    ],
    ids=["3 + d", "d + 3", "3 * d", "d * 3", "3 - d", "d - 3"],
)
def test_plain_numbers_on_either_side_are_constants_with_zero_derivative(solution, expression, expected_der):
    """A plain number next to Dual(2, 1) is lifted to Dual(c, 0): it contributes no derivative."""
    out = expression(solution.Dual(2.0, 1.0))
    assert isinstance(out, solution.Dual)
    assert out.der == expected_der


def test_random_dual_graphs_reuse_nodes_and_use_every_op():
    """The graph strategy really shares nodes and covers every Dual op (guards the tests above)."""
    seen_ops, graphs_with_reuse, total = set(), 0, 0

    @settings(derandomize=True, max_examples=80, deadline=None, database=None)
    @given(graph=graphs())
    def collect(graph):
        nonlocal graphs_with_reuse, total
        total += 1
        seen_ops.update(op.id for op, _, _ in graph.steps)
        uses = [i for _, args, _ in graph.steps for i in args]
        graphs_with_reuse += len(uses) != len(set(uses))

    collect()
    assert seen_ops == {op.id for op in OPS}
    assert graphs_with_reuse >= total // 3
