"""tiny_autograd：一个标量自动微分引擎 / a scalar autodiff engine.

PyTorch 里的 ``loss.backward()`` 一行就算出所有参数的梯度。这个文件用一百多行
把它拆开给你看 (what ``loss.backward()`` does, in a hundred-odd lines):

* ``Value``：一个会"记账"的标量。每做一次运算，结果都记下自己的输入和运算，
  这些记录连起来就是计算图 (computational graph)。
* ``Value.backward()``：反向模式自动微分 (reverse mode)。先把图排成拓扑序，
  再倒着走一遍，每个节点用链式法则把梯度交给它的输入。
* ``zero_grad(values)``：把一组数的梯度清零。
* ``Dual``：前向模式自动微分 (forward mode)。对偶数 a + b·ε (ε² = 0)
  在算函数值的同时带出一个方向导数。

用法 / usage::

    x, y = Value(2.0), Value(3.0)
    z = x * y + x.tanh()
    z.backward()
    x.grad, y.grad          # dz/dx, dz/dy

约定 / convention: 每个 ``_backward`` 闭包只做一件事：
"已知 out.grad = ∂L/∂out，把 ∂L/∂out × ∂out/∂input **加** 到每个输入的 grad 上"。

评分只用 Python 标准库：你可以 import numpy、graphviz 等来画图、做实验，但被评分的
代码不能用到它们（评分时它们只是占位模块）。Grading uses the Python standard library
only: import numpy, graphviz and the like for your own plots if you wish, but the
graded code must not use them (while grading they are placeholders).
"""

import math
import numbers


def _as_float(x, who):
    """x 作为 float；不是数字就给出清楚的错误 / x as a float, or a clear error naming x."""
    if type(x) is float:  # 最常见的情况，最快 / the common case first
        return x
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        return float(x)
    raise TypeError(f"{who}(...) 需要一个数字 / {who}(...) needs a number, got {x!r} ({type(x).__name__})")


def _leaf_backward():
    """叶子节点没有输入，反向传播时什么也不用做 / a leaf has nothing to pass on."""


