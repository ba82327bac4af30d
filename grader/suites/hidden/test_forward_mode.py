"""Hidden tests: forward mode with Dual numbers, and its agreement with reverse mode.

Only the Dual ops the seed defines are used: + * - exp tanh, with plain numbers
on either side of + and *, and on the right of -. Seed derivatives are mostly
not 1 and often both operands carry one, so every term of each rule matters.
The programs hold Duals only and are compared with the reference, whose forward
mode gives the gradients of its reverse mode (the kit's own tests check that):
a mistake in backward() costs no forward-mode points.
"""

import pytest

from grader.generated import dual_expressions, generated
from grader.program import Graph

pytestmark = pytest.mark.category("forward_mode")


def test_dual_add(engine):
    """Dual + Dual adds both the values and the derivatives.

    Dual + Dual 的值和导数部分都相加。
    """
    g = Graph()
    a, b = g.dual(1.5, 2.0), g.dual(-0.5, -3.25)
    a + b
    g.read()
    engine.check(g)


def test_dual_mul_both_carry_derivatives(engine):
    """Dual · Dual has derivative a·d + b·c when both operands carry a derivative.

    两个操作数都带导数时，Dual · Dual 的导数部分是 a·d + b·c。
    """
    g = Graph()
    g.dual(1.2, 0.7) * g.dual(-2.0, 1.5)
    g.read()
    engine.check(g)


def test_dual_mul_with_zero_value(engine):
    """A Dual with value 0 times another Dual: only the cross term with the nonzero value remains.

    值为 0 的 Dual 乘以另一个 Dual：只剩下和非零值相乘的那一项。
    """
    g = Graph()
    g.dual(0.0, 1.5) * g.dual(3.0, 2.0)
    g.read()
    engine.check(g)


def test_dual_with_constants_on_either_side(engine):
    """Plain numbers on either side of + and * are constants with derivative 0.

    在 + 和 * 任一边的普通数字都是常数，导数为 0。
    """
    g = Graph()
    d = g.dual(0.8, -1.75)
    d + 1.5
    -2.0 + d
    d * 3.0
    2.5 * d
    g.read()
    engine.check(g)


def test_dual_sub(engine):
    """Dual - Dual and Dual - constant subtract the derivatives.

    Dual - Dual 和 Dual - 常数：导数部分相减。
    """
    g = Graph()
    a, b = g.dual(2.5, 0.5), g.dual(1.0, -2.0)
    (a - b) - 0.75
    g.read()
    engine.check(g)


def test_dual_exp_with_seed_other_than_one(engine):
    """exp(Dual(x, v)) with v other than 1 has derivative e^x · v.

    传入的导数 v 不是 1 时，exp(Dual(x, v)) 的导数部分是 e^x · v。
    """
    g = Graph()
    g.dual(0.4, -2.5).exp()
    g.read()
    engine.check(g)


def test_dual_tanh_with_seed_other_than_one(engine):
    """tanh(Dual(x, v)) with v other than 1 has derivative (1 - t²) · v.

    传入的导数 v 不是 1 时，tanh(Dual(x, v)) 的导数部分是 (1 - t²) · v。
    """
    g = Graph()
    g.dual(0.8, 3.0).tanh()
    g.read()
    engine.check(g)


def test_dual_tanh_of_a_product(engine):
    """tanh of a product of two Duals: the chain rule in forward mode.

    两个 Dual 之积的 tanh：前向模式中的链式法则。
    """
    g = Graph()
    ((g.dual(1.1, 0.5) * g.dual(-0.4, 2.0)).tanh() * 1.5).exp()
    g.read()
    engine.check(g)


def test_dual_constant_input(engine):
    """A Dual with derivative 0 is a constant: it only scales the other's derivative.

    导数为 0 的 Dual 是常数：它只会放大或缩小另一个数的导数。
    """
    g = Graph()
    c, x = g.dual(2.0, 0.0), g.dual(-1.3, 1.0)
    (c * x + c).exp()
    g.read()
    engine.check(g)


def test_dual_square_and_double(engine):
    """d · d and d + d have derivatives 2·x·v and 2·v.

    d · d 和 d + d 的导数部分分别是 2·x·v 和 2·v。
    """
    g = Graph()
    d = g.dual(-0.9, 1.6)
    d * d
    d + d
    g.read()
    engine.check(g)


def test_dual_three_levels(engine):
    """exp(tanh(a·b) + a) · b - a: three levels of forward mode with two directions.

    exp(tanh(a·b) + a) · b - a：三层的前向模式计算，两个输入各有自己的方向。
    """
    g = Graph()
    a, b = g.dual(0.35, -1.2), g.dual(1.7, 0.6)
    ((a * b).tanh() + a).exp() * b - a
    g.read()
    engine.check(g)


def test_dual_default_der_is_zero(engine):
    """Dual(-1.5), made without a derivative, is a constant: its derivative part is 0.

    不给导数创建的 Dual(-1.5) 是常数：它的导数部分是 0。
    """
    g = Graph()
    c = g.dual(-1.5)
    (c + g.dual(0.75, -2.0)).exp() * c
    g.read()
    engine.check(g)


def test_dual_one_pass_per_input_gives_the_gradient(engine):
    """One Dual pass per input, seeded with 1 on that input, gives that input's partial derivative: together, the
    gradient backward() gives.

    每个输入各算一遍，只给这个输入导数 1：每一遍得到这个输入的偏导数，合起来就是 backward() 给出的梯度。
    """
    def f(x, y):
        return ((x * y).tanh() + x.exp()) * y

    point = (0.55, -1.05)
    g = Graph()
    for axis in ((1.0, 0.0), (0.0, 1.0)):
        f(*(g.dual(p, v) for p, v in zip(point, axis)))
    g.read()
    engine.check(g)


def test_dual_gives_the_directional_derivative(engine):
    """f(Dual(x, v)).der is the directional derivative ∇f·v (what backward() gives along x + t·v).

    f(Dual(x, v)).der 就是方向导数 ∇f·v（也就是沿 x + t·v 调用 backward() 得到的结果）。
    """
    def f(x, y, z):
        return (x * y + z.tanh()).exp() - y * 2.0

    point, direction = (0.2, -0.7, 1.4), (2.5, -1.0, 0.5)
    g = Graph()
    f(*(g.dual(p, v) for p, v in zip(point, direction)))
    g.read()
    engine.check(g)


@generated(12, expr=dual_expressions())
def test_random_dual_programs(engine, expr):
    """Random Dual programs with random seed derivatives match the reference.

    带随机导数的随机 Dual 程序：每个值和导数都和参考答案一致。
    """
    g = Graph()
    expr.on_duals(g)
    g.read()
    engine.check(g)


@generated(8, expr=dual_expressions())
def test_random_directional_derivatives(engine, expr):
    """On random functions, Dual passes along each input axis give the partial derivatives, and along v give ∇f·v.

    随机函数上：沿每个输入的坐标轴各算一遍得到偏导数，沿方向 v 算一遍得到 ∇f·v。
    """
    g = Graph()
    n = expr.n_leaves
    for axis in range(n):
        expr.on_duals(g, direction=[1.0 if i == axis else 0.0 for i in range(n)])
    expr.on_duals(g)
    g.read()
    engine.check(g)
