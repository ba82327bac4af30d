"""Hidden tests: each op's local rule and the chain rule through graphs.

Ops are checked away from the root (times an upstream factor other than 1), so
a rule that ignores `out.grad` cannot pass.
"""

import pytest

from grader.generated import constants, expressions, generated, single_ops
from grader.program import Graph

pytestmark = pytest.mark.category("gradients")


# --- primitive ops -------------------------------------------------------------


def test_add_copies_upstream_gradient(engine):
    """`+` passes the upstream gradient unchanged to both inputs."""
    g = Graph()
    x, y = g.values(1.25, -0.75)
    g.backward((x + y) * -2.0)
    engine.check(g)


def test_mul_with_upstream_factor(engine):
    """`*` gives each input the other's value times the upstream gradient."""
    g = Graph()
    x, y = g.values(0.8, -2.5)
    g.backward((x * y) * 1.5)
    engine.check(g)


def test_mul_with_a_zero_input(engine):
    """`*` with one input at 0 still sends the other input's value back to it."""
    g = Graph()
    x, y = g.values(0.0, 3.0)
    g.backward((x * y) * -0.5)
    engine.check(g)


def test_pow_positive_integer_exponent(engine):
    """`x ** 3` has slope 3·x² (negative base)."""
    g = Graph()
    x = g.value(-1.3)
    g.backward((x**3) * 0.5)
    engine.check(g)


def test_pow_negative_exponents(engine):
    """`x ** -1` and `x ** -2` have slopes -x⁻² and -2·x⁻³."""
    g = Graph()
    x, y = g.values(-1.6, 0.8)
    g.backward(x**-1 * 2.0 + y**-2)
    engine.check(g)


def test_pow_fractional_exponents(engine):
    """`x ** 0.5`, `x ** 1.5` and `x ** -0.5` have slope k·x^(k-1)."""
    g = Graph()
    a, b, c = g.values(2.25, 0.64, 1.69)
    g.backward((a**0.5 + b**1.5 * 3.0 + c**-0.5) * 0.7)
    engine.check(g)


def test_exp_with_upstream_factor(engine):
    """exp's slope e^x is multiplied by the gradient from above."""
    g = Graph()
    x, y = g.values(0.7, -1.2)
    g.backward(x.exp() * y)
    engine.check(g)


def test_exp_of_an_intermediate(engine):
    """exp in the middle of a chain uses its own output as the slope."""
    g = Graph()
    x = g.value(-0.9)
    g.backward(((x * 0.5).exp() + 1.0).log())
    engine.check(g)


def test_log_with_upstream_factor(engine):
    """log's slope 1/x is multiplied by the gradient from above."""
    g = Graph()
    x = g.value(2.5)
    g.backward(x.log() * -3.0)
    engine.check(g)


def test_log_inside_a_chain(engine):
    """log of x² + 1, then tanh: the chain rule through log."""
    g = Graph()
    x = g.value(-1.1)
    g.backward((x * x + 1.0).log().tanh())
    engine.check(g)


def test_tanh_slope_uses_its_output(engine):
    """tanh's slope is 1 - t² with t the output, times the gradient from above."""
    g = Graph()
    x = g.value(0.9)
    g.backward(x.tanh() * 2.5)
    engine.check(g)


def test_tanh_of_a_product(engine):
    """tanh of x·y, scaled by z: slope 1 - t² passed into `*`."""
    g = Graph()
    x, y, z = g.values(1.1, -0.6, 3.0)
    g.backward((x * y).tanh() * z)
    engine.check(g)


def test_relu_of_positive_input(engine):
    """relu passes the upstream gradient through when its input is positive."""
    g = Graph()
    x, y = g.values(1.7, 0.4)
    g.backward((x * y).relu() * 3.0)
    engine.check(g)


def test_relu_of_negative_input(engine):
    """relu sends no gradient back when its input is negative."""
    g = Graph()
    x = g.value(-0.4)
    g.backward((x * 2.0).relu() * 3.0 + x)
    engine.check(g)


def test_relu_at_exactly_zero_leaf(engine):
    """relu'(0) = 0: a leaf at exactly 0 gets nothing through relu."""
    g = Graph()
    x = g.value(0.0)
    g.backward(x.relu() * 4.0 + x * 0.5)
    engine.check(g)


def test_relu_at_exactly_zero_intermediate(engine):
    """relu'(0) = 0 also when the 0 is computed (a - b with a = b)."""
    g = Graph()
    a, b = g.values(1.5, 1.5)
    g.backward((a - b).relu() * 2.0 + a * b)
    engine.check(g)


# --- derived ops ---------------------------------------------------------------


def test_neg(engine):
    """-x has slope -1, times the gradient from above."""
    g = Graph()
    x, y = g.values(0.6, 2.2)
    g.backward((-x) * y)
    engine.check(g)


def test_sub_of_two_values(engine):
    """x - y sends +1 to x and -1 to y, times the gradient from above."""
    g = Graph()
    x, y, z = g.values(2.0, 0.5, -1.5)
    g.backward((x - y) * z)
    engine.check(g)


