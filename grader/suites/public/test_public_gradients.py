"""Public tests: each op's local rule and the chain rule (a sample of the hidden suite)."""

import pytest

from grader.generated import expressions, generated
from grader.program import Graph

pytestmark = pytest.mark.category("gradients")


def test_mul_sends_each_input_the_other(engine):
    """`*` gives each input the other input's value times the upstream gradient.

    `*` 给每个输入的梯度是另一个输入的值乘以上游传来的梯度。
    """
    g = Graph()
    x, y = g.values(2.0, -3.0)
    g.backward((x * y) * 0.5)
    engine.check(g)


def test_tanh_with_upstream_factor(engine):
    """tanh's rule 1 - t² (t is the output) multiplies the gradient coming from above.

    tanh 的局部导数 1 - t²（t 是输出）要乘以上游传来的梯度。
    """
    g = Graph()
    x = g.value(-0.7)
    g.backward(x.tanh() * 3.0)
    engine.check(g)


def test_exp_below_the_root(engine):
    """exp's slope e^x multiplies the gradient coming from above.

    exp 的斜率 e^x 要乘以上游传来的梯度。
    """
    g = Graph()
    x, y = g.values(0.25, -0.5)
    g.backward((x + y).exp() * -1.5)
    engine.check(g)


def test_log_below_the_root(engine):
    """log's slope 1/x multiplies the gradient coming from above.

    log 的斜率 1/x 要乘以上游传来的梯度。
    """
    g = Graph()
    x, y = g.values(1.5, 0.8)
    g.backward((x * y).log() * 2.5)
    engine.check(g)


def test_relu_positive_and_negative(engine):
    """relu passes the gradient for a positive input and blocks it for a negative one.

    relu 的输入为正时把梯度传下去，为负时不传。
    """
    g = Graph()
    x, y = g.values(0.25, 1.5)
    g.backward((x - 1.0).relu() * y + (y * 2.0).relu())
    engine.check(g)


def test_relu_at_exactly_zero(engine):
    """relu of an input that is exactly 0 passes no gradient: relu'(0) = 0.

    relu 的输入恰好是 0 时不传梯度：relu'(0) = 0。
    """
    g = Graph()
    x, y = g.values(0.0, 1.5)
    g.backward((x * y).relu() * 2.0 + x)
    engine.check(g)


def test_division_power_and_log(engine):
    """The derived `/`, then `**` and log: the chain rule through all three.

    组合运算 `/`，再接 `**` 和 log：链式法则要经过这三步。
    """
    g = Graph()
    x, y = g.values(2.4, -1.5)
    g.backward(((x / y) ** 2 + 1.0).log())
    engine.check(g)


def test_reflected_sub_and_truediv(engine):
    """0.5 - x and 2 / y, a plain number on the left: their values and slopes -1 and -2/y².

    普通数字在左边的 0.5 - x 和 2 / y：它们的值，以及斜率 -1 和 -2/y²。
    """
    g = Graph()
    x, y = g.values(1.25, -0.8)
    g.backward((0.5 - x) * (2.0 / y))
    engine.check(g)


def test_backward_returns_topological_order(engine):
    """backward() returns every node of the root's graph once, inputs before the nodes made from them, root last.

    backward() 返回根节点所在计算图的拓扑序：图中每个节点恰好出现一次，输入排在由它算出的节点之前，根节点排最后。
    """
    g = Graph()
    a, b = g.values(1.5, -2.0)
    c = a * b
    a + b  # not in the root's graph, so not in its order
    g.backward((c + c.tanh()) * a)
    engine.check(g, check_order=True, order_only=True, rule="topological-order")


@generated(6, expr=expressions(size=(1, 5)))
def test_small_random_graphs(engine, expr):
    """Small random graphs of every op match the reference gradients.

    由各种运算随机组成的小计算图：每个节点的梯度都和参考答案一致。
    """
    g = Graph()
    _, root = expr.on_values(g)
    g.backward(root)
    engine.check(g)