class Value:
    """参与自动微分的一个标量 / one scalar in the graph.

    属性 / attributes:
        data: 数值 (float)。
        grad: 最终输出对它的导数 ∂out/∂self，初始为 0.0。
        _parents: 产生它的输入；叶子节点为空元组。
        _backward: 把 self.grad 按局部导数分给输入的函数。
        op: 产生它的运算名，只用于打印 / for printing only.

    grad 用 += 累加：一个数在图里被用了几次，几条路径的梯度就要加起来。
    """

    # __slots__ 让每个节点更小、属性访问更快：大图上省下可观的内存。
    __slots__ = ("data", "grad", "_parents", "_backward", "op")

    def __init__(self, data, _parents=(), op=""):
        # 运算的结果已经是 float，不必再检查：大图上每个节点省一次函数调用。
        # Op results are floats already: skipping the check saves a call per node.
        self.data = data if type(data) is float else _as_float(data, "Value")
        self.grad = 0.0
        self._parents = _parents
        self._backward = _leaf_backward
        self.op = op

    def __repr__(self):
        return f"Value(data={self.data:.4g}, grad={self.grad:.4g})"

    # ------------------------------------------------------------------
    # 基本运算 / primitive ops: 每个都有自己的 _backward。
    # 形状都一样：(1) 算出结果 out；(2) 告诉 out 怎样把梯度还给输入。
    # ------------------------------------------------------------------

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            # BEGIN SOLUTION: 加法 / add: ∂(a+b)/∂a = 1, ∂(a+b)/∂b = 1
            # 加法把梯度原样复制给两个输入 / add copies the gradient to both inputs.
            self.grad += out.grad
            other.grad += out.grad
            # END SOLUTION

        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            # BEGIN SOLUTION: 乘法 / mul: ∂(a·b)/∂a = b, ∂(a·b)/∂b = a
            # 每个输入收到"另一个输入的值 × out.grad" / each input gets the other's value.
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
            # END SOLUTION

        out._backward = _backward
        return out

    def __pow__(self, k):
        """x ** k，k 只能是常数 / the exponent k must be a plain number."""
        if isinstance(k, bool) or not isinstance(k, (int, float)):
            raise TypeError(
                f"指数只能是常数 (int/float) / the exponent must be a constant "
                f"int or float, got {k!r} ({type(k).__name__})"
            )
        if self.data < 0 and not float(k).is_integer():
            raise ValueError(
                f"负数的非整数次幂是复数 / a negative base with a fractional exponent is "
                f"complex: {self.data!r} ** {k!r}"
            )
        out = Value(self.data**k, (self,), f"**{k}")

        def _backward():
            # BEGIN SOLUTION: 幂 / pow: ∂(x**k)/∂x = k · x**(k-1)
            self.grad += k * self.data ** (k - 1) * out.grad
            # END SOLUTION

        out._backward = _backward
        return out

    def exp(self):
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            # BEGIN SOLUTION: 指数 / exp: (e**x)' = e**x，也就是 out.data / which is out.data
            self.grad += out.data * out.grad
            # END SOLUTION

        out._backward = _backward
        return out

    def log(self):
        """自然对数，输入必须 > 0 / natural log, the input must be > 0."""
        if self.data <= 0:
            raise ValueError(
                f"log 的输入必须大于 0 / log needs a positive input, got {self.data!r}"
            )
        out = Value(math.log(self.data), (self,), "log")

        def _backward():
            # BEGIN SOLUTION: 对数 / log: (ln x)' = 1 / x
            self.grad += (1.0 / self.data) * out.grad
            # END SOLUTION

        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")

        def _backward():
            # BEGIN SOLUTION: 双曲正切 / tanh: tanh'(x) = 1 - t², t 是输出 / t is the output
            self.grad += (1.0 - t * t) * out.grad
            # END SOLUTION

        out._backward = _backward
        return out

    def relu(self):
        out = Value(self.data if self.data > 0 else 0.0, (self,), "relu")

        def _backward():
            # BEGIN SOLUTION: relu: x > 0 时导数为 1，否则 (包括 x == 0) 为 0 / 1 if x > 0 else 0, also at 0
            self.grad += (1.0 if self.data > 0 else 0.0) * out.grad
            # END SOLUTION

        out._backward = _backward
        return out

    # ------------------------------------------------------------------
    # 组合运算 / derived ops: 只由基本运算拼成，所以不需要自己的求导规则。
    # Python 先试 a.__add__(b)；a 是普通数字时再试 b.__radd__(a)。
    # ------------------------------------------------------------------

    def __neg__(self):  # -x
        return self * -1.0

    def __sub__(self, other):  # x - y
        return self + (-other)

    def __truediv__(self, other):  # x / y
        other = other if isinstance(other, Value) else Value(other)
        return self * other**-1

    def __radd__(self, other):  # 3 + x
        return self + other

    def __rmul__(self, other):  # 3 * x
        return self * other

    def __rsub__(self, other):  # 3 - x
        return Value(other) - self

    def __rtruediv__(self, other):  # 3 / x
        return Value(other) / self

    # ------------------------------------------------------------------
    # 反向传播 / backpropagation
    # ------------------------------------------------------------------

    def backward(self):
        """计算图中每个节点的 grad = ∂self/∂node，并返回拓扑序。

        1. 拓扑排序：每个节点排在它的所有输入之后，self 排最后。
        2. 中间节点 (有输入的节点) 的 grad 清零；叶子节点的 grad 保留，
           所以重复调用会在叶子上累加，和 PyTorch 一样。
        3. self.grad = 1.0 (∂self/∂self = 1)。
        4. 倒着调用每个节点的 _backward：轮到一个节点时，所有用到它的
           节点都已经把梯度交给了它，它的 grad 已经完整。

        Returns the topological order: every node once, inputs first, self last.
        """
        # BEGIN SOLUTION: 反向传播 / backward: 拓扑排序，清零中间节点，根设为 1.0，倒序调用 _backward，返回拓扑序 / topological order, reset non-leaf grads, root grad = 1.0, call _backward in reverse, return the order
        order = _topological_order(self)
        for node in order:
            if node._parents:
                node.grad = 0.0
        self.grad = 1.0
        for node in reversed(order):
            node._backward()
        return order
        # END SOLUTION


