"""Public tests: forward mode with Dual numbers, and its agreement with reverse mode."""

import pytest

from grader.program import Graph

pytestmark = pytest.mark.category("forward_mode")


def test_dual_mul(engine):
    """Dual(a, b) · Dual(c, d) has derivative a·d + b·c."""
    g = Graph()
    g.dual(3.0, 1.0) * g.dual(-2.0, 0.5)
    g.read()
    engine.check(g)


def test_dual_exp_and_tanh(engine):
    """exp and tanh multiply the seed derivative by their slope."""
    g = Graph()
    d = g.dual(0.5, 2.0)
    d.exp()
    d.tanh()
    g.read()
    engine.check(g)


def test_dual_with_plain_numbers(engine):
    """Plain numbers on either side of + and * act as constants (derivative 0)."""
    g = Graph()
    d = g.dual(1.5, -1.0)
    (3.0 * d + 1.0) - 0.5
    g.read()
    engine.check(g)


def test_dual_agrees_with_backward(engine):
    """f(Dual(x, 1), Dual(y, 0)).der equals ∂f/∂x from backward()."""

    def f(x, y):
        return (x * y).tanh() + x

    g = Graph()
    x, y = g.values(0.5, 2.0)
    g.backward(f(x, y))
    f(g.dual(0.5, 1.0), g.dual(2.0, 0.0))
    g.read()
    engine.check(g)
