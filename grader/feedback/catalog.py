"""Load the feedback catalog (hints.toml): rules, local rules and hints.

The catalog is validated and its formulas compiled once, when first used; a
mistake in the file is an error for the kit's own tests, not for a student.
"""

import ast
import functools
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from grader.exercise import DUAL_VARIABLES, EXERCISE, REVERSE_VARIABLES
from grader.feedback.model import Model
from grader.formula import Formula
from grader.i18n import listing

VALUE_PRIMITIVES = EXERCISE.primitives()
DUAL_PRIMITIVES = EXERCISE.primitives(dual=True)

CATALOG_FILE = Path(__file__).resolve().parent / "hints.toml"
SEMANTIC_KEYS = {"reset_intermediate", "reset_leaves", "root", "call_order", "visited", "zero_grad", "lift_der"}


@dataclass(frozen=True)
class HintModel:
    model: Model
    culprit: str  # what the misconception is in: an op ("*"), "backward", "zero_grad", "Dual.*", ...
    # ("": the model is in every op; the localizer's culprit stands)
    op: str = ""  # the op named in the text ({op}), if any


@dataclass(frozen=True)
class Hint:
    id: str
    rule: str
    en: str  # the nudge (level 2)
    zh: str
    models: tuple
    summary: dict = None  # {"en", "zh"}: the mistake in a few words
    explain: dict = None  # {"en", "zh"}: the rule spelled out (level 3)

    def text(self, lang, op=""):
        return (self.zh if lang == "zh" else self.en).replace("{op}", op)

    def filled(self, text, op=""):
        """A {"en", "zh"} text of this hint with `{op}` filled in."""
        return {lang: value.replace("{op}", op) for lang, value in (text or {"en": "", "zh": ""}).items()}


@dataclass(frozen=True)
class Catalog:
    rules: dict  # id -> {"en", "zh" (the rule, level 3), "summary", "nudge"}
    local: dict  # culprit label -> {"en", "zh" (its local rule, level 3), "nudge"}
    hints: tuple

    def hint(self, hint_id):
        return next((h for h in self.hints if h.id == hint_id), None)

    def rule(self, rule_id):
        text = self.rules.get(rule_id)
        return {"id": rule_id, **text} if text else None


def _models(entry):
    hint_culprit = entry.get("culprit", "")
    for spec in entry.get("models", []):
        spec = dict(spec)
        if "assign" in spec:
            mode = spec.pop("assign")
            if mode == "each":
                for op in VALUE_PRIMITIVES:
                    yield HintModel(Model(assign=(op,)), op, op)
            elif mode == "all":  # every op: the culprit is whichever the localizer names
                yield HintModel(Model(assign=("all",)), hint_culprit, "")
            else:
                raise ValueError(f"assign must be 'each' or 'all', not {mode!r}")
        elif "upstream" in spec:  # each primitive's rule of the table, with the output's grad as 1
            if spec.pop("upstream") != "each":
                raise ValueError("upstream must be 'each'")
            for op in VALUE_PRIMITIVES:
                sends = tuple(_with_upstream_one(text) for text in EXERCISE.op(op).grad)
                if sends:
                    yield HintModel(Model(sends=((op, sends),)), op, op)
        elif "op" in spec:
            op = spec.pop("op")
            if op not in VALUE_PRIMITIVES:
                raise ValueError(f"unknown op {op!r}")
            yield HintModel(Model(sends=((op, tuple(spec.pop("sends"))),)), op, op)
        elif "dual" in spec:
            op = spec.pop("dual")
            if op not in DUAL_PRIMITIVES:
                raise ValueError(f"unknown Dual op {op!r}")
            yield HintModel(Model(ders=((op, spec.pop("der")),)), f"Dual.{op}", op)
        else:
            unknown = set(spec) - SEMANTIC_KEYS
            if unknown:
                raise ValueError(f"unknown model keys {sorted(unknown)}")
            if not hint_culprit:
                raise ValueError("a semantic model needs the hint's `culprit`")
            yield HintModel(Model(**spec), hint_culprit, "")
            spec = {}
        if spec:
            raise ValueError(f"unused model keys {sorted(spec)}")


class _UpstreamOne(ast.NodeTransformer):
    def visit_Name(self, node):
        return ast.Constant(1.0) if node.id == "g" else node


def _with_upstream_one(text):
    """A local rule of the table with `g` (the output's grad) replaced by 1.0."""
    return ast.unparse(_UpstreamOne().visit(ast.parse(text, mode="eval")))


def _lists(lang):
    """What the catalog's texts may name by a placeholder: lists of the exercise's ops."""
    return {"{methods}": listing(EXERCISE.methods(), lang),
            "{reflections}": listing((f"`{name}`" for name in EXERCISE.reflections()), lang)}


def _filled(text):
    """A text ({"en", "zh"}, or an entry of several) with the table's lists filled in, in each language."""
    filled = {}
    for key, value in text.items():
        if isinstance(value, dict):
            value = _filled(value)
        elif isinstance(value, str):
            for placeholder, listed in _lists(key).items():
                value = value.replace(placeholder, listed)
        filled[key] = value
    return filled


def _texts(value, *keys):
    return _filled({key: value[key] for key in keys if key in value})


def parse(data):
    rules = {key: _texts(value, "en", "zh", "summary", "nudge") for key, value in data.get("rules", {}).items()}
    local = {value["op"]: _texts(value, "en", "zh", "nudge") for value in data.get("local", {}).values()}
    hints, seen = [], set()
    for entry in data.get("hints", []):
        if entry["id"] in seen:
            raise ValueError(f"duplicate hint id {entry['id']!r}")
        seen.add(entry["id"])
        if entry["rule"] not in rules:
            raise ValueError(f"hint {entry['id']!r}: unknown rule {entry['rule']!r}")
        models = tuple(_models(entry))
        for hint_model in models:  # compile every formula now: typos fail here
            for _, texts in hint_model.model.sends:
                for text in texts:
                    Formula(text, REVERSE_VARIABLES)
            for _, text in hint_model.model.ders:
                Formula(text, DUAL_VARIABLES)
        hints.append(Hint(entry["id"], entry["rule"], entry["en"], entry["zh"], models,
                          entry.get("summary"), entry.get("explain")))
    return Catalog(rules, local, tuple(hints))


@functools.lru_cache(maxsize=None)
def load(path=CATALOG_FILE):
    with open(path, "rb") as catalog_file:
        return parse(tomllib.load(catalog_file))
