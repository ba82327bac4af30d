"""tiny_autograd.py —— 一个只有一百多行的标量自动微分引擎（反向模式 + 前向模式）

The exercise's seed (the course material the exercise contract comes from), its
code written out with its line breaks; its long explanations are left out. The
kit must give it full marks (tests/test_grading.py): the seed is the specification.
"""
import math


class Value:
    """一个参与自动微分的标量。"""

    def __init__(self, data, _parents=(), op=""):
        self.data = float(data)
        self.grad = 0.0
        self._parents = _parents
        self._backward = lambda: None  # 叶子节点：什么都不用做
        self.op = op

    def __repr__(self):
        return f"Value(data={self.data:.4f}, grad={self.grad:.4f})"

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)  # 允许 Value + 3
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, k):
        """只支持指数是普通数字（常数）的情况：x ** 2、x ** -1。"""
        assert isinstance(k, (int, float)), "这个玩具引擎只支持常数指数"
        out = Value(self.data ** k, (self,), f"**{k}")

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def exp(self):
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad  # (e^x)' = e^x，正好是 out.data
        out._backward = _backward
        return out

    def log(self):
        """自然对数。【边界】self.data 必须 > 0，否则 math.log 会报错。"""
        out = Value(math.log(self.data), (self,), "log")

        def _backward():
            self.grad += (1.0 / self.data) * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t * t) * out.grad  # tanh'(x) = 1 - tanh(x)²
        out._backward = _backward
        return out

    def relu(self):
        out = Value(max(0.0, self.data), (self,), "relu")

        def _backward():
            self.grad += (1.0 if self.data > 0 else 0.0) * out.grad
        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other if isinstance(other, Value) else Value(-other))

    def __truediv__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        return self * other ** -1

    def __radd__(self, other):  # 3 + x 会调用 x.__radd__(3)
        return self + other

    def __rmul__(self, other):  # 3 * x
        return self * other

    def __rsub__(self, other):  # 3 - x
        return Value(other) - self

    def __rtruediv__(self, other):  # 3 / x
        return Value(other) / self

    def backward(self):
        """从 self 出发，计算图中每个节点的 grad = ∂self/∂节点。"""
        topo, visited = [], set()

        def build(v):
            if id(v) not in visited:
                visited.add(id(v))
                for p in v._parents:
                    build(p)
                topo.append(v)
        build(self)
        for v in topo:
            if v._parents:  # 中间节点：清零
                v.grad = 0.0
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()
        return topo  # 返回拓扑序，方便调用者数一数图里有多少个节点


def zero_grad(values):
    """把一组 Value 的 grad 清零。"""
    for v in values:
        v.grad = 0.0


class Dual:
    """对偶数 a + b·ε，其中 ε² = 0。"""

    def __init__(self, val, der=0.0):
        self.val = float(val)
        self.der = float(der)

    def _wrap(self, o):
        return o if isinstance(o, Dual) else Dual(o, 0.0)

    def __add__(self, o):
        o = self._wrap(o)
        return Dual(self.val + o.val, self.der + o.der)

    def __mul__(self, o):
        o = self._wrap(o)
        # (a + bε)(c + dε) = ac + (ad + bc)ε + bd·ε² = ac + (ad + bc)ε
        return Dual(self.val * o.val, self.val * o.der + self.der * o.val)

    __radd__ = __add__
    __rmul__ = __mul__

    def __sub__(self, o):
        o = self._wrap(o)
        return Dual(self.val - o.val, self.der - o.der)

    def exp(self):
        e = math.exp(self.val)
        return Dual(e, e * self.der)

    def tanh(self):
        t = math.tanh(self.val)
        return Dual(t, (1 - t * t) * self.der)
