"""Reverse mode gradients of the reference engine are exact.

Every op, primitive (+ * ** exp log tanh relu) or derived (- / and the
reflected forms 3 + x, 3 - x, 3 * x, 3 / x), is checked twice on
Hypothesis-generated inputs:

* against an exact oracle: sympy builds the same expression from symbols,
  differentiates it and evaluates the derivative with 30 digits;
* against central differences of the function itself, evaluated with
  plain floats, so the oracle does not trust sympy either.

First each op alone (scaled by a constant, so that a rule that forgets to
multiply by out.grad is caught), then random expression DAGs over 1-4 leaves
in which nodes are reused by several consumers.

Domains are kept valid by construction: log only sees inputs above 0.1 (or the
always-valid pattern log(a*a + 1)), negative and fractional powers only see
inputs away from 0, exp only inputs below 5, relu only inputs at least 0.05
away from its kink, and every intermediate value stays within ±1000.
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

# ----------------------------------------------------------------------
# Ops. `apply(o, a, b, c)` reads the same for every backend: Python operators
# plus o.exp / o.log / o.tanh / o.relu, and o.const(c) for a plain constant.
# ----------------------------------------------------------------------

VALUE_OPS = SimpleNamespace(
    exp=lambda a: a.exp(),
    log=lambda a: a.log(),
    tanh=lambda a: a.tanh(),
    relu=lambda a: a.relu(),
    const=lambda c: c,  # a plain int/float, so that `c + a` goes through Value.__radd__
)
FLOAT_OPS = SimpleNamespace(
    exp=math.exp,
    log=math.log,
    tanh=math.tanh,
    relu=lambda a: a if a > 0 else 0.0,
    const=lambda c: c,
)

BOUND = 1e3  # every node value stays within ±BOUND
LEAVES = st.floats(-3.0, 3.0)
CONSTANTS = st.one_of(
    st.sampled_from([-3, -2, -1, 1, 2, 3]),
    st.floats(0.25, 3.0),
    st.floats(-3.0, -0.25),
)
# int, negative int, fractional, negative fractional, float that happens to be integral, 1 and 0
EXPONENTS = [2, 3, -1, -2, 0.5, 1.5, -0.5, 2.0, 1, 0]


def always(a, b, c):
    return True


def pow_domain(a, b, k):
    """x**k is real and differentiable: integral k < 1 needs x != 0, fractional k needs x > 0."""
    if float(k).is_integer():
        return k >= 1 or abs(a) > 0.1
    return a > 0.1


@dataclass(frozen=True)
class Op:
    id: str
    text: str  # how the op reads, with graph operands {a}, {b} and a constant {c}
    arity: int  # number of graph operands, 1 or 2
    apply: Callable
    valid: Callable = always  # is (a, b, c) inside the op's smooth domain?
    consts: Optional[st.SearchStrategy] = None  # where c comes from, if the op takes one


OPS = [
    # primitives
    Op("add", "{a} + {b}", 2, lambda o, a, b, c: a + b),
    Op("mul", "{a} * {b}", 2, lambda o, a, b, c: a * b),
    Op("pow", "{a} ** {c}", 1, lambda o, a, b, c: a ** o.const(c), pow_domain, st.sampled_from(EXPONENTS)),
    Op("exp", "exp({a})", 1, lambda o, a, b, c: o.exp(a), lambda a, b, c: a < 5),
    Op("log", "log({a})", 1, lambda o, a, b, c: o.log(a), lambda a, b, c: a > 0.1),
    Op("log_square_plus_one", "log({a}*{a} + 1)", 1, lambda o, a, b, c: o.log(a * a + 1)),
    Op("tanh", "tanh({a})", 1, lambda o, a, b, c: o.tanh(a)),
    Op("relu", "relu({a})", 1, lambda o, a, b, c: o.relu(a), lambda a, b, c: abs(a) > 0.05),
    # derived
    Op("neg", "-{a}", 1, lambda o, a, b, c: -a),
    Op("sub", "{a} - {b}", 2, lambda o, a, b, c: a - b),
    Op("truediv", "{a} / {b}", 2, lambda o, a, b, c: a / b, lambda a, b, c: abs(b) > 0.1),
    Op("add_constant", "{a} + {c}", 1, lambda o, a, b, c: a + o.const(c), always, CONSTANTS),
    Op("radd", "{c} + {a}", 1, lambda o, a, b, c: o.const(c) + a, always, CONSTANTS),
    Op("mul_constant", "{a} * {c}", 1, lambda o, a, b, c: a * o.const(c), always, CONSTANTS),
    Op("rmul", "{c} * {a}", 1, lambda o, a, b, c: o.const(c) * a, always, CONSTANTS),
    Op("sub_constant", "{a} - {c}", 1, lambda o, a, b, c: a - o.const(c), always, CONSTANTS),
    Op("rsub", "{c} - {a}", 1, lambda o, a, b, c: o.const(c) - a, always, CONSTANTS),
    Op("truediv_constant", "{a} / {c}", 1, lambda o, a, b, c: a / o.const(c), always, CONSTANTS),
    Op("rtruediv", "{c} / {a}", 1, lambda o, a, b, c: o.const(c) / a, lambda a, b, c: abs(a) > 0.1, CONSTANTS),
]
TANH = next(op for op in OPS if op.id == "tanh")


def pow_with(k):
    """x ** k for one fixed exponent, so that every kind of exponent is checked on its own."""
    return Op(f"pow_{k!r}", f"{{a}} ** {k!r}", 1, lambda o, a, b, c: a ** o.const(k), lambda a, b, c: pow_domain(a, b, k))


SINGLE_OPS = [op for op in OPS if op.id != "pow"] + [pow_with(k) for k in EXPONENTS]


def safe_float(op, a, b, c):
    """The op's float result if (a, b, c) is in its domain and the result is in range, else None."""
    if not op.valid(a, b, c):
        return None
    try:
        result = op.apply(FLOAT_OPS, a, b, c)
    except (ArithmeticError, ValueError):
        return None
    return result if isinstance(result, float) and abs(result) <= BOUND else None


