"""Hypothesis strategies that generate random graph recipes (an authoring tool of the kit).

Grading never runs these: `python -m authoring` (authoring/freeze.py) draws the
examples of every @generated suite test once and commits them as data; the
suites read them back as `grader.expression.Expression` recipes. Each strategy
here has the name and arguments of the matching `grader.generated` spec.

Every recipe stays inside the domain where any faithful implementation gives the
same numbers as the reference within the comparison tolerance: `log` only of
inputs >= 0.1, no division by (or negative power of) anything smaller than 0.25
in size, fractional powers only of positive inputs, `exp` only of inputs <= 3.9,
`relu` only of exactly 0 or of inputs at least 1e-6 away from 0, and every
node's value (<= 50 in size, sums at the root <= 500) and gradient (<= 1e4)
bounded. An operation that would leave the domain is replaced by `tanh` of its
first node operand, so generation seldom has to retry (only when the bounds on
the root or the gradients fail). The forward values are
computed here the way the reference builds the derived ops (`a - b` is
`a + b * -1.0`, `a / b` is `a * b ** -1`), and the gradients by a small
reverse pass of its own, independent of the reference.
"""

import functools
import math

from hypothesis import assume
from hypothesis import strategies as st

from grader.exercise import EXERCISE, REVERSE_VARIABLES
from grader.expression import Const, Expression, Ref
from grader.formula import Formula

VALUE_OPS = EXERCISE.names()
DUAL_OPS = EXERCISE.names(dual=True)
REFLECTED = {"value": EXERCISE.reflected(), "dual": EXERCISE.reflected(dual=True)}
CONSTANTS = (2.0, -1.5, 0.5, 3.0, -0.75, 1.25)
SPECIAL_LEAVES = (0.5, 0.0, 1.0, -1.0, 2.0, -2.0)

MAX_DATA = 50.0
MAX_ROOT = 500.0
MAX_GRAD = 1e4
PLUS, TIMES = EXERCISE.spelled("a + b"), EXERCISE.spelled("a * b")
# An op that would leave its domain (the table's) is replaced by this one, whose domain is everything.
SAFE_OP = next(name for name in EXERCISE.unary()
               if EXERCISE.op(name).primitive and EXERCISE.op(name).dual and not EXERCISE.op(name).domain)


# ---------------------------------------------------------------------------
# Forward values and local derivatives on plain floats (None: outside the domain),
# from the exercise's table: primitives by their formulas, derived ops by their
# recipes, as the reference builds them.
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _formula(text, variables):
    return Formula(text, variables)


def _primitive_value(name, a, b):
    op = EXERCISE.op(name)
    return _formula(op.value, ("a", "b", "x", "k"))({"a": a, "b": b, "x": a, "k": b})


def _recipe_value(node, a, b):
    if node.kind == "operand":
        return a if node.name == "a" else b
    if node.kind == "number":
        return float(node.name)
    if node.kind == "lift":
        return _recipe_value(node.children[0], a, b)
    args = [_recipe_value(child, a, b) for child in node.children] + [None]
    return _plain_value(node.name, args[0], args[1])


def _plain_value(name, a, b=None):
    recipe = EXERCISE.op(name).recipe()
    return _primitive_value(name, a, b) if recipe is None else _recipe_value(recipe, a, b)


def _value(op, a, b=None):
    entry = EXERCISE.op(op)
    try:
        if not entry.in_domain(a=a, b=b if b is not None else 0.0, x=a, k=b if b is not None else 0.0):
            return None
        result = _plain_value(op, a, b)
    except (OverflowError, ZeroDivisionError, ValueError):
        return None
    if isinstance(result, complex) or not math.isfinite(result) or abs(result) > MAX_DATA:
        return None
    return result


def _partials(name, a, b, out):
    """(d out / d a, d out / d b) of a primitive, from its local rule with an upstream 1.0."""
    env = {"a": a, "b": b if b is not None else 0.0, "x": a, "t": out, "g": 1.0, "k": b if b is not None else 0.0}
    sent = [_formula(text, REVERSE_VARIABLES)(env) for text in EXERCISE.op(name).grad]
    return (sent + [0.0, 0.0])[:2]


