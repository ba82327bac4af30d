"""Run a graph program with one implementation of the exercise.

A graph program is plain data: a list of steps, each a JSON list.

    ["value", 2.0]              new node: Value(2.0)
    ["dual", 2.0, 1.0]          new node: Dual(2.0, 1.0)
    ["dual", 2.0]               new node: Dual(2.0)   (der: Dual's default)
    ["op", "*", "n0", "n1"]     new node: n0 * n1   (operands: "nK" or a number)
    ["op", "tanh", "n2"]        new node: n2.tanh()
    ["backward", "n3"]          n3.backward(); its returned order is recorded
    ["zero_grad", ["n0", "n1"]] zero_grad([n0, n1])
    ["read"]                    snapshot every node: [data, grad] or [val, der]

The same code runs the reference on the trusted side and the submission inside
the worker, so both are driven identically. It uses only the standard library:
the sandboxed worker sees nothing else of the kit.

The outcome holds only JSON-safe plain data. Student objects never leave here:
numbers are copied out as floats, anything else is described by a short string.
"""

import math
import operator

BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "**": operator.pow}
UNARY = {"neg": operator.neg}
METHODS = ("exp", "log", "tanh", "relu")
MAX_TEXT = 300
MAX_ORDER = 100_000


def short(text, limit=MAX_TEXT):
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def describe(value):
    """A number as a float; anything else as a marker the trusted side can explain."""
    if isinstance(value, (float, int)) and not isinstance(value, bool):
        try:
            number = float(value)
        except BaseException:  # noqa: B036 - a hostile __float__ must not crash the reply
            number = math.nan
        if math.isfinite(number):
            return number
        return {"nonfinite": "nan" if math.isnan(number) else ("inf" if number > 0 else "-inf")}
    try:
        shown = repr(value)
    except BaseException:  # noqa: B036 - a hostile __repr__ must not crash the reply
        shown = object.__repr__(value)
    return {"not_a_number": short(type(value).__name__, 80), "repr": short(shown, 120)}


class MissingName(Exception):
    """The submission does not define a name the program needs."""


class ReturnedWrongType(Exception):
    """An op returned something that is not a node of the right kind (a float, say)."""


class ShadowedMethod(Exception):
    """An attribute set on the instance hides a method of the class, which never runs."""


def _not_hidden(node, name):
    try:
        hidden = name in vars(node)
    except TypeError:  # no __dict__ (__slots__): nothing can hide the method
        return
    if hidden:
        raise ShadowedMethod(f"an attribute `{name}` set on the instance hides the method `{name}`")


class _Missing:
    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise MissingName(f"the submission defines no `{self.name}`")


class Interpreter:
    def __init__(self, namespace, source_file=None, owners=None):
        """`source_file`: the submission's file name, or several (a notebook kernel's
        cells), for the place of an error; `owners`: {code: exercise function}
        (grader/worker/functions.py)."""
        self.source_file = source_file
        self.owners = owners or {}
        self.Value = namespace.get("Value") or _Missing("Value")
        self.Dual = namespace.get("Dual") or _Missing("Dual")
        self.zero_grad = namespace.get("zero_grad") or _Missing("zero_grad")

    def run(self, steps, on_step=None):
        """Run the program; `on_step(index)` (optional) is told each step before it runs."""
        nodes, snapshots, orders = [], [], []
        for index, step in enumerate(steps):
            if on_step is not None:
                on_step(index)
            try:
                self._step(step, nodes, snapshots, orders)
            except BaseException as error:  # noqa: B036 - report, never propagate
                return {
                    "ok": False,
                    "step": index,
                    "error": {"type": short(type(error).__name__, 80), "message": short(_message(error)), "where": _where(error, self.source_file, self.owners)},
                    "snapshots": snapshots,
                    "orders": orders,
                }
        return {"ok": True, "snapshots": snapshots, "orders": orders}

    def _step(self, step, nodes, snapshots, orders):
        kind = step[0]
        if kind == "value":
            nodes.append(self.Value(step[1]))
        elif kind == "dual":
            nodes.append(self.Dual(step[1], step[2]) if len(step) > 2 else self.Dual(step[1]))
        elif kind == "op":
            operands = [self._operand(a, nodes) for a in step[2:]]
            nodes.append(self._a_node(self._apply(step[1], operands), operands))
        elif kind == "backward":
            root = self._operand(step[1], nodes)
            _not_hidden(root, "backward")
            orders.append(self._order(root.backward(), nodes))
        elif kind == "zero_grad":
            self.zero_grad([self._operand(ref, nodes) for ref in step[1]])
        elif kind == "read":
            snapshots.append([self._read(node) for node in nodes])
        else:
            raise ValueError(f"unknown step {kind!r}")

    @staticmethod
    def _operand(ref, nodes):
        return nodes[int(ref[1:])] if isinstance(ref, str) else ref

    @staticmethod
    def _apply(name, args):
        if name in BINARY:
            return BINARY[name](args[0], args[1])
        if name in UNARY:
            return UNARY[name](args[0])
        if name in METHODS:
            _not_hidden(args[0], name)
            return getattr(args[0], name)()
        raise ValueError(f"unknown op {name!r}")

    def _a_node(self, result, operands):
        """An op's result, checked: a Dual when an operand is one, else a Value."""
        kind = self.Dual if any(isinstance(self.Dual, type) and isinstance(a, self.Dual) for a in operands) \
            else self.Value
        if isinstance(kind, type) and not isinstance(result, kind):
            raise ReturnedWrongType(f"returned a {type(result).__name__}, not a {kind.__name__}")
        return result

    def _read(self, node):
        if isinstance(self.Dual, type) and isinstance(node, self.Dual):
            return [describe(node.val), describe(node.der)]
        return [describe(node.data), describe(node.grad)]

    @staticmethod
    def _order(returned, nodes):
        """backward()'s return value as program node numbers (-1: a node the program
        did not create, such as a wrapped constant)."""
        if not isinstance(returned, (list, tuple)):
            return {"not_a_list": short(type(returned).__name__, 80)}
        position = {id(node): number for number, node in enumerate(nodes)}
        return [position.get(id(item), -1) for item in list(returned)[:MAX_ORDER]]


def _message(error):
    try:
        return str(error)
    except BaseException:  # noqa: B036
        return "<the exception's message could not be shown>"


def _where(error, source_file, owners):
    """The innermost frame of the traceback in the submission: file, line, function,
    and the innermost exercise function it went through ("Value.__mul__" for a
    `_backward` closure the op made, or for a helper the op called), if any."""
    files = (source_file,) if isinstance(source_file, str) else tuple(source_file or ())
    innermost, within = None, None
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename in files:
            innermost = tb
            within = owners.get(code, within)
        tb = tb.tb_next
    if innermost is None:
        return None
    code = innermost.tb_frame.f_code
    return {"file": short(code.co_filename, 200), "line": innermost.tb_lineno, "function": short(code.co_name, 80),
            "within": within}
