"""Graph programs: tests written as data (see grader/worker/interpreter.py).

Tests build a program with operator overloading, as if it were the engine:

    g = Graph()
    x = g.value(2.0)
    y = (x * x).tanh()
    g.backward(y)          # backward() then read every node

`g.steps` is the JSON-safe list the worker runs. `g.as_python()` renders the same
program as code a student can paste and run. The operators and methods a node
has are the exercise's (grader/exercise.py), made when this module loads.
"""

from dataclasses import dataclass

from grader.exercise import EXERCISE


@dataclass(frozen=True)
class Node:
    graph: "Graph"
    index: int

    @property
    def ref(self):
        return f"n{self.index}"


def _operand(thing):
    if isinstance(thing, Node):
        return thing.ref
    if isinstance(thing, bool) or not isinstance(thing, (int, float)):
        raise TypeError(f"operand must be a node or a number, not {thing!r}")
    return thing


def _unary(name):
    def method(self):
        return self.graph.op(name, self.ref)

    return method


def _binary(name, reflected=False, constant_right=False):
    def method(self, other):
        if constant_right and isinstance(other, Node):
            raise TypeError(f"graph programs use constant right operands for {name}")
        operands = [self.ref, _operand(other)]
        return self.graph.op(name, *(reversed(operands) if reflected else operands))

    return method


def _define_ops():
    """Node.__add__, Node.tanh, ...: one per op of the exercise (and its reflection)."""
    for name, op in EXERCISE.ops.items():
        if op.arity == 1:
            setattr(Node, op.method, _unary(name))
        else:
            setattr(Node, op.method, _binary(name, constant_right=not op.reflected and name in _CONSTANT_RIGHT))
            if op.reflected:
                setattr(Node, op.reflected, _binary(name, reflected=True))


# Ops whose right operand is a constant of the program, never a node (x ** k).
_CONSTANT_RIGHT = {name for name, op in EXERCISE.ops.items() if op.exponents}
_define_ops()


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

    def dual(self, val, der=None):
        """Dual(val, der); without `der`, Dual(val): the submission's own default
        (the exercise's is 0.0, a constant)."""
        if der is None:
            return self._new_node(["dual", float(val)])
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


def graph_from_steps(steps):
    """A Graph holding an existing program (for programs the shrinker makes)."""
    graph = Graph()
    graph.steps = [list(step) for step in steps]
    graph.node_steps = [step for step in graph.steps if step[0] in EXERCISE.node_kinds]
    return graph


def apply(name, args):
    """Op `name` on `args` (graph nodes, or anything with the exercise's operators),
    as Python would: the left operand's method, or the right one's reflection."""
    op = EXERCISE.op(name)
    if op.arity == 1:
        return getattr(args[0], op.method)()
    left, right = args
    if hasattr(left, op.method) and not isinstance(left, (int, float)):
        return getattr(left, op.method)(right)
    return getattr(right, op.reflected)(left)


def _python_operand(operand):
    return operand if isinstance(operand, str) else repr(operand)


def render_step(step):
    """One step as a line of Python, using the exercise's public API."""
    kind = step[0]
    if kind == "value":
        return f"Value({step[1]!r})"
    if kind == "dual":
        return f"Dual({', '.join(repr(a) for a in step[1:])})"
    if kind == "op":
        return EXERCISE.op(step[1]).render(*(_python_operand(a) for a in step[2:]))
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
        if step[0] in EXERCISE.node_kinds:
            lines.append(f"n{node} = {code}")
            node += 1
        else:
            lines.append(code)
    return "\n".join(lines)
