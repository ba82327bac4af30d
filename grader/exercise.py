"""The exercise as one typed table, read from grader/exercise.toml.

    from grader.exercise import EXERCISE
    EXERCISE.op("tanh").written          # "{a}.tanh()"
    EXERCISE.primitives()                # ("+", "*", "**", "exp", "log", "tanh", "relu")
    EXERCISE.label("-")                  # "+": the primitive a derived op is blamed on first
    EXERCISE.spelled("a * b")            # "*": the op some Python code applies
    EXERCISE.matches(1.0, 1.0000001)     # the comparison's tolerance

Everything that needs to know an op asks here: the program builder
(grader/program.py), the generated programs (authoring/strategies.py), the
comparison's culprit labels (grader/compare.py), the feedback's model of the
exercise (grader/feedback/simulate.py, probes, matcher), the hangs' call names
(grader/hangs.py), the notebook's and the student README's lists of ops. Code
that needs one particular op names it in Python (`EXERCISE.spelled("a + b")`),
never by the table's name. Only the worker spells the ops again (it imports
nothing of the kit); tests/test_exercise.py checks it, and the table, against
the reference. Adding an op: docs/ARCHITECTURE.md.

A derived op's `built` recipe is parsed into a small tree (`Recipe`): ops of the
table applied to the operands `a` and `b`, numbers, and `lift(...)` (a plain
number wrapped as a node), so that a model of the exercise can build derived ops
exactly as the reference does. A recipe is written in Python syntax, and which
op an operator or a call means is read from the ops' `written` forms.
"""

import ast
import functools
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from grader.formula import Formula

TABLE_FILE = Path(__file__).resolve().parent / "exercise.toml"
RUBRIC_FILE = Path(__file__).resolve().parent / "rubric.toml"
REVERSE_VARIABLES = ("a", "b", "x", "t", "g", "k")
DUAL_VARIABLES = ("a", "da", "b", "db", "x", "dx", "t")
VALUE_VARIABLES = ("a", "b", "x", "k")
SEMANTIC_LABELS = ("backward", "zero_grad")  # culprits that are not ops


@dataclass(frozen=True)
class Recipe:
    """A node of a derived op's recipe: ("op", name, children), ("operand", "a"),
    ("lift", child) or ("number", value)."""

    kind: str
    name: object = None
    children: tuple = ()


@dataclass(frozen=True)
class Op:
    name: str  # how a graph program spells it: "+", "tanh", "neg"
    arity: int
    written: str  # "{a} + {b}"
    method: str  # "__add__"
    reflected: str = ""  # "__radd__"
    value: str = ""  # its value on plain numbers
    domain: str = ""  # where generated programs use it
    exponents: tuple = ()  # "**": the constant exponents generated programs use
    grad: tuple = ()  # primitive: what it sends to each input (not in the student bundle)
    built: str = ""  # derived: how the reference builds it
    dual: bool = False
    dual_reflected: bool = False
    dual_built: str = ""
    der: str = ""  # Dual primitive: the derivative part (not in the student bundle)
    probes: tuple = ()  # primitive: operands at which the feedback tries it alone
    text: dict = field(default_factory=dict)  # {"en", "zh"}: what messages call it
    syntax: tuple = field(default=(), repr=False)  # (Python syntax, op name) of the whole table, for recipes

    @property
    def primitive(self):
        return not self.built

    @property
    def dual_primitive(self):
        return self.dual and not self.dual_built

    def render(self, *operands):
        """The op as code, e.g. render("n0", "n1") -> "n0 + n1"."""
        return self.written.format(**dict(zip("ab", operands)))

    def recipe(self, dual=False):
        """The parsed `built` (or `dual_built`) recipe, or None for a primitive."""
        text = self.dual_built if dual else self.built
        return _parse_recipe(text, self.syntax) if text else None

    def in_domain(self, **values):
        return not self.domain or _formula(self.domain, VALUE_VARIABLES).holds(_env(values))


