"""Hidden tests: each op's local rule and the chain rule through graphs.

Ops are checked away from the root (times an upstream factor other than 1), so
a rule that ignores `out.grad` cannot pass.
"""

import pytest

from grader.generated import constants, expressions, generated, single_ops
from grader.program import Graph

pytestmark = pytest.mark.category("gradients")


# --- primitive ops -------------------------------------------------------------


def test_add_copies_upstream_gradient(engine):
    """`+` passes the upstream gradient unchanged to both inputs.

    `+` 把上游传来的梯度原样交给两个输入。
    """
    g = Graph()
    x, y = g.values(1.25, -0.75)
    g.backward((x + y) * -2.0)
    engine.check(g)


def test_mul_with_upstream_factor(engine):
    """`*` gives each input the other's value times the upstream gradient.

    `*` 给每个输入的梯度是另一个输入的值乘以上游传来的梯度。
    """
    g = Graph()
    x, y = g.values(0.8, -2.5)
    g.backward((x * y) * 1.5)
    engine.check(g)


def test_mul_with_a_zero_input(engine):
    """`*` with one input at 0 still sends the other input's value back to it.

    `*` 的一个输入为 0 时，仍要把另一个输入的值传回给它。
    """
    g = Graph()
    x, y = g.values(0.0, 3.0)
    g.backward((x * y) * -0.5)
    engine.check(g)


def test_pow_positive_integer_exponent(engine):
    """`x ** 3` has slope 3·x² (negative base).

    `x ** 3` 的斜率是 3·x²（底数为负）。
    """
    g = Graph()
    x = g.value(-1.3)
    g.backward((x**3) * 0.5)
    engine.check(g)


def test_pow_negative_exponents(engine):
    """`x ** -1` and `x ** -2` have slopes -x⁻² and -2·x⁻³.

    `x ** -1` 和 `x ** -2` 的斜率分别是 -x⁻² 和 -2·x⁻³。
    """
    g = Graph()
    x, y = g.values(-1.6, 0.8)
    g.backward(x**-1 * 2.0 + y**-2)
    engine.check(g)


def test_pow_fractional_exponents(engine):
    """`x ** 0.5`, `x ** 1.5` and `x ** -0.5` have slope k·x^(k-1).

    `x ** 0.5`、`x ** 1.5` 和 `x ** -0.5` 的斜率是 k·x^(k-1)。
    """
    g = Graph()
    a, b, c = g.values(2.25, 0.64, 1.69)
    g.backward((a**0.5 + b**1.5 * 3.0 + c**-0.5) * 0.7)
    engine.check(g)


def test_exp_with_upstream_factor(engine):
    """exp's slope e^x is multiplied by the gradient from above.

    exp 的斜率 e^x 要乘以上游传来的梯度。
    """
    g = Graph()
    x, y = g.values(0.7, -1.2)
    g.backward(x.exp() * y)
    engine.check(g)


def test_exp_of_an_intermediate(engine):
    """exp in the middle of a chain uses its own output as the slope.

    在链条中间的 exp 用它自己的输出作为斜率。
    """
    g = Graph()
    x = g.value(-0.9)
    g.backward(((x * 0.5).exp() + 1.0).log())
    engine.check(g)


def test_log_with_upstream_factor(engine):
    """log's slope 1/x is multiplied by the gradient from above.

    log 的斜率 1/x 要乘以上游传来的梯度。
    """
    g = Graph()
    x = g.value(2.5)
    g.backward(x.log() * -3.0)
    engine.check(g)


def test_log_inside_a_chain(engine):
    """log of x² + 1, then tanh: the chain rule through log.

    先算 x² + 1 的 log，再算 tanh：链式法则要经过 log。
    """
    g = Graph()
    x = g.value(-1.1)
    g.backward((x * x + 1.0).log().tanh())
    engine.check(g)


def test_tanh_slope_uses_its_output(engine):
    """tanh's slope is 1 - t² with t the output, times the gradient from above.

    tanh 的斜率是 1 - t²（t 是输出），再乘以上游传来的梯度。
    """
    g = Graph()
    x = g.value(0.9)
    g.backward(x.tanh() * 2.5)
    engine.check(g)


def test_tanh_of_a_product(engine):
    """tanh of x·y, scaled by z: slope 1 - t² passed into `*`.

    x·y 的 tanh 再乘以 z：斜率 1 - t² 继续传给 `*`。
    """
    g = Graph()
    x, y, z = g.values(1.1, -0.6, 3.0)
    g.backward((x * y).tanh() * z)
    engine.check(g)


