"""Hidden tests: zero_grad, and the reset of intermediate grads in backward().

zero_grad(values) sets exactly the given grads to 0.0. backward() resets every
non-leaf grad before it starts, so intermediate grads never pile up.
"""

import pytest

from grader.expression import all_nodes, pick
from grader.generated import expressions, generated, masks
from grader.program import Graph

pytestmark = pytest.mark.category("zero_grad")


def test_zero_grad_clears_the_leaves(engine):
    """zero_grad([x, y]) after backward() sets both grads to 0.0.

    backward() 之后调用 zero_grad([x, y])，两个梯度都变为 0.0。
    """
    g = Graph()
    x, y = g.values(1.6, -2.4)
    g.backward((x * y).tanh())
    g.zero_grad([x, y])
    engine.check(g)


def test_zero_grad_on_a_subset(engine):
    """zero_grad([y]) clears y only: the other grads keep their values.

    zero_grad([y]) 只清零 y：其他梯度保持原值。
    """
    g = Graph()
    x, y, z = g.values(0.3, 1.9, -1.1)
    g.backward(x * y + z)
    g.zero_grad([y])
    engine.check(g)


def test_zero_grad_clears_intermediate_nodes(engine):
    """zero_grad also clears intermediate nodes it is given.

    传给 zero_grad 的中间节点也要清零。
    """
    g = Graph()
    x, y = g.values(-0.6, 0.75)
    a = x * y
    b = a.exp()
    g.backward(b * 2.0)
    g.zero_grad([a, b])
    engine.check(g)


def test_zero_grad_between_two_backwards(engine):
    """zero_grad between two backward() calls gives the single-call gradient again.

    两次 backward() 之间调用 zero_grad：得到的梯度又和只调用一次时一样。
    """
    g = Graph()
    x, y = g.values(2.1, 0.4)
    root = (x * y).log() + y.tanh()
    g.backward(root)
    g.zero_grad([x, y])
    g.backward(root)
    engine.check(g)


def test_zero_grad_on_a_subset_then_backward(engine):
    """After zero_grad([x]), a second backward() gives x a fresh gradient and y a doubled one.

    zero_grad([x]) 之后再调用一次 backward()：x 得到新的梯度，y 的梯度翻倍。
    """
    g = Graph()
    x, y = g.values(-1.25, 0.55)
    root = (x - y).tanh() * x
    g.backward(root)
    g.zero_grad([x])
    g.backward(root)
    engine.check(g)


def test_zero_grad_before_any_backward(engine):
    """zero_grad on fresh values, then backward(), gives the plain gradient.

    先对新建的值调用 zero_grad，再调用 backward()：得到普通的梯度。
    """
    g = Graph()
    x, y = g.values(0.95, -0.15)
    root = x * y + x.exp()
    g.zero_grad([x, y])
    g.backward(root)
    engine.check(g)


def test_zero_grad_with_a_repeated_value(engine):
    """zero_grad([x, x, y]) with x listed twice still sets the grads to 0.0.

    zero_grad([x, x, y]) 中 x 出现两次，梯度仍都设为 0.0。
    """
    g = Graph()
    x, y = g.values(1.05, 2.2)
    g.backward(x * y * x)
    g.zero_grad([x, x, y])
    engine.check(g)


def test_zero_grad_on_a_leaf_root(engine):
    """A leaf root: backward(), zero_grad, backward() gives 1.0, 0.0, 1.0.

    把叶子节点当作根：backward()、zero_grad、backward() 之后的梯度依次是 1.0、0.0、1.0。
    """
    g = Graph()
    x = g.value(-3.3)
    g.backward(x)
    g.zero_grad([x])
    g.backward(x)
    engine.check(g, rule="zero-grad")


def test_second_backward_resets_intermediates(engine):
    """A second backward() on a three-level graph leaves intermediate grads unchanged.

    在三层的计算图上第二次调用 backward()，中间节点的梯度不变。
    """
    g = Graph()
    x, y, z = g.values(0.45, -1.6, 1.3)
    a = x * y
    b = a.tanh()
    root = b * z
    g.backward(root)
    g.backward(root)
    engine.check(g, rule="intermediate-reset")


def test_repeated_backward_on_a_deep_chain(engine):
    """Three backward() calls on a 12-level chain: intermediates stay, leaves triple.

    在 12 层的链上调用三次 backward()：中间节点的梯度不变，叶子节点的梯度变成三倍。
    """
    g = Graph()
    x, w = g.values(0.25, 0.9)
    node = x
    for _ in range(4):
        node = ((node * w).tanh() + x) * 0.8
    for _ in range(3):
        g.backward(node)
    engine.check(g, rule="intermediate-reset")


def test_new_root_resets_shared_intermediates(engine):
    """backward() from a new root resets an intermediate that an earlier backward() filled.

    从新的根调用 backward()，会清零之前一次 backward() 留在共享中间节点上的梯度。
    """
    g = Graph()
    x, y = g.values(0.65, 1.35)
    a = x * y
    g.backward(a.exp())
    g.backward((a * 3.0).tanh() + a)
    engine.check(g, rule="intermediate-reset")


def test_intermediate_x_plus_x_reset(engine):
    """An intermediate x + x feeding a·a is reset between two backward() calls.

    中间节点 x + x 再参与 a·a：两次 backward() 之间它要被清零。
    """
    g = Graph()
    x = g.value(0.15)
    a = x + x
    root = (a * a).tanh() * 2.0
    g.backward(root)
    g.backward(root)
    engine.check(g, rule="intermediate-reset")


@generated(10, expr=expressions(), mask=masks(4))
def test_random_zero_grad_of_leaves_between_backwards(engine, expr, mask):
    """On random graphs, zero_grad of a random subset of leaves between two backward() calls: those leaves get a fresh
    gradient, the others a doubled one.

    随机计算图上，两次 backward() 之间对随机选出的一部分叶子节点调用 zero_grad：这些叶子得到新的梯度，其余的梯度翻倍。
    """
    g = Graph()
    leaves, root = expr.on_values(g)
    g.backward(root)
    g.zero_grad(pick(mask, leaves))
    g.backward(root)
    engine.check(g)


@generated(8, expr=expressions(size=(2, 8)), mask=masks(24))
def test_random_zero_grad_of_any_nodes(engine, expr, mask):
    """On random graphs, zero_grad of any random nodes (intermediates too), then backward() twice: every grad matches
    the reference.

    随机计算图上，对随机选出的任意节点（包括中间节点）调用 zero_grad，再调用两次 backward()：每个梯度都和参考答案一致。
    """
    g = Graph()
    _, root = expr.on_values(g)
    nodes = all_nodes(g)
    g.backward(root)
    g.zero_grad(pick(mask, nodes))
    g.backward(root)
    g.backward(root)
    engine.check(g)