@dataclass(frozen=True)
class Exercise:
    ops: dict  # name -> Op, in the table's order
    node_kinds: tuple
    call_kinds: tuple
    rel_tol: float
    abs_tol: float
    dual_lift: str
    syntax: tuple = field(default=(), repr=False)  # (Python syntax, op name), as Op.syntax

    def op(self, name):
        try:
            return self.ops[name]
        except KeyError:
            raise ValueError(f"the exercise has no op {name!r}") from None

    def names(self, dual=False):
        """Every op of Value (or of Dual), in the table's order."""
        return tuple(name for name, op in self.ops.items() if not dual or op.dual)

    def primitives(self, dual=False):
        return tuple(name for name, op in self.ops.items() if (op.dual_primitive if dual else op.primitive))

    def unary(self):
        return tuple(name for name, op in self.ops.items() if op.arity == 1)

    def reflected(self, dual=False):
        """The ops a plain number may stand on the left of."""
        return tuple(name for name, op in self.ops.items()
                     if (op.dual and op.dual_reflected if dual else op.reflected))

    def spelled(self, code):
        """The op that Python code applies at its top, read from the ops' `written`
        forms: "a * b" -> "*", "-a" -> "neg", "a.tanh()" -> "tanh". Code of the kit that
        needs one particular op says it so, in Python, and never spells the table's names."""
        tree = ast.parse(code, mode="eval").body
        key = tree.func.attr if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Attribute) \
            else type(getattr(tree, "op", None))
        name = dict(self.syntax).get(key)
        if name is None:
            raise ValueError(f"{code!r} applies no op of the exercise")
        return name

    def methods(self, dual=False):
        """The ops called as methods of their own name (`x.exp()`), in the table's order."""
        return tuple(name for name in self.names(dual) if self.ops[name].written == f"{{a}}.{self.ops[name].method}()")

    def reflections(self, dual=False):
        """The reflected methods of the ops a plain number may stand on the left of: "__radd__", ..."""
        return tuple(self.ops[name].reflected for name in self.reflected(dual))

    def op_of_function(self, function):
        """("*", False) for "Value.__mul__" or "Value.__rmul__", ("+", True) for
        "Dual.__add__": the op a function of the submission implements, or None."""
        owner, _, method = (function or "").partition(".")
        if owner not in ("Value", "Dual") or not method:
            return None
        dual = owner == "Dual"
        for name in self.names(dual):
            if method in (self.ops[name].method, self.ops[name].reflected):
                return name, dual
        return None

    def label(self, name, dual=False):
        """The culprit a failure in op `name` is blamed on first: itself if it is a
        primitive, else the outermost primitive of its recipe."""
        return self.primitives_of(name, dual)[0]

    def primitives_of(self, name, dual=False):
        """Every culprit label op `name` is made of, outermost first (Dual: "Dual.+", ...,
        then `dual_lift` when it wraps a plain number)."""
        found = []
        self._collect(name, dual, found)
        ops = [label for label in found if label != self.dual_lift]
        return tuple(dict.fromkeys(ops + [label for label in found if label == self.dual_lift]))

    def _collect(self, name, dual, found):
        op = self.op(name)
        recipe = op.recipe(dual)
        if recipe is None:
            found.append(f"Dual.{name}" if dual else name)
            return
        self._collect_recipe(recipe, dual, found)

    def _collect_recipe(self, node, dual, found):
        if node.kind == "op":
            self._collect(node.name, dual, found)
            for child in node.children:
                self._collect_recipe(child, dual, found)
        elif node.kind == "lift" or (node.kind == "number" and dual):
            if dual:
                found.append(self.dual_lift)
            for child in node.children:
                self._collect_recipe(child, dual, found)

    def labels(self):
        """Every culprit label, in the order feedback ranks them when nothing else decides."""
        return (*self.primitives(), *SEMANTIC_LABELS, *(f"Dual.{n}" for n in self.primitives(dual=True)),
                self.dual_lift)

    def matches(self, expected, got):
        """Two finite numbers agree within the exercise's tolerance."""
        return math.isclose(expected, got, rel_tol=self.rel_tol, abs_tol=self.abs_tol)


def _env(values):
    env = {name: 0.0 for name in VALUE_VARIABLES}
    env.update(values)
    if "x" not in values and "a" in values:
        env["x"] = values["a"]
    return env


@functools.lru_cache(maxsize=None)
def _formula(text, variables):
    return Formula(text, variables)


def _syntax(ops):
    """{Python syntax: op name}, read from how each op is written: `{a} + {b}` is
    ast.Add, `-{a}` ast.USub, `{a}.tanh()` the method tanh."""
    syntax = {}
    for name, entry in ops.items():
        tree = ast.parse(entry["written"].format(a="a", b="b"), mode="eval").body
        if isinstance(tree, ast.BinOp):
            syntax[type(tree.op)] = name
        elif isinstance(tree, ast.UnaryOp):
            syntax[type(tree.op)] = name
        elif isinstance(tree, ast.Call) and isinstance(tree.func, ast.Attribute):
            syntax[tree.func.attr] = name
    return syntax