# ----------------------------------------------------------------------
# Expression graphs
# ----------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    op: Op
    args: tuple  # indices of earlier nodes: leaves first, then earlier steps
    const: object


@dataclass(frozen=True)
class Graph:
    """A straight-line program over leaves x0.. : node k+n is step k applied to earlier nodes.

    Any earlier node may be used again, so nodes get several consumers. The root
    is the sum of every node nobody consumed, so every node reaches the root.
    """

    point: tuple  # the leaf values
    steps: tuple

    def __call__(self, o, *leaves):
        nodes = list(leaves)
        for step in self.steps:
            a, b = nodes[step.args[0]], nodes[step.args[-1]]
            nodes.append(step.op.apply(o, a, b, step.const))
        used = {i for step in self.steps for i in step.args}
        return reduce(operator.add, [node for i, node in enumerate(nodes) if i not in used])

    def __repr__(self):
        n = len(self.point)
        lines = [f"x{i} = {v!r}" for i, v in enumerate(self.point)]
        names = [f"x{i}" for i in range(n)]
        for k, step in enumerate(self.steps):
            text = step.op.text.format(a=names[step.args[0]], b=names[step.args[-1]], c=repr(step.const))
            names.append(f"n{k}")
            lines.append(f"n{k} = {text}")
        used = {i for step in self.steps for i in step.args}
        lines.append("root = " + " + ".join(name for i, name in enumerate(names) if i not in used))
        return "Graph(\n    " + "\n    ".join(lines) + "\n)"


@st.composite
def graphs(draw, ops=OPS, max_leaves=4, min_steps=3, max_steps=10):
    point = draw(st.lists(LEAVES, min_size=1, max_size=max_leaves))
    values = list(point)
    steps = []
    for _ in range(draw(st.integers(min_steps, max_steps))):
        i = draw(st.integers(0, len(values) - 1))
        j = draw(st.integers(0, len(values) - 1))
        op = draw(st.sampled_from(ops))
        c = draw(op.consts) if op.consts is not None else None
        result = safe_float(op, values[i], values[j], c)
        if result is None:  # outside the op's domain: tanh is defined everywhere
            op, c, result = TANH, None, math.tanh(values[i])
        steps.append(Step(op, (i,) if op.arity == 1 else (i, j), c))
        values.append(result)
    return Graph(tuple(point), tuple(steps))


