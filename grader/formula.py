"""Tiny arithmetic formulas, compiled without `eval`.

The exercise's table (grader/exercise.toml) writes each op's value, local rule
and domain as one, e.g. "(1.0 - t * t) * g" for what tanh sends to its input;
the hint catalog writes each misconception the same way, e.g. "(1 - x*x) * g"
for a tanh that differentiates with its input instead of its output. Formulas
may use numbers, the variables given, + - * / **, unary minus, comparisons
(also chained), `and`/`or`/`not`, `A if COND else B`, and the functions below.
Anything else is rejected when the file loads, so a typo fails loudly and early.
"""

import ast
import math
import operator

FUNCTIONS = {"exp": math.exp, "log": math.log, "tanh": math.tanh, "abs": abs, "min": min, "max": max,
             "floor": math.floor}
BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv, ast.Pow: operator.pow}
UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
COMPARE = {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Eq: operator.eq, ast.NotEq: operator.ne}


class FormulaError(ValueError):
    pass


class Formula:
    """A compiled formula: `Formula("(1 - x*x) * g")({"x": 0.5, "g": 3.0})`."""

    def __init__(self, text, variables):
        self.text = text
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError as error:
            raise FormulaError(f"formula {text!r}: {error.msg}") from None
        self._run = self._compile(tree.body, frozenset(variables))

    def __call__(self, env):
        value = self._run(env)
        if isinstance(value, bool):
            value = float(value)
        if not isinstance(value, (int, float)):
            raise FormulaError(f"formula {self.text!r} gave {value!r}, not a real number")
        return float(value)

    def holds(self, env):
        """The formula read as a condition (a domain): true or false."""
        return bool(self._run(env))

    def __repr__(self):
        return f"Formula({self.text!r})"

    def _compile(self, node, variables):
        compile_ = lambda child: self._compile(child, variables)  # noqa: E731
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            value = node.value
            return lambda env: value
        if isinstance(node, ast.Name):
            if node.id not in variables:
                raise FormulaError(f"formula {self.text!r}: unknown name {node.id!r} (known: {sorted(variables)})")
            name = node.id
            return lambda env: env[name]
        if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
            function, left, right = BINARY[type(node.op)], compile_(node.left), compile_(node.right)
            return lambda env: function(left(env), right(env))
        if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
            function, operand = UNARY[type(node.op)], compile_(node.operand)
            return lambda env: function(operand(env))
        if isinstance(node, ast.Compare) and all(type(op) in COMPARE for op in node.ops):
            functions = [COMPARE[type(op)] for op in node.ops]
            terms = [compile_(node.left), *(compile_(c) for c in node.comparators)]

            def compare(env):
                values = [term(env) for term in terms]
                return all(f(x, y) for f, x, y in zip(functions, values, values[1:]))

            return compare
        if isinstance(node, ast.BoolOp):
            terms = [compile_(value) for value in node.values]
            if isinstance(node.op, ast.And):
                return lambda env: all(term(env) for term in terms)
            return lambda env: any(term(env) for term in terms)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            operand = compile_(node.operand)
            return lambda env: not operand(env)
        if isinstance(node, ast.IfExp):
            test, body, orelse = compile_(node.test), compile_(node.body), compile_(node.orelse)
            return lambda env: body(env) if test(env) else orelse(env)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in FUNCTIONS
            and not node.keywords
        ):
            function, arguments = FUNCTIONS[node.func.id], [compile_(a) for a in node.args]
            return lambda env: function(*(a(env) for a in arguments))
        raise FormulaError(f"formula {self.text!r}: {ast.dump(node)[:60]} is not allowed")