def _recipe_derivatives(node, a, b):
    """(value, d/da, d/db) of a recipe node, by the chain rule through its primitives."""
    if node.kind == "operand":
        return (a, 1.0, 0.0) if node.name == "a" else (b, 0.0, 1.0)
    if node.kind == "number":
        return float(node.name), 0.0, 0.0
    if node.kind == "lift":
        return _recipe_derivatives(node.children[0], a, b)
    inputs = [_recipe_derivatives(child, a, b) for child in node.children]
    values = [value for value, _, _ in inputs] + [None]
    out = _plain_value(node.name, values[0], values[1])
    if EXERCISE.op(node.name).recipe() is not None:  # a derived op inside a recipe
        inner = _recipe_derivatives(EXERCISE.op(node.name).recipe(), values[0], values[1])
        partials = inner[1], inner[2]
    else:
        partials = _partials(node.name, values[0], values[1], out)
    da = sum(p * d for p, (_, d, _) in zip(partials, inputs))
    db = sum(p * d for p, (_, _, d) in zip(partials, inputs))
    return out, da, db


def _local_derivatives(op, a, b, out):
    """d out / d a and d out / d b."""
    recipe = EXERCISE.op(op).recipe()
    if recipe is None:
        return _partials(op, a, b, out)
    _, da, db = _recipe_derivatives(recipe, a, b if b is not None else 0.0)
    return da, db


def _reverse(steps, data):
    grads = [0.0] * len(data)
    grads[-1] = 1.0
    first = len(data) - len(steps)
    for position in reversed(range(len(steps))):
        op, operands = steps[position]
        values = [data[x.index] if isinstance(x, Ref) else x.value for x in operands] + [None]
        local = _local_derivatives(op, values[0], values[1], data[first + position])
        for operand, derivative in zip(operands, local):
            if isinstance(operand, Ref):
                grads[operand.index] += derivative * grads[first + position]
    return grads


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _integers(low, high):
    # Strategies are cached: building and validating a fresh one for every draw
    # costs more than the draw itself.
    return st.integers(low, high)


@functools.lru_cache(maxsize=None)
def _sampled(choices):
    return st.sampled_from(choices)


def constants():
    """A constant operand (never 0, never 1)."""
    return _sampled(CONSTANTS)


# A leaf value: often a special one (0, ±1, ...), else a multiple of 0.01 in [-3, 3].
_LEAF_DATA = st.one_of(st.sampled_from(SPECIAL_LEAVES), st.integers(-300, 300).map(lambda i: i / 100))
# A Dual seed derivative: mostly not 1, sometimes 0.
_SEED_DERIVATIVES = st.one_of(st.sampled_from((2.5, -1.0, 0.5, 0.0, 1.0)), st.integers(-300, 300).map(lambda i: i / 100))
_SHAPES = ("node op node", "node op itself", "node op constant")
_REFLECTED_SHAPES = _SHAPES + ("constant op node",)