def test_sub_of_a_constant(engine):
    """x - 0.5 has slope 1 for x."""
    g = Graph()
    x = g.value(1.3)
    g.backward((x - 0.5).tanh())
    engine.check(g)


def test_truediv_of_two_values(engine):
    """x / y sends 1/y to x and -x/y² to y."""
    g = Graph()
    x, y = g.values(1.8, -0.6)
    g.backward((x / y) * 0.25)
    engine.check(g)


def test_truediv_by_a_constant(engine):
    """x / 4 has slope 1/4 for x."""
    g = Graph()
    x = g.value(0.9)
    g.backward((x / 4.0).exp())
    engine.check(g)


def test_reflected_add_and_mul(engine):
    """2 + x and -3 * y (constant on the left) have slopes 1 and -3."""
    g = Graph()
    x, y = g.values(-0.35, 1.4)
    g.backward((2.0 + x) * (-3.0 * y))
    engine.check(g)


def test_reflected_sub(engine):
    """1.5 - x has slope -1 for x."""
    g = Graph()
    x, y = g.values(0.45, -2.0)
    g.backward((1.5 - x) * y)
    engine.check(g)


def test_reflected_truediv(engine):
    """3 / x has slope -3/x² for x."""
    g = Graph()
    x = g.value(1.2)
    g.backward((3.0 / x).tanh())
    engine.check(g)


# --- graphs --------------------------------------------------------------------


def test_leaf_as_root(engine):
    """backward() called on a leaf sets its grad to 1.0."""
    g = Graph()
    x = g.value(-4.2)
    g.backward(x)
    engine.check(g, rule="root-grad-one")


def test_three_level_graph(engine):
    """The chain rule through three levels of mixed ops."""
    g = Graph()
    x, y, z = g.values(0.6, -1.4, 2.0)
    a = x * y
    b = (a + z).tanh()
    g.backward(b * x - z.log())
    engine.check(g)


def test_long_chain(engine):
    """The chain rule through a chain of 40 ops."""
    g = Graph()
    x = g.value(0.3)
    node = x
    for _ in range(10):
        node = ((node * 1.1).tanh() + 0.2).exp() * 0.5
    g.backward(node)
    engine.check(g)


def test_unreached_nodes_keep_zero_grad(engine):
    """Nodes that the root does not depend on keep grad 0."""
    g = Graph()
    x, y = g.values(1.5, 2.5)
    x * y  # a node outside the root's graph
    g.backward(x.tanh() + 1.0)
    engine.check(g)


def test_distinct_intermediates_with_equal_data(engine):
    """Two different intermediate nodes with equal data are both visited."""
    g = Graph()
    x, y = g.values(2.0, 2.0)
    g.backward((x * y) * (x + y).tanh())
    engine.check(g, rule="topological-order")


def test_distinct_branches_with_equal_data(engine):
    """Two branches with equal values (tanh of equal leaves) both pass gradient on."""
    g = Graph()
    x, y = g.values(0.3, 0.3)
    g.backward(x.tanh() * y.tanh() * 2.0)
    engine.check(g, rule="topological-order")


# --- topological order ---------------------------------------------------------


def test_order_of_a_diamond(engine):
    """backward() returns a topological order of a diamond: every node of it once, root last."""
    g = Graph()
    x = g.value(0.4)
    a = x * 1.5
    a + 1.0  # not in the root's graph, so not in its order
    g.backward(a.tanh() * a.exp())
    engine.check(g, check_order=True, order_only=True, rule="topological-order")


def test_order_with_equal_data(engine):
    """The topological order keeps two distinct nodes that have equal data."""
    g = Graph()
    x, y = g.values(3.0, 3.0)
    p, q = x + y, x * 2.0
    y * y  # not in the root's graph
    g.backward(p * q)
    engine.check(g, check_order=True, order_only=True, rule="topological-order")


def test_order_of_a_long_chain(engine):
    """The topological order of a 30-op chain with a shortcut from the first leaf (and a leaf outside the chain)."""
    g = Graph()
    x = g.value(0.2)
    g.value(0.2)  # equal data, not in the root's graph
    node = x
    for _ in range(15):
        node = (node + x).tanh()
    g.backward(node)
    engine.check(g, check_order=True, order_only=True, rule="topological-order")


# --- random graphs -------------------------------------------------------------


@generated(15, expr=expressions())
def test_random_graphs(engine, expr):
    """Random graphs of every op match the reference gradients."""
    g = Graph()
    _, root = expr.on_values(g)
    g.backward(root)
    engine.check(g)


@generated(8, expr=expressions(size=(3, 10)))
def test_random_graphs_order(engine, expr):
    """backward() on random graphs returns a valid topological order of the root's graph."""
    g = Graph()
    leaves, root = expr.on_values(g)
    leaves[0] * 2.0  # not in the root's graph
    g.backward(root)
    engine.check(g, check_order=True, order_only=True, rule="topological-order")


@generated(12, case=single_ops(), factor=constants())
def test_each_op_on_random_inputs(engine, case, factor):
    """Each op's local rule (also with a constant on either side) on random inputs, times an upstream factor."""
    g = Graph()
    _, root = case.on_values(g)
    g.backward(root * factor)
    engine.check(g)
