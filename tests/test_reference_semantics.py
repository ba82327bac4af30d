"""The rules of Value.backward() and zero_grad(), one behaviour per test.

Gradients accumulate (+=) at every node used more than once; leaf gradients
also accumulate across backward() calls, intermediate gradients do not; the
root starts from 1.0; backward() returns the topological order; relu'(0) = 0;
nothing is recursive; bad input fails early with a message naming the value.
"""

import gc
import math
import sys

import pytest


def reachable_nodes(root):
    """{id: node} for every node reachable from root through _parents, found without backward()."""
    seen, stack = {}, [root]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen[id(node)] = node
            stack.extend(node._parents)
    return seen


# ----------------------------------------------------------------------
# Accumulation: a node used several times sums the gradients of all its uses
# ----------------------------------------------------------------------


def test_a_value_multiplied_by_itself_gets_the_gradient_of_both_factors(solution):
    """d(x*x)/dx = 2x: both operands of the product are x, and each adds its share."""
    x = solution.Value(3.0)
    (x * x).backward()
    assert x.grad == 6.0


def test_a_value_added_to_itself_gets_gradient_two(solution):
    """d(x+x)/dx = 2: both operands of the sum are x."""
    x = solution.Value(3.0)
    (x + x).backward()
    assert x.grad == 2.0


def test_a_diamond_sums_the_gradients_of_both_branches(solution):
    """x feeds a = x*y and b = x+y, and z = a*b: dz/dx = y·b + a·1 along the two branches."""
    x, y = solution.Value(2.0), solution.Value(5.0)
    a = x * y  # 10
    b = x + y  # 7
    z = a * b
    z.backward()
    assert x.grad == 5.0 * 7.0 + 10.0 * 1.0
    assert y.grad == 2.0 * 7.0 + 10.0 * 1.0
    assert a.grad == 7.0
    assert b.grad == 10.0


def test_an_intermediate_node_reached_by_several_paths_collects_all_of_them(solution):
    """h = x*x has three consumers; h.grad is the sum of the three, and only then passed on to x."""
    x = solution.Value(1.5)
    h = x * x
    z = h.tanh() + h * 4.0 + h.exp()
    z.backward()
    dz_dh = (1 - math.tanh(2.25) ** 2) + 4.0 + math.exp(2.25)
    assert math.isclose(h.grad, dz_dh, rel_tol=1e-12)
    assert math.isclose(x.grad, dz_dh * 2 * 1.5, rel_tol=1e-12)


def test_two_distinct_nodes_with_equal_data_both_pass_their_gradient(solution):
    """a = x+1 and b = x+1 are two nodes with equal data: z = a*b gives dz/dx = a + b = 2(x+1)."""
    x = solution.Value(2.0)
    a = x + 1.0
    b = x + 1.0
    (a * b).backward()
    assert x.grad == 6.0
    assert a.grad == 3.0 and b.grad == 3.0


def test_calling_backward_twice_doubles_the_leaf_gradients(solution):
    """Leaf gradients accumulate across backward() calls, like PyTorch: two calls, twice the gradient."""
    x, y = solution.Value(2.0), solution.Value(-3.0)
    z = (x * y + x).tanh()
    z.backward()
    once = (x.grad, y.grad)
    z.backward()
    assert (x.grad, y.grad) == (2 * once[0], 2 * once[1])
    assert once[0] != 0.0 and once[1] != 0.0


# ----------------------------------------------------------------------
# What backward() resets and sets
# ----------------------------------------------------------------------


def test_intermediate_gradients_are_reset_on_every_call(solution):
    """In x -> a -> b -> c -> z, a second backward() leaves a, b, c exactly as after the first
    (reset, then recomputed), while the leaf x doubles."""
    x = solution.Value(0.5)
    a = x * 3.0
    b = a.tanh()
    c = b * b
    z = c + a
    z.backward()
    first = (a.grad, b.grad, c.grad, z.grad, x.grad)
    z.backward()
    assert (a.grad, b.grad, c.grad, z.grad) == first[:4]
    assert x.grad == 2 * first[4]


def test_backward_from_a_new_root_resets_gradients_left_by_an_earlier_root(solution):
    """Gradients left on intermediate nodes by an earlier backward() of another root do not leak in."""
    x = solution.Value(0.5)
    a = x * x
    b = a * 3.0
    b.backward()  # leaves a.grad == 3.0
    c = a + 1.0
    c.backward()
    assert a.grad == 1.0


def test_the_root_gradient_is_one_after_backward(solution):
    """∂z/∂z = 1: backward() sets the root's gradient to 1.0, on every call."""
    x = solution.Value(2.0)
    z = x * x
    z.backward()
    assert z.grad == 1.0
    z.backward()
    assert z.grad == 1.0


def test_a_leaf_used_as_root_gets_gradient_one_on_every_call(solution):
    """x.backward() on a lone leaf sets x.grad = 1.0 (set, not added), however often it is called."""
    x = solution.Value(4.0)
    x.grad = 5.0
    x.backward()
    assert x.grad == 1.0
    x.backward()
    assert x.grad == 1.0


# ----------------------------------------------------------------------
# zero_grad
# ----------------------------------------------------------------------


def test_zero_grad_sets_every_given_gradient_to_zero(solution):
    """zero_grad(values) sets .grad = 0.0 on each given value and on nothing else."""
    x, y, other = solution.Value(1.0), solution.Value(2.0), solution.Value(3.0)
    x.grad, y.grad, other.grad = 4.0, -7.5, 9.0
    solution.zero_grad([x, y])
    assert x.grad == 0.0 and y.grad == 0.0
    assert other.grad == 9.0