# ----------------------------------------------------------------------
# The two oracles
# ----------------------------------------------------------------------


def central_differences(f, point):
    """(f(x + h e_i) - f(x - h e_i)) / 2h for each i, f evaluated with plain floats."""
    gradient = []
    for i, x in enumerate(point):
        h = 1e-6 * max(1.0, abs(x))
        up = list(point)
        down = list(point)
        up[i], down[i] = x + h, x - h
        gradient.append((f(FLOAT_OPS, *up) - f(FLOAT_OPS, *down)) / (2 * h))
    return gradient


def assert_gradients_exact(solution, sympy_gradient, f, point):
    """backward() on f at point gives sympy's exact gradient and agrees with central differences."""
    leaves = [solution.Value(x) for x in point]
    root = f(VALUE_OPS, *leaves)
    root.backward()
    grads = [leaf.grad for leaf in leaves]

    value, exact = sympy_gradient(f, point)
    assert math.isclose(root.data, value, rel_tol=1e-12, abs_tol=1e-12), (root.data, value)
    for i, (got, want) in enumerate(zip(grads, exact)):
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9), f"∂f/∂x{i}: backward() {got!r}, sympy {want!r}"

    scale = max(1.0, abs(value))
    for i, (got, numeric) in enumerate(zip(grads, central_differences(f, point))):
        # truncation error ~h², rounding error ~ eps·|f|/h
        tolerance = 1e-5 * max(1.0, abs(got)) + 1e-8 * scale
        assert abs(got - numeric) <= tolerance, f"∂f/∂x{i}: backward() {got!r}, central differences {numeric!r}"


# ----------------------------------------------------------------------
# Tests
# ----------------------------------------------------------------------


@pytest.mark.parametrize("op", SINGLE_OPS, ids=lambda op: op.id)
@settings(derandomize=True, max_examples=20, deadline=None, database=None)
@given(data=st.data())
def test_each_op_passes_the_exact_gradient_times_the_upstream_gradient(solution, sympy_gradient, op, data):
    """For every op and an upstream factor u, backward() of op(a, b, c) · u gives u · ∂op/∂a
    (and u · ∂op/∂b) exactly, also when both operands are the same Value (x op x)."""
    a = data.draw(LEAVES, label="a")
    same_leaf = op.arity == 2 and data.draw(st.booleans(), label="same leaf for a and b")
    b = a if same_leaf or op.arity == 1 else data.draw(LEAVES, label="b")
    c = data.draw(op.consts, label="c") if op.consts is not None else None
    upstream = data.draw(st.sampled_from([-1.5, 0.5, 2.5]), label="upstream gradient")
    assume(safe_float(op, a, b, c) is not None)

    def f(o, *xs):
        x, y = xs[0], xs[-1]
        return op.apply(o, x, y, c) * o.const(upstream)

    point = (a,) if op.arity == 1 or same_leaf else (a, b)
    assert_gradients_exact(solution, sympy_gradient, f, point)


@settings(derandomize=True, max_examples=60, deadline=None, database=None)
@given(graph=graphs())
def test_backward_on_random_expression_graphs_gives_the_exact_gradient(solution, sympy_gradient, graph):
    """Gradients through DAGs that mix every op and reuse nodes equal sympy's and central differences."""
    assert_gradients_exact(solution, sympy_gradient, graph, graph.point)


def test_random_graphs_reuse_nodes_and_use_every_op():
    """The graph strategy really produces shared subexpressions and covers every op (guards the tests above)."""
    seen_ops, graphs_with_reuse, total = set(), 0, 0

    @settings(derandomize=True, max_examples=60, deadline=None, database=None)
    @given(graph=graphs())
    def collect(graph):
        nonlocal graphs_with_reuse, total
        total += 1
        seen_ops.update(step.op.id for step in graph.steps)
        uses = [i for step in graph.steps for i in step.args]
        graphs_with_reuse += len(uses) != len(set(uses))

    collect()
    assert seen_ops == {op.id for op in OPS}
    assert graphs_with_reuse >= total // 3
