"""Public tests: zero_grad, and the reset of intermediate grads in backward()."""

import pytest

from grader.program import Graph

pytestmark = pytest.mark.category("zero_grad")


def test_zero_grad_resets_leaves(engine):
    """zero_grad([x, y]) sets both grads back to 0.0.

    zero_grad([x, y]) 把两个梯度都重新设为 0.0。
    """
    g = Graph()
    x, y = g.values(-1.0, 2.0)
    g.backward(x * y + y)
    g.zero_grad([x, y])
    engine.check(g)


def test_zero_grad_resets_an_intermediate_node(engine):
    """zero_grad([h, x]) with h an intermediate node sets both grads to 0.0, not only the leaf's.

    zero_grad([h, x]) 中 h 是中间节点：两个梯度都要设为 0.0，不只是叶子节点的。
    """
    g = Graph()
    x, y = g.values(0.7, 1.2)
    h = x * y
    g.backward(h.tanh() + x)
    g.zero_grad([h, x])
    engine.check(g)


def test_zero_grad_then_backward(engine):
    """zero_grad between two backward() calls gives the single-call gradient again.

    两次 backward() 之间调用 zero_grad：得到的梯度又和只调用一次时一样。
    """
    g = Graph()
    x, y = g.values(0.5, -0.25)
    root = (x + y).exp() * x
    g.backward(root)
    g.zero_grad([x, y])
    g.backward(root)
    engine.check(g)


def test_second_backward_resets_intermediate_grads(engine):
    """A second backward() resets intermediate grads first, so they do not pile up.

    第二次 backward() 先把中间节点的梯度清零，所以它们不会越积越多。
    """
    g = Graph()
    x, y = g.values(1.0, 0.5)
    a = x * y
    b = a.exp()
    g.backward(b * 2.0)
    g.backward(b * 2.0)
    engine.check(g, rule="intermediate-reset")