def test_backward_after_zero_grad_gives_fresh_gradients(solution):
    """zero_grad between two backward() calls makes the second call give the plain gradient again."""
    x, y = solution.Value(2.0), solution.Value(-3.0)
    z = x * y + y.exp()
    z.backward()
    first = (x.grad, y.grad)
    solution.zero_grad([x, y])
    z.backward()
    assert (x.grad, y.grad) == first


# ----------------------------------------------------------------------
# The topological order returned by backward()
# ----------------------------------------------------------------------


def build_graph_with_shared_and_equal_nodes(solution):
    """Leaves x, y; p and q are distinct nodes with equal data (both x+y); s has two consumers;
    x is used at two depths; the + 1.0 adds a constant leaf whose data equals x's."""
    x, y = solution.Value(1.0), solution.Value(2.0)
    p = x + y
    q = x + y
    s = p * q
    t = s.tanh()
    w = s * t
    u = w + x
    root = u + 1.0
    return root, {"x": x, "y": y, "p": p, "q": q, "s": s, "t": t, "w": w, "u": u, "root": root}


def test_backward_returns_the_topological_order_as_a_list(solution):
    root, _ = build_graph_with_shared_and_equal_nodes(solution)
    order = root.backward()
    assert isinstance(order, list)
    assert all(isinstance(node, solution.Value) for node in order)


def test_topological_order_holds_every_reachable_node_exactly_once(solution):
    """Every node reachable from the root, including the constant leaf `+ 1.0` creates, once each."""
    root, named = build_graph_with_shared_and_equal_nodes(solution)
    order = root.backward()
    reachable = reachable_nodes(root)
    assert len(reachable) == len(named) + 1  # the named nodes and the constant 1.0
    assert len(order) == len({id(node) for node in order}), "a node appears twice"
    assert {id(node) for node in order} == set(reachable)
    for name, node in named.items():
        assert any(n is node for n in order), f"{name} is missing"


def test_topological_order_puts_every_input_before_its_consumers(solution):
    root, _ = build_graph_with_shared_and_equal_nodes(solution)
    order = root.backward()
    position = {id(node): i for i, node in enumerate(order)}
    for node in order:
        for parent in node._parents:
            assert position[id(parent)] < position[id(node)]


def test_topological_order_ends_with_the_root(solution):
    root, _ = build_graph_with_shared_and_equal_nodes(solution)
    order = root.backward()
    assert order[-1] is root


def test_two_distinct_nodes_with_equal_data_are_both_in_the_order(solution):
    """Nodes are told apart by identity, not by value: p and q both equal 3.0 and both appear."""
    root, named = build_graph_with_shared_and_equal_nodes(solution)
    order = root.backward()
    assert named["p"].data == named["q"].data
    assert any(n is named["p"] for n in order)
    assert any(n is named["q"] for n in order)


def test_a_lone_leaf_has_itself_as_topological_order(solution):
    x = solution.Value(1.0)
    order = x.backward()
    assert len(order) == 1 and order[0] is x


# ----------------------------------------------------------------------
# Single-op special cases
# ----------------------------------------------------------------------


@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_relu_at_exactly_zero_passes_no_gradient(solution, zero):
    """relu'(0) = 0: at the kink relu passes nothing back."""
    x = solution.Value(zero)
    y = x.relu()
    y.backward()
    assert y.data == 0.0
    assert x.grad == 0.0


def test_tanh_gradient_is_one_minus_the_output_squared(solution):
    x = solution.Value(0.7)
    y = x.tanh()
    y.backward()
    assert x.grad == pytest.approx(1 - math.tanh(0.7) ** 2, rel=1e-15)


# ----------------------------------------------------------------------
# No recursion
# ----------------------------------------------------------------------


def test_backward_through_a_million_op_chain_needs_no_recursion(solution):
    """y = x + x + ... + x (1,000,000 additions) backpropagates: dy/dx = 1,000,001.

    The default recursion limit (1000) stays in place, so a recursive topological
    sort would fail. The garbage collector is paused while the chain is built,
    purely for speed (every node sits in a reference cycle with its closure).
    """
    assert sys.getrecursionlimit() <= 10_000
    gc.disable()
    try:
        x = solution.Value(0.5)
        y = x
        for _ in range(1_000_000):
            y = y + x
        order = y.backward()
        assert x.grad == 1_000_001.0
        assert len(order) == 1_000_001
        assert order[0] is x and order[-1] is y
        del y, order
    finally:
        gc.enable()
        gc.collect()


# ----------------------------------------------------------------------
# Clear errors, naming the offending value
# ----------------------------------------------------------------------


def test_a_value_of_a_non_number_is_a_type_error_naming_it(solution):
    with pytest.raises(TypeError) as error:
        solution.Value("abc")
    assert "'abc'" in str(error.value)


def test_a_value_cannot_wrap_another_value(solution):
    inner = solution.Value(1.0)
    with pytest.raises(TypeError) as error:
        solution.Value(inner)
    assert repr(inner) in str(error.value)


def test_a_value_exponent_is_a_type_error_naming_it(solution):
    """** takes only a constant int/float exponent; a Value exponent is refused when the op is built."""
    x, k = solution.Value(2.0), solution.Value(3.0)
    with pytest.raises(TypeError) as error:
        x**k
    assert repr(k) in str(error.value)


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_log_of_a_non_positive_value_is_a_value_error_naming_it(solution, bad):
    with pytest.raises(ValueError) as error:
        solution.Value(bad).log()
    assert repr(bad) in str(error.value)
