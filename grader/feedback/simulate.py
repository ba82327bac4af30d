"""A trusted model of the exercise that can be told to make a known mistake.

`simulate(steps, model)` runs a graph program the way the interpreter runs it
on the reference, from the exercise's table (grader/exercise.toml): primitives
compute their values and local rules by the table's formulas, derived ops are
built from primitives by the table's recipes, exactly as the seed builds them
(`a - b` is `a + (-b)`, `-b` is `b * -1.0`, a plain number becomes a hidden
constant leaf), so with the default `Model()` the numbers are the reference's. A model with deviations (a wrong local rule written as a
formula, `=` instead of `+=`, no intermediate reset, ...) gives the numbers a
student with that misconception would get. The hint matcher compares those with
what the submission returned.

It also records, for every backward() call, the grad each program node sent to
each of its inputs (the "edges"), which the localizer uses to name culprits.
Everything here is plain Python on plain numbers: no student code runs here.
"""

import functools

from grader.exercise import DUAL_VARIABLES, EXERCISE, REVERSE_VARIABLES, VALUE_VARIABLES
from grader.feedback.model import Model
from grader.formula import Formula
from grader.oracle import Call
from grader.worker.interpreter import describe

VALUE_PRIMITIVES = EXERCISE.primitives()
DUAL_PRIMITIVES = EXERCISE.primitives(dual=True)


def _sends(texts):
    formulas = [Formula(text, REVERSE_VARIABLES) for text in texts]
    return lambda env: tuple(f(env) for f in formulas)


# The table's local rules and values (the reference's, in its own order of operations).
REFERENCE_SENDS = {name: _sends(EXERCISE.op(name).grad) for name in VALUE_PRIMITIVES}
REFERENCE_DERS = {name: Formula(EXERCISE.op(name).der, DUAL_VARIABLES) for name in DUAL_PRIMITIVES}
VALUES = {name: Formula(EXERCISE.op(name).value, VALUE_VARIABLES) for name in EXERCISE.names()
          if EXERCISE.op(name).value}


@functools.lru_cache(maxsize=256)
def compile_model(model):
    return _Compiled(model)


class _Compiled:
    def __init__(self, model):
        self.model = model
        self.sends = dict(REFERENCE_SENDS)
        for op, texts in model.sends:
            self.sends[op] = _sends(texts)
        self.ders = dict(REFERENCE_DERS)
        for op, text in model.ders:
            self.ders[op] = Formula(text, DUAL_VARIABLES)
        self.assign_all = "all" in model.assign
        self.assign = set(model.assign)


class SimValue:
    __slots__ = ("op", "inputs", "data", "grad", "k", "owner", "index")

    def __init__(self, data, op="", inputs=(), k=None, owner=None, index=None):
        self.data, self.op, self.inputs, self.k = data, op, inputs, k
        self.grad = 0.0
        self.owner = owner  # the program node this primitive belongs to
        self.index = index  # its program node number, None for hidden ones


class SimDual:
    __slots__ = ("val", "der", "index")

    def __init__(self, val, der, index=None):
        self.val, self.der, self.index = float(val), float(der), index


class SimulationError(Exception):
    pass