def test_relu_of_positive_input(engine):
    """relu passes the upstream gradient through when its input is positive.

    relu 的输入为正时，把上游传来的梯度原样传下去。
    """
    g = Graph()
    x, y = g.values(1.7, 0.4)
    g.backward((x * y).relu() * 3.0)
    engine.check(g)


def test_relu_of_negative_input(engine):
    """relu sends no gradient back when its input is negative.

    relu 的输入为负时，不传回任何梯度。
    """
    g = Graph()
    x = g.value(-0.4)
    g.backward((x * 2.0).relu() * 3.0 + x)
    engine.check(g)


def test_relu_at_exactly_zero_leaf(engine):
    """relu'(0) = 0: a leaf at exactly 0 gets nothing through relu.

    relu'(0) = 0：值恰好为 0 的叶子节点经过 relu 得不到梯度。
    """
    g = Graph()
    x = g.value(0.0)
    g.backward(x.relu() * 4.0 + x * 0.5)
    engine.check(g)


def test_relu_at_exactly_zero_intermediate(engine):
    """relu'(0) = 0 also when the 0 is computed (a - b with a = b).

    0 是算出来的（a - b，且 a = b）时也一样：relu'(0) = 0。
    """
    g = Graph()
    a, b = g.values(1.5, 1.5)
    g.backward((a - b).relu() * 2.0 + a * b)
    engine.check(g)


# --- derived ops ---------------------------------------------------------------


def test_neg(engine):
    """-x has slope -1, times the gradient from above.

    -x 的斜率是 -1，再乘以上游传来的梯度。
    """
    g = Graph()
    x, y = g.values(0.6, 2.2)
    g.backward((-x) * y)
    engine.check(g)


def test_sub_of_two_values(engine):
    """x - y sends +1 to x and -1 to y, times the gradient from above.

    x - y 给 x 传 +1、给 y 传 -1，再乘以上游传来的梯度。
    """
    g = Graph()
    x, y, z = g.values(2.0, 0.5, -1.5)
    g.backward((x - y) * z)
    engine.check(g)


def test_sub_of_a_constant(engine):
    """x - 0.5 has slope 1 for x.

    x - 0.5 对 x 的斜率是 1。
    """
    g = Graph()
    x = g.value(1.3)
    g.backward((x - 0.5).tanh())
    engine.check(g)


def test_truediv_of_two_values(engine):
    """x / y sends 1/y to x and -x/y² to y.

    x / y 给 x 传 1/y，给 y 传 -x/y²。
    """
    g = Graph()
    x, y = g.values(1.8, -0.6)
    g.backward((x / y) * 0.25)
    engine.check(g)


def test_truediv_by_a_constant(engine):
    """x / 4 has slope 1/4 for x.

    x / 4 对 x 的斜率是 1/4。
    """
    g = Graph()
    x = g.value(0.9)
    g.backward((x / 4.0).exp())
    engine.check(g)


def test_reflected_add_and_mul(engine):
    """2 + x and -3 * y (constant on the left) have slopes 1 and -3.

    常数在左边的 2 + x 和 -3 * y：斜率分别是 1 和 -3。
    """
    g = Graph()
    x, y = g.values(-0.35, 1.4)
    g.backward((2.0 + x) * (-3.0 * y))
    engine.check(g)


def test_reflected_sub(engine):
    """1.5 - x has slope -1 for x.

    1.5 - x 对 x 的斜率是 -1。
    """
    g = Graph()
    x, y = g.values(0.45, -2.0)
    g.backward((1.5 - x) * y)
    engine.check(g)


def test_reflected_truediv(engine):
    """3 / x has slope -3/x² for x.

    3 / x 对 x 的斜率是 -3/x²。
    """
    g = Graph()
    x = g.value(1.2)
    g.backward((3.0 / x).tanh())
    engine.check(g)


# --- graphs --------------------------------------------------------------------


def test_leaf_as_root(engine):
    """backward() called on a leaf sets its grad to 1.0.

    对叶子节点调用 backward() 会把它的梯度设为 1.0。
    """
    g = Graph()
    x = g.value(-4.2)
    g.backward(x)
    engine.check(g, rule="root-grad-one")


