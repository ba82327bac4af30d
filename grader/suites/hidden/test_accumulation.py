"""Hidden tests: gradients add up over several paths and over repeated backward().

A node used more than once must collect the sum of what every use sends back
(`+=`, never `=`); leaves keep collecting across backward() calls.
"""

import pytest

from grader.generated import expressions, generated
from grader.program import Graph

pytestmark = pytest.mark.category("accumulation")


def test_x_plus_x_at_the_root(engine):
    """x + x gives x a gradient of 2, not 1."""
    g = Graph()
    x = g.value(1.3)
    g.backward(x + x)
    engine.check(g)


def test_x_plus_x_with_upstream_factor(engine):
    """(x + x)·y gives x a gradient of 2y."""
    g = Graph()
    x, y = g.values(-0.45, 2.5)
    g.backward((x + x) * y)
    engine.check(g)


def test_x_times_x_with_upstream_factor(engine):
    """x·x gives x a gradient of 2x."""
    g = Graph()
    x = g.value(-1.7)
    g.backward((x * x) * 0.5)
    engine.check(g)


def test_x_minus_x(engine):
    """x - x gives x a gradient of exactly 0 (+1 and -1 add up)."""
    g = Graph()
    x, y = g.values(0.85, 1.6)
    g.backward((x - x) + x * y)
    engine.check(g)


def test_x_over_x(engine):
    """x / x gives x a gradient of 0 (1/x and -x/x² add up)."""
    g = Graph()
    x, y = g.values(1.9, -0.7)
    g.backward((x / x) * y + y)
    engine.check(g)


def test_diamond_of_tanh_and_exp(engine):
    """A node feeding two branches that meet again collects both branches' gradients."""
    g = Graph()
    x = g.value(0.35)
    a = x * 1.5
    g.backward(a.tanh() * a.exp())
    engine.check(g)


def test_three_paths_to_a_leaf(engine):
    """x·x·x + x: the leaf collects gradient along three multiplications and one add."""
    g = Graph()
    x = g.value(-1.15)
    g.backward((x * x) * x + x)
    engine.check(g)


def test_intermediate_used_three_times(engine):
    """h = x·y used three times collects all three contributions."""
    g = Graph()
    x, y = g.values(0.7, -1.3)
    h = x * y
    g.backward(h * h + h.tanh())
    engine.check(g)


def test_doubling_ladder(engine):
    """A ladder where every level uses the one below twice (a + a, then a·a): each level collects both uses."""
    g = Graph()
    x = g.value(0.6)
    node = x
    for _ in range(3):
        node = node + node
        node = (node * node).tanh()
    g.backward(node)
    engine.check(g)


def test_same_leaf_in_pow_and_mul(engine):
    """x ** 2 + x·x gives x a gradient of 4x."""
    g = Graph()
    x = g.value(1.45)
    g.backward(x**2 + x * x)
    engine.check(g)


def test_two_backward_calls_double_leaf_grads(engine):
    """A second backward() on a three-level graph doubles the leaves' grads."""
    g = Graph()
    x, y, z = g.values(1.2, -0.8, 0.5)
    root = ((x * y).tanh() + z).exp()
    g.backward(root)
    g.backward(root)
    engine.check(g, rule="leaf-accumulates")


def test_three_backward_calls_triple_leaf_grads(engine):
    """Three backward() calls triple the leaves' grads (x + x inside)."""
    g = Graph()
    x, y = g.values(-0.3, 1.1)
    root = ((x + x) * y).tanh() * y
    for _ in range(3):
        g.backward(root)
    engine.check(g, rule="leaf-accumulates")


def test_leaf_root_gets_one_every_call(engine):
    """A leaf used as the root gets grad 1.0 on every call, not 2.0."""
    g = Graph()
    x = g.value(2.75)
    g.backward(x)
    g.backward(x)
    engine.check(g, rule="root-grad-one")


def test_leaf_root_after_another_backward(engine):
    """backward() on a leaf sets its grad to 1.0, whatever it had collected before."""
    g = Graph()
    x, y = g.values(0.5, 3.5)
    g.backward(x * y)
    g.backward(x)
    engine.check(g, rule="root-grad-one")


def test_two_roots_sharing_leaves(engine):
    """backward() from two different roots adds both gradients on the shared leaves."""
    g = Graph()
    x, y = g.values(1.4, -0.9)
    g.backward(x * y)
    g.backward((x + y).tanh())
    engine.check(g, rule="leaf-accumulates")


@generated(10, expr=expressions())
def test_random_graphs_backward_twice(engine, expr):
    """On random graphs, a second backward() doubles the leaves' grads only."""
    g = Graph()
    _, root = expr.on_values(g)
    g.backward(root)
    g.backward(root)
    engine.check(g, rule="leaf-accumulates")


@generated(8, expr=expressions(leaves=(1, 2), size=(5, 10)))
def test_random_graphs_with_heavy_reuse(engine, expr):
    """Random graphs over one or two leaves, where nodes are used many times: every use adds its share."""
    g = Graph()
    _, root = expr.on_values(g)
    g.backward(root)
    engine.check(g)