@functools.lru_cache(maxsize=None)
def _forms(ops, kind):
    """Every (op, shape) pair, so that one draw picks both (draws are what generation
    costs). Each op gets the same weight, shared among its shapes."""
    forms = []
    for op in ops:
        if EXERCISE.op(op).arity == 1 or EXERCISE.op(op).exponents:
            forms.extend([(op, "unary")] * 12)
        else:
            shapes = _REFLECTED_SHAPES if op in REFLECTED[kind] else _SHAPES
            forms.extend((op, shape) for shape in shapes * (12 // len(shapes)))
    return st.sampled_from(forms)


@st.composite
def expressions(draw, ops=VALUE_OPS, leaves=(1, 4), size=(1, 8), kind=None):
    """A random expression DAG over 1-4 leaves that reuses subexpressions.

    `ops` picks the operations (VALUE_OPS or DUAL_OPS; an op listed twice is drawn
    twice as often); `kind` ("value" or "dual", by default "dual" exactly when ops
    is DUAL_OPS) picks which constants may stand on the left. Nodes that nothing
    else uses are summed into the root, so every node takes part in the gradient."""
    ops = tuple(ops)
    kind = kind or ("dual" if ops == DUAL_OPS else "value")
    forms = _forms(ops, kind)
    n_leaves = draw(_integers(*leaves))
    point = tuple(draw(_LEAF_DATA) for _ in range(n_leaves))
    direction = tuple(draw(_SEED_DERIVATIVES) for _ in range(n_leaves))
    data = list(point)
    steps = []
    for _ in range(draw(_integers(*size))):
        op, shape = draw(forms)
        # About half the time the newest node (deep graphs), else an older one
        # (shared subexpressions).
        newest = len(data) - 1
        a = newest - max(0, draw(_integers(-newest, newest)))
        entry = EXERCISE.op(op)
        if entry.arity == 1 and entry.domain and not entry.in_domain(x=-1.0):
            # An op undefined for negative inputs (log): prefer an input in its domain, newest first.
            inside = [i for i in reversed(range(len(data))) if entry.in_domain(x=data[i])]
            operands = (Ref(inside[min(newest - a, len(inside) - 1)] if inside else a),)
        elif entry.exponents:
            operands = (Ref(a), Const(draw(_sampled(entry.exponents))))
        elif shape == "unary":
            operands = (Ref(a),)
        elif shape == "node op node":
            operands = (Ref(a), Ref(draw(_integers(0, newest))))
        elif shape == "node op itself":
            operands = (Ref(a), Ref(a))
        elif shape == "node op constant":
            operands = (Ref(a), Const(draw(constants())))
        else:
            operands = (Const(draw(constants())), Ref(a))
        values = [data[x.index] if isinstance(x, Ref) else x.value for x in operands]
        result = _value(op, *values)
        if result is None:  # outside the domain: SAFE_OP is defined everywhere
            op, operands, result = SAFE_OP, (Ref(a),), _plain_value(SAFE_OP, data[a])
        steps.append((op, operands))
        data.append(result)
    # Sum every unused intermediate node into the root.
    used = {x.index for _, operands in steps for x in operands if isinstance(x, Ref)}
    dangling = [i for i in range(n_leaves, len(data) - 1) if i not in used]
    for i in dangling:
        steps.append((PLUS, (Ref(len(data) - 1), Ref(i))))
        data.append(data[-1] + data[i])
    assume(abs(data[-1]) <= MAX_ROOT)
    steps = tuple(steps)
    grads = _reverse(steps, data)
    assume(all(math.isfinite(g) and abs(g) <= MAX_GRAD for g in grads))
    return Expression(point, steps, direction)


def dual_expressions(leaves=(1, 4), size=(2, 8)):
    """A random expression over the Dual ops the seed defines, with a seed direction.

    `*` is drawn twice as often as the others: its two cross terms are where
    forward mode most often goes wrong."""
    return expressions(ops=(TIMES,) + DUAL_OPS, leaves=leaves, size=size, kind="dual")


def masks(bits=20):
    """A random bit mask of `bits` bits (a random subset, see grader.expression.pick); one draw."""
    return _integers(0, 2**bits - 1)


def single_ops(ops=VALUE_OPS):
    """One op (plain, with itself, with a constant on either side) over two leaves."""
    return expressions(ops=ops, leaves=(2, 2), size=(1, 1))


BY_NAME = {
    "expressions": expressions,
    "dual_expressions": dual_expressions,
    "single_ops": single_ops,
    "constants": constants,
    "masks": masks,
}


def strategy_for(spec):
    """The Hypothesis strategy of a grader.generated.Spec."""
    args = {name: tuple(value) if isinstance(value, list) else value for name, value in spec.args.items()}
    return BY_NAME[spec.strategy](**args)
