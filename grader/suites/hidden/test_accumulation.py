"""Hidden tests: gradients add up over several paths and over repeated backward().

A node used more than once must collect the sum of what every use sends back
(`+=`, never `=`); leaves keep collecting across backward() calls.
"""

import pytest

from grader.generated import expressions, generated
from grader.program import Graph

pytestmark = pytest.mark.category("accumulation")


def test_x_plus_x_at_the_root(engine):
    """x + x gives x a gradient of 2, not 1.

    x + x 中 x 的梯度是 2，不是 1。
    """
    g = Graph()
    x = g.value(1.3)
    g.backward(x + x)
    engine.check(g)


def test_x_plus_x_with_upstream_factor(engine):
    """(x + x)·y gives x a gradient of 2y.

    (x + x)·y 中 x 的梯度是 2y。
    """
    g = Graph()
    x, y = g.values(-0.45, 2.5)
    g.backward((x + x) * y)
    engine.check(g)


def test_x_times_x_with_upstream_factor(engine):
    """x·x gives x a gradient of 2x.

    x·x 中 x 的梯度是 2x。
    """
    g = Graph()
    x = g.value(-1.7)
    g.backward((x * x) * 0.5)
    engine.check(g)


def test_x_minus_x(engine):
    """x - x gives x a gradient of exactly 0 (+1 and -1 add up).

    x - x 中 x 的梯度恰好是 0（+1 和 -1 相加抵消）。
    """
    g = Graph()
    x, y = g.values(0.85, 1.6)
    g.backward((x - x) + x * y)
    engine.check(g)


def test_x_over_x(engine):
    """x / x gives x a gradient of 0 (1/x and -x/x² add up).

    x / x 中 x 的梯度是 0（1/x 和 -x/x² 相加抵消）。
    """
    g = Graph()
    x, y = g.values(1.9, -0.7)
    g.backward((x / x) * y + y)
    engine.check(g)


def test_diamond_of_tanh_and_exp(engine):
    """A node feeding two branches that meet again collects both branches' gradients.

    一个节点分成两条支路，最后又汇合：它要收集两条支路的梯度。
    """
    g = Graph()
    x = g.value(0.35)
    a = x * 1.5
    g.backward(a.tanh() * a.exp())
    engine.check(g)


def test_three_paths_to_a_leaf(engine):
    """x·x·x + x: the leaf collects gradient along three multiplications and one add.

    x·x·x + x：叶子节点要收集三次乘法和一次加法传来的全部梯度。
    """
    g = Graph()
    x = g.value(-1.15)
    g.backward((x * x) * x + x)
    engine.check(g)


def test_intermediate_used_three_times(engine):
    """h = x·y used three times collects all three contributions.

    h = x·y 被用了三次，三份梯度都要收集到。
    """
    g = Graph()
    x, y = g.values(0.7, -1.3)
    h = x * y
    g.backward(h * h + h.tanh())
    engine.check(g)


def test_doubling_ladder(engine):
    """A ladder where every level uses the one below twice (a + a, then a·a): each level collects both uses.

    一层层叠起来的图，每一层都把下一层用两次（先 a + a，再 a·a）：每一层都要收集两次使用的梯度。
    """
    g = Graph()
    x = g.value(0.6)
    node = x
    for _ in range(3):
        node = node + node
        node = (node * node).tanh()
    g.backward(node)
    engine.check(g)


def test_same_leaf_in_pow_and_mul(engine):
    """x ** 2 + x·x gives x a gradient of 4x.

    x ** 2 + x·x 中 x 的梯度是 4x。
    """
    g = Graph()
    x = g.value(1.45)
    g.backward(x**2 + x * x)
    engine.check(g)


def test_two_backward_calls_double_leaf_grads(engine):
    """A second backward() on a three-level graph doubles the leaves' grads.

    在三层的计算图上第二次调用 backward()，叶子节点的梯度翻倍。
    """
    g = Graph()
    x, y, z = g.values(1.2, -0.8, 0.5)
    root = ((x * y).tanh() + z).exp()
    g.backward(root)
    g.backward(root)
    engine.check(g, rule="leaf-accumulates")


def test_three_backward_calls_triple_leaf_grads(engine):
    """Three backward() calls triple the leaves' grads (x + x inside).

    调用三次 backward()，叶子节点的梯度变成三倍（图里有 x + x）。
    """
    g = Graph()
    x, y = g.values(-0.3, 1.1)
    root = ((x + x) * y).tanh() * y
    for _ in range(3):
        g.backward(root)
    engine.check(g, rule="leaf-accumulates")


def test_leaf_root_gets_one_every_call(engine):
    """A leaf used as the root gets grad 1.0 on every call, not 2.0.

    把叶子节点当作根：每次调用 backward() 后它的梯度都是 1.0，而不是 2.0。
    """
    g = Graph()
    x = g.value(2.75)
    g.backward(x)
    g.backward(x)
    engine.check(g, rule="root-grad-one")


def test_leaf_root_after_another_backward(engine):
    """backward() on a leaf sets its grad to 1.0, whatever it had collected before.

    对叶子节点调用 backward() 会把它的梯度设为 1.0，不管它之前累积了多少。
    """
    g = Graph()
    x, y = g.values(0.5, 3.5)
    g.backward(x * y)
    g.backward(x)
    engine.check(g, rule="root-grad-one")


def test_two_roots_sharing_leaves(engine):
    """backward() from two different roots adds both gradients on the shared leaves.

    从两个不同的根分别调用 backward()：共享的叶子节点上两份梯度相加。
    """
    g = Graph()
    x, y = g.values(1.4, -0.9)
    g.backward(x * y)
    g.backward((x + y).tanh())
    engine.check(g, rule="leaf-accumulates")


@generated(10, expr=expressions())
def test_random_graphs_backward_twice(engine, expr):
    """On random graphs, a second backward() doubles the leaves' grads only.

    随机计算图上第二次调用 backward()：只有叶子节点的梯度翻倍。
    """
    g = Graph()
    _, root = expr.on_values(g)
    g.backward(root)
    g.backward(root)
    engine.check(g, rule="leaf-accumulates")


@generated(8, expr=expressions(leaves=(1, 2), size=(5, 10)))
def test_random_graphs_with_heavy_reuse(engine, expr):
    """Random graphs over one or two leaves, where nodes are used many times: every use adds its share.

    只有一两个叶子节点、节点被反复使用的随机计算图：每一次使用的梯度都要加上。
    """
    g = Graph()
    _, root = expr.on_values(g)
    g.backward(root)
    engine.check(g)