def _topological_order(root):
    """从 root 出发的拓扑序，用显式栈代替递归，百万层的链也不会超过递归深度。

    Iterative depth-first search: no recursion limit even on a 1,000,000-op chain.
    栈里的 (node, True) 表示"它的输入都已排好，可以把它放进结果了"。
    """
    # BEGIN SOLUTION: 拓扑排序 / topological order: 每个节点只出现一次，输入在前 / every node once, inputs first
    order = []
    # 集合按对象身份判断 (Value 没有定义 __eq__)：两个 data 相同的节点仍是两个节点。
    # The set compares identity, so two nodes with equal data stay two nodes.
    visited = set()
    stack = [(root, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
        elif node not in visited:
            visited.add(node)
            stack.append((node, True))
            for parent in node._parents:
                if parent not in visited:
                    stack.append((parent, False))
    return order
    # END SOLUTION


def zero_grad(values):
    """把一组 Value 的 grad 设为 0.0 / set .grad = 0.0 on every given value."""
    # BEGIN SOLUTION: 清零 / zero_grad: 把每个 value 的 grad 设为 0.0 / set each value's grad to 0.0
    for value in values:
        value.grad = 0.0
    # END SOLUTION


# ======================================================================
# 前向模式 / forward mode
# ======================================================================


class Dual:
    """对偶数 val + der·ε，其中 ε² = 0 / a dual number with ε² = 0.

    把 x 换成 x + v·ε 代进 f：泰勒展开 f(x + vε) = f(x) + f'(x)·v·ε，
    高次项都因 ε² = 0 消失，所以结果的 ε 系数就是方向导数 ∇f·v。
    一次前向计算只得到一个方向的导数：n 个输入的完整梯度要算 n 次。
    One forward pass gives one directional derivative; a full gradient of n
    inputs needs n passes, which is why training uses reverse mode.
    """

    __slots__ = ("val", "der")

    def __init__(self, val, der=0.0):
        self.val = _as_float(val, "Dual")
        self.der = _as_float(der, "Dual")

    def __repr__(self):
        return f"Dual(val={self.val:.4g}, der={self.der:.4g})"

    @staticmethod
    def _lift(other):
        """普通数字是常数：导数部分为 0 / a plain number is a constant, der = 0."""
        return other if isinstance(other, Dual) else Dual(other, 0.0)

    def __add__(self, other):
        other = self._lift(other)
        # BEGIN SOLUTION: 加法 / add: (a + bε) + (c + dε) 的 ε 系数是什么？/ what is the ε part of the sum?
        der = self.der + other.der
        # END SOLUTION
        return Dual(self.val + other.val, der)

    def __mul__(self, other):
        other = self._lift(other)
        # BEGIN SOLUTION: 乘法 / mul: 展开 (a + bε)(c + dε)，记住 ε² = 0 / expand the product, remember ε² = 0
        der = self.val * other.der + self.der * other.val
        # END SOLUTION
        return Dual(self.val * other.val, der)

    __radd__ = __add__
    __rmul__ = __mul__

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-self._lift(other))

    def __rsub__(self, other):
        return self._lift(other) - self

    def exp(self):
        e = math.exp(self.val)
        # BEGIN SOLUTION: 指数 / exp: exp(a + bε) = e**a + (e**a)' · b · ε
        der = e * self.der
        # END SOLUTION
        return Dual(e, der)

    def tanh(self):
        t = math.tanh(self.val)
        # BEGIN SOLUTION: 双曲正切 / tanh: tanh(a + bε) = t + tanh'(a) · b · ε，t = tanh(a)
        der = (1.0 - t * t) * self.der
        # END SOLUTION
        return Dual(t, der)
