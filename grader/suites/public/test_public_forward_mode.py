"""Public tests: forward mode with Dual numbers, and its agreement with reverse mode.

Forward-mode tests run Dual programs only and compare them with the reference,
whose forward mode gives the gradients of its reverse mode: a mistake in
backward() costs no forward-mode points.
"""

import pytest

from grader.program import Graph

pytestmark = pytest.mark.category("forward_mode")


def test_dual_mul(engine):
    """Dual(a, b) · Dual(c, d) has derivative a·d + b·c.

    Dual(a, b) · Dual(c, d) 的导数部分是 a·d + b·c。
    """
    g = Graph()
    g.dual(3.0, 1.0) * g.dual(-2.0, 0.5)
    g.read()
    engine.check(g)


def test_dual_minus_dual(engine):
    """Dual - Dual subtracts the derivatives: the right operand's derivative counts with a minus sign.

    Dual - Dual 的导数部分是两个导数相减：右边那个的导数带负号。
    """
    g = Graph()
    g.dual(0.5, 2.0) - g.dual(-1.0, 0.75)
    g.read()
    engine.check(g)


def test_dual_exp_and_tanh(engine):
    """exp and tanh multiply the seed derivative by their slope.

    exp 和 tanh 把传入的导数乘以它们自己的斜率。
    """
    g = Graph()
    d = g.dual(0.5, 2.0)
    d.exp()
    d.tanh()
    g.read()
    engine.check(g)


def test_dual_with_plain_numbers(engine):
    """Plain numbers on either side of + and * act as constants (derivative 0), and the results are Duals.

    在 + 和 * 任一边的普通数字都是常数（导数为 0），结果仍是 Dual。
    """
    g = Graph()
    d = g.dual(1.5, -1.0)
    (3.0 * d + 1.0) - 0.5
    2.0 + d * 0.25
    g.read()
    engine.check(g)


def test_dual_without_der_is_a_constant(engine):
    """Dual(2.0), made without a derivative, is a constant: its derivative part is 0.

    不给导数创建的 Dual(2.0) 是常数：它的导数部分是 0。
    """
    g = Graph()
    c, x = g.dual(2.0), g.dual(0.5, 1.5)
    (c * x + c).tanh()
    g.read()
    engine.check(g)


def test_dual_gives_a_partial_derivative(engine):
    """f(Dual(x, 1), Dual(y, 0)).der is ∂f/∂x, the gradient that backward() gives x.

    f(Dual(x, 1), Dual(y, 0)).der 就是 ∂f/∂x，也就是 backward() 给 x 的梯度。
    """

    def f(x, y):
        return (x * y).tanh() + x

    g = Graph()
    f(g.dual(0.5, 1.0), g.dual(2.0, 0.0))
    g.read()
    engine.check(g)
