"""Public tests: zero_grad, and the reset of intermediate grads in backward()."""

import pytest

from grader.program import Graph

pytestmark = pytest.mark.category("zero_grad")


def test_zero_grad_resets_leaves(engine):
    """zero_grad([x, y]) sets both grads back to 0.0."""
    g = Graph()
    x, y = g.values(-1.0, 2.0)
    g.backward(x * y + y)
    g.zero_grad([x, y])
    engine.check(g)


def test_zero_grad_resets_an_intermediate_node(engine):
    """zero_grad([h, x]) with h an intermediate node sets both grads to 0.0, not only the leaf's."""
    g = Graph()
    x, y = g.values(0.7, 1.2)
    h = x * y
    g.backward(h.tanh() + x)
    g.zero_grad([h, x])
    engine.check(g)


def test_zero_grad_then_backward(engine):
    """zero_grad between two backward() calls gives the single-call gradient again."""
    g = Graph()
    x, y = g.values(0.5, -0.25)
    root = (x + y).exp() * x
    g.backward(root)
    g.zero_grad([x, y])
    g.backward(root)
    engine.check(g)


def test_second_backward_resets_intermediate_grads(engine):
    """A second backward() resets intermediate grads first, so they do not pile up."""
    g = Graph()
    x, y = g.values(1.0, 0.5)
    a = x * y
    b = a.exp()
    g.backward(b * 2.0)
    g.backward(b * 2.0)
    engine.check(g, rule="intermediate-reset")