class Simulation:
    def __init__(self, model=None):
        self.model = compile_model(model or Model())
        self.nodes = []  # program nodes: SimValue or SimDual
        self.path_ops = []  # per program node: {input node: sorted primitive ops between them}
        self.calls = []
        self.snapshots = []
        self.orders = []

    # ---------------------------------------------------------------- build

    def _prim(self, op, inputs, owner, k=None):
        """A primitive node; its value by the table's formula (log of a non-positive
        number, a complex power: an error, as in the reference)."""
        a = inputs[0].data
        b = inputs[1].data if len(inputs) > 1 else 0.0
        data = VALUES[op]({"a": a, "b": b, "x": a, "k": k if k is not None else b})
        return SimValue(data, op, tuple(inputs), k, owner)

    def _const(self, number, owner):
        return SimValue(float(number), owner=owner)

    def _value_op(self, name, args, owner):
        """Op `name` on program nodes and numbers, built as the reference builds it."""
        def lift(x):
            return x if isinstance(x, SimValue) else self._const(x, owner)

        op = EXERCISE.op(name)
        recipe = op.recipe()
        if recipe is not None:
            return self._build(recipe, args, owner, lift)
        if op.exponents:  # x ** k: the exponent stays a plain number
            return self._prim(name, (args[0],), owner, k=args[1])
        if op.arity == 2 and not isinstance(args[0], SimValue):  # 3 + n -> n.__radd__(3) -> n + 3
            args = [args[1], args[0]]
        return self._prim(name, tuple(lift(x) for x in args), owner)

    def _build(self, node, args, owner, lift):
        if node.kind == "operand":
            return args[0] if node.name == "a" else args[1]
        if node.kind == "number":
            return float(node.name)
        if node.kind == "lift":
            return lift(self._build(node.children[0], args, owner, lift))
        values = [self._build(child, args, owner, lift) for child in node.children]
        if not any(isinstance(v, SimValue) for v in values):  # plain numbers: Python computes it
            return self._plain(node.name, values)
        return self._value_op(node.name, values, owner)

    @staticmethod
    def _plain(name, values):
        a = values[0]
        b = values[1] if len(values) > 1 else 0.0
        recipe = EXERCISE.op(name).recipe()
        if recipe is not None:
            return Simulation._plain_recipe(recipe, a, b)
        return VALUES[name]({"a": a, "b": b, "x": a, "k": b})

    @staticmethod
    def _plain_recipe(node, a, b):
        if node.kind == "operand":
            return a if node.name == "a" else b
        if node.kind == "number":
            return float(node.name)
        if node.kind == "lift":
            return Simulation._plain_recipe(node.children[0], a, b)
        return Simulation._plain(node.name, [Simulation._plain_recipe(c, a, b) for c in node.children])

    def _dual_prim(self, op, inputs):
        x = inputs[0]
        y = inputs[1] if len(inputs) > 1 else None
        env = {"a": x.val, "da": x.der, "b": y.val if y else 0.0, "db": y.der if y else 0.0, "x": x.val,
               "dx": x.der}
        env["t"] = VALUES[op]({"a": env["a"], "b": env["b"], "x": env["x"], "k": 0.0})
        return SimDual(env["t"], self.model.ders[op](env))

    def _dual_op(self, name, args):
        def lift(x):
            return x if isinstance(x, SimDual) else SimDual(x, self.model.model.lift_der)

        op = EXERCISE.op(name)
        recipe = op.recipe(dual=True)
        if recipe is not None:
            return self._build_dual(recipe, args, lift)
        if op.arity == 2:
            if not isinstance(args[0], SimDual):  # __radd__ = __add__, __rmul__ = __mul__
                args = [args[1], args[0]]
            return self._dual_prim(name, (args[0], lift(args[1])))
        if not op.dual_primitive:
            raise SimulationError(f"Dual has no {name!r}")
        return self._dual_prim(name, (args[0],))

    def _build_dual(self, node, args, lift):
        if node.kind == "operand":
            return args[0] if node.name == "a" else args[1]
        if node.kind == "number":
            return float(node.name)
        if node.kind == "lift":
            return lift(self._build_dual(node.children[0], args, lift))
        values = [self._build_dual(child, args, lift) for child in node.children]
        return self._dual_op(node.name, values)

    def _record_paths(self, top, index):
        paths, stack = {}, [(top, frozenset())]
        while stack:
            prim, ops = stack.pop()
            ops = ops | {prim.op}
            for parent in prim.inputs:
                if parent.index is not None:
                    paths.setdefault(parent.index, set()).update(ops)
                elif parent.owner == index and parent.inputs:
                    stack.append((parent, ops))
        self.path_ops.append({n: sorted(ops) for n, ops in paths.items()})

    # ----------------------------------------------------------------- steps

    def step(self, step):
        kind = step[0]
        if kind == "value":
            self.nodes.append(SimValue(float(step[1]), index=len(self.nodes)))
            self.path_ops.append({})
        elif kind == "dual":
            self.nodes.append(SimDual(step[1], step[2] if len(step) > 2 else 0.0, index=len(self.nodes)))
            self.path_ops.append({})
        elif kind == "op":
            index = len(self.nodes)
            args = [self.nodes[int(a[1:])] if isinstance(a, str) else a for a in step[2:]]
            if any(isinstance(a, SimDual) for a in args):
                node = self._dual_op(step[1], args)
                node.index = index
                self.nodes.append(node)
                self.path_ops.append({})
            else:
                node = self._value_op(step[1], args, index)
                node.index = index
                self.nodes.append(node)
                self._record_paths(node, index)
        elif kind == "backward":
            self.orders.append(self.backward(self.nodes[int(step[1][1:])]))
        elif kind == "zero_grad":
            if self.model.model.zero_grad == "set":
                for ref in step[1]:
                    self.nodes[int(ref[1:])].grad = 0.0
        elif kind == "read":
            self.snapshots.append([self.read(node) for node in self.nodes])
        else:
            raise SimulationError(f"unknown step {kind!r}")

    @staticmethod
    def read(node):
        if isinstance(node, SimDual):
            return [describe(node.val), describe(node.der)]
        return [describe(node.data), describe(node.grad)]

    # -------------------------------------------------------------- backward

    def _order(self, root):
        by_data = self.model.model.visited == "data"

        def key(node):
            return node.data if by_data else id(node)

        order, visited, stack = [], set(), [(root, False)]
        while stack:
            node, inputs_done = stack.pop()
            if inputs_done:
                order.append(node)
            elif key(node) not in visited:
                visited.add(key(node))
                stack.append((node, True))
                for parent in node.inputs:
                    if key(parent) not in visited:
                        stack.append((parent, False))
        return order

    def backward(self, root):
        if isinstance(root, SimDual):
            raise SimulationError("Dual has no backward")
        model = self.model.model
        call = Call(root.index, [n.grad if isinstance(n, SimValue) else None for n in self.nodes], [])
        self.calls.append(call)
        order = self._order(root)
        for node in order:
            if (node.inputs and model.reset_intermediate) or (not node.inputs and model.reset_leaves):
                node.grad = 0.0
        if model.root == "set":
            root.grad = 1.0
        elif model.root == "add":
            root.grad += 1.0
        for node in reversed(order) if model.call_order == "reverse" else order:
            if node.inputs:
                self._send(node, call)
        return [node.index if node.index is not None else -1 for node in order]

    def _send(self, node, call):
        x = node.inputs[0].data
        env = {"a": x, "x": x, "b": node.inputs[1].data if len(node.inputs) > 1 else 0.0,
               "t": node.data, "g": node.grad, "k": node.k if node.k is not None else 0.0}
        sent = self.model.sends[node.op](env)
        assign = self.model.assign_all or node.op in self.model.assign
        for parent, grad in zip(node.inputs, sent):
            grad = float(grad)
            if assign:
                parent.grad = grad
            else:
                parent.grad += grad
            if parent.index is not None:
                call.edges.append((node.owner, parent.index, node.op, grad))


def simulate(steps, model=None):
    """The outcome of `steps` under `model`, in the interpreter's format, plus
    `calls`: what each backward() sent (see `Call`)."""
    simulation = Simulation(model)
    for index, step in enumerate(steps):
        try:
            simulation.step(step)
        except (ArithmeticError, ValueError, TypeError, SimulationError) as error:
            return {"ok": False, "step": index, "error": {"type": type(error).__name__, "message": str(error)},
                    "snapshots": simulation.snapshots, "orders": simulation.orders,
                    "calls": simulation.calls, "path_ops": simulation.path_ops}
    return {"ok": True, "snapshots": simulation.snapshots, "orders": simulation.orders,
            "calls": simulation.calls, "path_ops": simulation.path_ops}
