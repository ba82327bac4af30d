"""Graph programs: tests written as data (see grader/worker/interpreter.py).

Tests build a program with operator overloading, as if it were the engine:

    g = Graph()
    x = g.value(2.0)
    y = (x * x).tanh()
    g.backward(y)          # backward() then read every node

`g.steps` is the JSON-safe list the worker runs. `g.as_python()` renders the same
program as code a student can paste and run.
"""

from dataclasses import dataclass

PRIMITIVE_OPS = ("+", "*", "**", "exp", "log", "tanh", "relu")
UNARY_METHODS = ("exp", "log", "tanh", "relu")


@dataclass(frozen=True)
class Node:
    graph: "Graph"
    index: int

    @property
    def ref(self):
        return f"n{self.index}"

    def _binary(self, op, other, reflected=False):
        operands = [self.ref, _operand(other)]
        if reflected:
            operands.reverse()
        return self.graph.op(op, *operands)

    def __add__(self, other):
        return self._binary("+", other)

    def __radd__(self, other):
        return self._binary("+", other, reflected=True)

    def __sub__(self, other):
        return self._binary("-", other)

    def __rsub__(self, other):
        return self._binary("-", other, reflected=True)

    def __mul__(self, other):
        return self._binary("*", other)

    def __rmul__(self, other):
        return self._binary("*", other, reflected=True)

    def __truediv__(self, other):
        return self._binary("/", other)

    def __rtruediv__(self, other):
        return self._binary("/", other, reflected=True)

    def __pow__(self, exponent):
        if isinstance(exponent, Node):
            raise TypeError("graph programs use constant exponents only")
        return self.graph.op("**", self.ref, exponent)

    def __neg__(self):
        return self.graph.op("neg", self.ref)

    def exp(self):
        return self.graph.op("exp", self.ref)

    def log(self):
        return self.graph.op("log", self.ref)

    def tanh(self):
        return self.graph.op("tanh", self.ref)

    def relu(self):
        return self.graph.op("relu", self.ref)


def _operand(thing):
    if isinstance(thing, Node):
        return thing.ref
    if isinstance(thing, bool) or not isinstance(thing, (int, float)):
        raise TypeError(f"operand must be a node or a number, not {thing!r}")
    return thing


class Graph:
    def __init__(self):
        self.steps = []
        self.node_steps = []  # node number -> its step

    def _new_node(self, step):
        self.steps.append(step)
        self.node_steps.append(step)
        return Node(self, len(self.node_steps) - 1)

    def value(self, data):
        return self._new_node(["value", float(data)])

    def values(self, *data):
        return [self.value(x) for x in data]

    def dual(self, val, der=0.0):
        return self._new_node(["dual", float(val), float(der)])

    def op(self, name, *operands):
        return self._new_node(["op", name, *operands])

    def backward(self, root, read=True):
        self.steps.append(["backward", root.ref])
        if read:
            self.read()

    def zero_grad(self, nodes, read=True):
        self.steps.append(["zero_grad", [node.ref for node in nodes]])
        if read:
            self.read()

    def read(self):
        self.steps.append(["read"])

    # --- facts about the program, used to check answers and explain them ---

    def is_dual(self, number):
        return self.node_steps[number][0] == "dual" or any(
            isinstance(a, str) and self.is_dual(int(a[1:])) for a in self.inputs_of(number, refs=True)
        )

    def inputs_of(self, number, refs=False):
        step = self.node_steps[number]
        if step[0] != "op":
            return []
        found = [a for a in step[2:] if isinstance(a, str)]
        return found if refs else [int(a[1:]) for a in found]

    def consumers_of(self, number):
        return [n for n in range(len(self.node_steps)) if number in self.inputs_of(n)]

    def ancestors(self, number):
        """Every node that `number` was computed from, including itself."""
        seen, stack = set(), [number]
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(self.inputs_of(current))
        return seen

    def as_python(self):
        return render_python(self.steps)


def _python_operand(operand):
    return operand if isinstance(operand, str) else repr(operand)


def render_step(step):
    """One step as a line of Python, using the exercise's public API."""
    kind = step[0]
    if kind == "value":
        return f"Value({step[1]!r})"
    if kind == "dual":
        return f"Dual({step[1]!r}, {step[2]!r})"
    if kind == "op":
        name, operands = step[1], [_python_operand(a) for a in step[2:]]
        if name == "neg":
            return f"-{operands[0]}"
        if name in UNARY_METHODS:
            return f"{operands[0]}.{name}()"
        return f"{operands[0]} {name} {operands[1]}"
    if kind == "backward":
        return f"{step[1]}.backward()"
    if kind == "zero_grad":
        return f"zero_grad([{', '.join(step[1])}])"
    return None


def render_python(steps):
    """The program as a script (reads become nothing: the student prints what they like)."""
    lines, node = [], 0
    for step in steps:
        code = render_step(step)
        if code is None:
            continue
        if step[0] in ("value", "dual", "op"):
            lines.append(f"n{node} = {code}")
            node += 1
        else:
            lines.append(code)
    return "\n".join(lines)
