"""Public tests: gradients add up over several paths and over repeated backward()."""

import pytest

from grader.program import Graph

pytestmark = pytest.mark.category("accumulation")


def test_x_times_x(engine):
    """x·x gives x a gradient of 2x: both uses of x add their share."""
    g = Graph()
    x = g.value(3.0)
    g.backward(x * x)
    engine.check(g)


def test_diamond(engine):
    """a = x + 1 feeds two branches that meet again: a collects both branches' gradients."""
    g = Graph()
    x = g.value(-0.2)
    a = x + 1.0
    g.backward(a.exp() + a * 2.0)
    engine.check(g)


def test_leaf_grads_accumulate_over_two_calls(engine):
    """Two backward() calls give the leaves twice the gradient."""
    g = Graph()
    x, y = g.values(0.4, 1.25)
    root = (x * y).tanh()
    g.backward(root)
    g.backward(root)
    engine.check(g, rule="leaf-accumulates")