@functools.lru_cache(maxsize=None)
def _parse_recipe(text, syntax):
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as error:
        raise ValueError(f"recipe {text!r}: {error.msg}") from None
    return _recipe(tree, text, dict(syntax))


def _recipe(node, text, syntax):
    if isinstance(node, ast.Name) and node.id in ("a", "b"):
        return Recipe("operand", node.id)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return Recipe("number", node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in syntax:
        if isinstance(node.operand, ast.Constant):
            return Recipe("number", -node.operand.value)
        return Recipe("op", syntax[type(node.op)], (_recipe(node.operand, text, syntax),))
    if isinstance(node, ast.BinOp) and type(node.op) in syntax:
        return Recipe("op", syntax[type(node.op)],
                      (_recipe(node.left, text, syntax), _recipe(node.right, text, syntax)))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1 and not node.keywords:
        child = _recipe(node.args[0], text, syntax)
        if node.func.id == "lift":
            return Recipe("lift", None, (child,))
        if node.func.id in syntax:
            return Recipe("op", syntax[node.func.id], (child,))
    raise ValueError(f"recipe {text!r}: {ast.dump(node)[:60]} is not an op of the table, an operand or a number")


# ------------------------------------------------------------------ loading


def _op(name, entry, syntax):
    known = {"arity", "written", "method", "reflected", "value", "domain", "exponents", "grad", "built", "dual",
             "dual_reflected", "dual_built", "der", "probes", "name"}
    unknown = set(entry) - known
    if unknown:
        raise ValueError(f"op {name!r}: unknown keys {sorted(unknown)}")
    op = Op(
        name=name, arity=int(entry["arity"]), written=entry["written"], method=entry["method"],
        reflected=entry.get("reflected", ""), value=entry.get("value", ""), domain=entry.get("domain", ""),
        exponents=tuple(entry.get("exponents", ())), grad=tuple(entry.get("grad", ())),
        built=entry.get("built", ""), dual=bool(entry.get("dual", False)),
        dual_reflected=bool(entry.get("dual_reflected", False)), dual_built=entry.get("dual_built", ""),
        der=entry.get("der", ""), probes=tuple(tuple(p) for p in entry.get("probes", ())),
        text=dict(entry.get("name", {"en": name, "zh": name})), syntax=syntax,
    )
    for formula in op.grad:
        _formula(formula, REVERSE_VARIABLES)
    if op.der:
        _formula(op.der, DUAL_VARIABLES)
    for formula in filter(None, (op.value, op.domain)):
        _formula(formula, VALUE_VARIABLES)
    return op


def parse(data):
    syntax = tuple(_syntax(data["ops"]).items())
    ops = {name: _op(name, entry, syntax) for name, entry in data["ops"].items()}
    settings = data["exercise"]
    exercise = Exercise(ops, tuple(settings["node_kinds"]), tuple(settings["call_kinds"]),
                        float(settings["rel_tol"]), float(settings["abs_tol"]), settings["dual_lift"], syntax)
    for op in ops.values():  # every recipe names ops of the table
        for dual in (False, True):
            if op.recipe(dual) is not None:
                exercise.primitives_of(op.name, dual)
    return exercise


def load(path=TABLE_FILE):
    with open(path, "rb") as table:
        return parse(tomllib.load(table))


EXERCISE = load()


@functools.lru_cache(maxsize=None)
def categories(path=RUBRIC_FILE):
    """The graded categories, in the rubric's order (the test tags and the results' keys)."""
    with open(path, "rb") as rubric:
        return tuple(tomllib.load(rubric)["categories"])


def category_name(category, path=RUBRIC_FILE):
    """{"en", "zh"}: how reports name a category (the rubric's [names], else its key)."""
    names = _rubric_names(path)
    return names.get(category) or {"en": category, "zh": category}


def category_label(category, lang):
    """A category's name in `lang`."""
    name = category_name(category)
    return name.get(lang) or name["en"]


@functools.lru_cache(maxsize=None)
def _rubric_names(path):
    with open(path, "rb") as rubric_file:
        return {key: dict(value) for key, value in tomllib.load(rubric_file).get("names", {}).items()}
