"""Public tests: gradients add up over several paths and over repeated backward()."""

import pytest

from grader.program import Graph

pytestmark = pytest.mark.category("accumulation")


def test_x_times_x(engine):
    """x·x gives x a gradient of 2x: both uses of x add their share.

    x·x 中 x 的梯度是 2x：x 被用了两次，两份梯度要加起来。
    """
    g = Graph()
    x = g.value(3.0)
    g.backward(x * x)
    engine.check(g)


def test_x_plus_x(engine):
    """x + x passes the gradient from above to x twice: x gets twice that gradient.

    x + x 把上游传来的梯度两次交给 x：x 得到的是这个梯度的两倍。
    """
    g = Graph()
    x = g.value(0.3)
    g.backward((x + x).tanh())
    engine.check(g)


def test_leaf_used_again_by_the_result_of_pow_and_exp(engine):
    """x ** 2 · x and exp(x) · x: x collects what `**` or exp sends and what the product sends.

    x ** 2 · x 和 exp(x) · x：x 既从 `**`（或 exp）收到梯度，也从乘积收到梯度，两份都要加上。
    """
    g = Graph()
    x = g.value(0.6)
    g.backward(x**2 * x + x.exp() * x)
    engine.check(g)


def test_intermediate_used_by_its_own_tanh(engine):
    """h = x·y used both directly and through h.tanh() passes on the sum of both gradients, once.

    h = x·y 既被直接使用，又经过 h.tanh() 被使用：h 把两份梯度之和传给输入，而且只传一次。
    """
    g = Graph()
    x, y = g.values(0.8, -0.5)
    h = x * y
    g.backward(h * h.tanh())
    engine.check(g)


def test_diamond(engine):
    """a = x + 1 feeds two branches that meet again: a collects both branches' gradients.

    a = x + 1 分成两条支路，最后又汇合：a 要收集两条支路的梯度。
    """
    g = Graph()
    x = g.value(-0.2)
    a = x + 1.0
    g.backward(a.exp() + a * 2.0)
    engine.check(g)


def test_leaf_grads_accumulate_over_two_calls(engine):
    """Two backward() calls give the leaves twice the gradient.

    调用两次 backward()，叶子节点的梯度是一次的两倍。
    """
    g = Graph()
    x, y = g.values(0.4, 1.25)
    root = (x * y).tanh()
    g.backward(root)
    g.backward(root)
    engine.check(g, rule="leaf-accumulates")


def test_leaf_root_gets_one_on_each_call(engine):
    """backward() on a leaf, three times: its grad is 1.0 after every call.

    对一个叶子节点调用三次 backward()：每次之后它的梯度都是 1.0。
    """
    g = Graph()
    x = g.value(-0.6)
    for _ in range(3):
        g.backward(x)
    engine.check(g, rule="root-grad-one")