def test_three_level_graph(engine):
    """The chain rule through three levels of mixed ops.

    链式法则经过三层不同的运算。
    """
    g = Graph()
    x, y, z = g.values(0.6, -1.4, 2.0)
    a = x * y
    b = (a + z).tanh()
    g.backward(b * x - z.log())
    engine.check(g)


def test_long_chain(engine):
    """The chain rule through a chain of 40 ops.

    链式法则经过一条 40 个运算的长链。
    """
    g = Graph()
    x = g.value(0.3)
    node = x
    for _ in range(10):
        node = ((node * 1.1).tanh() + 0.2).exp() * 0.5
    g.backward(node)
    engine.check(g)


def test_unreached_nodes_keep_zero_grad(engine):
    """Nodes that the root does not depend on keep grad 0.

    根节点不依赖的节点，梯度保持为 0。
    """
    g = Graph()
    x, y = g.values(1.5, 2.5)
    x * y  # a node outside the root's graph
    g.backward(x.tanh() + 1.0)
    engine.check(g)


def test_distinct_intermediates_with_equal_data(engine):
    """Two different intermediate nodes with equal data are both visited.

    两个值相同但不同的中间节点都要被访问到。
    """
    g = Graph()
    x, y = g.values(2.0, 2.0)
    g.backward((x * y) * (x + y).tanh())
    engine.check(g, rule="topological-order")


def test_distinct_branches_with_equal_data(engine):
    """Two branches with equal values (tanh of equal leaves) both pass gradient on.

    两条值相同的支路（相同叶子值的 tanh）都要把梯度传下去。
    """
    g = Graph()
    x, y = g.values(0.3, 0.3)
    g.backward(x.tanh() * y.tanh() * 2.0)
    engine.check(g, rule="topological-order")


# --- topological order ---------------------------------------------------------


def test_order_of_a_diamond(engine):
    """backward() returns a topological order of a diamond: every node of it once, root last.

    backward() 返回菱形图的拓扑序：图中每个节点恰好出现一次，根节点排最后。
    """
    g = Graph()
    x = g.value(0.4)
    a = x * 1.5
    a + 1.0  # not in the root's graph, so not in its order
    g.backward(a.tanh() * a.exp())
    engine.check(g, check_order=True, order_only=True, rule="topological-order")


def test_order_with_equal_data(engine):
    """The topological order keeps two distinct nodes that have equal data.

    拓扑序里保留两个值相同但不同的节点。
    """
    g = Graph()
    x, y = g.values(3.0, 3.0)
    p, q = x + y, x * 2.0
    y * y  # not in the root's graph
    g.backward(p * q)
    engine.check(g, check_order=True, order_only=True, rule="topological-order")


def test_order_of_a_long_chain(engine):
    """The topological order of a 30-op chain with a shortcut from the first leaf (and a leaf outside the chain).

    一条 30 个运算、带有从第一个叶子节点出发的捷径的长链（外加一个不在链上的叶子节点）：它的拓扑序。
    """
    g = Graph()
    x = g.value(0.2)
    g.value(0.2)  # equal data, not in the root's graph
    node = x
    for _ in range(15):
        node = (node + x).tanh()
    g.backward(node)
    engine.check(g, check_order=True, order_only=True, rule="topological-order")


# --- random graphs -------------------------------------------------------------


@generated(15, expr=expressions())
def test_random_graphs(engine, expr):
    """Random graphs of every op match the reference gradients.

    由各种运算随机组成的计算图：每个节点的梯度都和参考答案一致。
    """
    g = Graph()
    _, root = expr.on_values(g)
    g.backward(root)
    engine.check(g)


@generated(8, expr=expressions(size=(3, 10)))
def test_random_graphs_order(engine, expr):
    """backward() on random graphs returns a valid topological order of the root's graph.

    在随机计算图上，backward() 返回根节点所在计算图的一个有效拓扑序。
    """
    g = Graph()
    leaves, root = expr.on_values(g)
    leaves[0] * 2.0  # not in the root's graph
    g.backward(root)
    engine.check(g, check_order=True, order_only=True, rule="topological-order")


@generated(12, case=single_ops(), factor=constants())
def test_each_op_on_random_inputs(engine, case, factor):
    """Each op's local rule (also with a constant on either side) on random inputs, times an upstream factor.

    每个运算的局部导数（包括一边是常数的情况），在随机输入上，再乘以上游传来的梯度。
    """
    g = Graph()
    _, root = case.on_values(g)
    g.backward(root * factor)
    engine.check(g)
