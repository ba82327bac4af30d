"""Evidence for feedback: a fixed set of small probe programs run once per submission.

Two wrong engines can give the same wrong numbers on one program: with `=` in
`*`, two backward() calls on x * y leave x.grad as if leaf grads were reset.
The probes tell such explanations apart. Each is run on the submission (on the
feedback worker, after a test has failed) and compared with the reference.

Most probes are *pure*: built from one op only (tanh(tanh(x)), (x * y) * x), so
a mistake elsewhere cannot disturb them. Then

* a culprit is *cleared* when every probe about it passes;
* a hint model is *refuted* when a probe the submission passes would fail
  under that model (the submission does not make that mistake), or when a probe
  about the model's culprit, whose other ops are cleared, gives other numbers
  than the model predicts (the submission makes some other mistake there).

Probes never decide a score: they only choose between explanations.
"""

from dataclasses import dataclass

from grader.exercise import EXERCISE, REVERSE_VARIABLES
from grader.feedback.functions import built_methods, method_name
from grader.feedback.matcher import agrees
from grader.feedback.simulate import simulate
from grader.formula import Formula
from grader.program import Graph, apply


@dataclass(frozen=True)
class Probe:
    id: str
    about: tuple  # the culprits it tests
    ops: tuple  # the culprit labels of everything it uses besides backward()/zero_grad
    steps: tuple

    @property
    def last_read(self):
        return sum(1 for step in self.steps if step[0] == "read") - 1


def _probe(probe_id, about, build):
    g = Graph()
    build(g)
    steps = tuple(tuple(s) if s[0] != "zero_grad" else ("zero_grad", tuple(s[1])) for s in g.steps)
    ops = tuple(dict.fromkeys(EXERCISE.label(step[1], dual=g.is_dual(number))
                              for number, step in enumerate(g.node_steps) if step[0] == "op"))
    return Probe(probe_id, tuple(about), ops, steps)


def _steps(probe):
    return [list(s) if s[0] != "zero_grad" else ["zero_grad", list(s[1])] for s in probe.steps]


# Pure probes of each primitive, at the table's probe points: the op applied to
# its own output gives an upstream factor other than 1; a leaf used twice by the
# op tests its accumulation.


def _apply(name, node, operands):
    """Op `name` on `node`, with the constant operands of its probe point (x ** k)."""
    op = EXERCISE.op(name)
    return apply(name, [node, *operands[1:]]) if op.exponents else apply(name, [node])


def _twice(name, operands):
    def build(g):
        inner = _apply(name, g.value(operands[0]), operands)
        second = (operands[0], EXERCISE.op(name).exponents[0]) if EXERCISE.op(name).exponents else operands
        g.backward(_apply(name, inner, second))

    return build


def _binary(name, operands):
    def build(g):
        x, y = g.values(*operands)
        g.backward(g.op(name, g.op(name, x.ref, y.ref).ref, x.ref))

    return build


def _upstream(name, operands):
    """The op times 2.5: a rule that forgets out.grad shows, where the op's own slope is 1."""
    def build(g):
        x, y = g.values(operands[0], 0.75)
        inner = g.op(name, x.ref, y.ref) if EXERCISE.op(name).arity == 2 else _apply(name, x, operands)
        g.backward(inner * 2.5)

    return build


def _shared(name):
    """x used by the op and by another op, in both orders: `=` instead of `+=` shows."""
    def build(g):
        point = (1.5, *(EXERCISE.op(name).exponents[:1]))
        x = g.value(1.5)
        g.backward(_apply(name, x, point) + x * 2.0)
        y = g.value(1.5)
        g.backward(y * 2.0 + _apply(name, y, point))

    return build


def _accumulate(name):
    def build(g):
        x, y = g.values(1.5, -2.0)
        out = g.op(name, x.ref, y.ref)
        g.backward(out)
        g.backward(out)

    return build


def _slope_is_one(name, operands):
    """Whether the op's local rule sends exactly its upstream gradient at this point."""
    op = EXERCISE.op(name)
    env = {"a": operands[0], "x": operands[0], "b": operands[1] if len(operands) > 1 else 0.0,
           "k": operands[1] if len(operands) > 1 else 0.0, "g": 1.0}
    env["t"] = Formula(op.value, ("a", "b", "x", "k"))(env)
    return all(Formula(text, REVERSE_VARIABLES)(env) == 1.0 for text in op.grad)


def _op_probes():
    probes = []
    for name in EXERCISE.primitives():
        op = EXERCISE.op(name)
        label = op.text["en"]
        for number, operands in enumerate(op.probes):
            suffix = f"-{number + 1}" if number else ""
            build = _binary(name, operands) if op.arity == 2 and not op.exponents else _twice(name, operands)
            probes.append(_probe(f"{label}{suffix}", [name], build))
            if _slope_is_one(name, operands):
                probes.append(_probe(f"{label}{suffix}-upstream", [name], _upstream(name, operands)))
        if op.arity == 1 or op.exponents:
            probes.append(_probe(f"{label}-shared", [name], _shared(name)))
    return probes


def _reset(g):
    x, y = g.values(0.5, -1.5)
    z = ((x * y) * x) * y
    g.backward(z)
    g.backward(z)


def _root_leaf(g):
    x = g.value(1.5)
    g.backward(x)
    g.backward(x)


def _zero_grad(g):
    x, y = g.values(1.5, -2.0)
    z = x * y
    g.backward(z)
    g.zero_grad([x, y])
    g.backward(z)


def _equal_data(g):
    x, y = g.values(1.5, 2.0)
    a = x * 2.0
    b = y * 1.5
    g.backward(a * b)


def _chain(g):
    x = g.value(0.5)
    g.backward(((x * 2.0) * 3.0) * 0.5)


def _dual_binary(name):
    def build(g):
        a, b = g.dual(2.0, 0.5), g.dual(3.0, -1.0)
        g.op(name, g.op(name, a.ref, b.ref).ref, a.ref)
        g.read()

    return build


def _dual_twice(name):
    def build(g):
        apply(name, [apply(name, [g.dual(0.5, 2.0)])])
        g.read()

    return build


def _dual_constants(g):
    a = g.dual(2.0, 0.5)
    _ = a * 3.0
    _ = a + 3.0  # a number on the right: `3.0 + a` is __radd__'s own probe
    g.read()


def _dual_probes():
    probes = []
    for name in EXERCISE.primitives(dual=True):
        build = _dual_binary(name) if EXERCISE.op(name).arity == 2 else _dual_twice(name)
        probes.append(_probe(f"dual-{EXERCISE.op(name).text['en']}", [f"Dual.{name}"], build))
    return probes + [_probe("dual-constants", [EXERCISE.dual_lift], _dual_constants)]


# Probes of the methods built from other ops (grader/feedback/functions.py): each
# alone, applied to its own result so that a wrong upstream factor shows too.

CONSTANT = 2.0  # the plain number on the left of a reflected op


def _method_probe(name, dual, reflected):
    op = EXERCISE.op(name)

    def build(g):
        if dual:
            a, b = g.dual(2.0, 0.5), g.dual(-1.5, 1.0)
        else:
            a, b = g.values(1.5, -2.0)
        if reflected:
            out = g.op(name, CONSTANT, g.op(name, CONSTANT, a.ref).ref)
        elif op.arity == 2:
            out = g.op(name, g.op(name, a.ref, b.ref).ref, a.ref)
        else:
            out = g.op(name, g.op(name, a.ref).ref)
        if dual:
            g.read()
        else:
            g.backward(out)

    return build


FUNCTION_PROBES = tuple(
    _probe(f"method-{method_name(*method)}", [method_name(*method)], _method_probe(*method))
    for method in built_methods()
)

PROBES = (
    *_op_probes(),
    *(_probe(f"accumulate-{EXERCISE.op(name).text['en']}", ["backward"], _accumulate(name))
      for name in EXERCISE.primitives() if EXERCISE.op(name).arity == 2 and not EXERCISE.op(name).exponents),
    _probe("reset", ["backward"], _reset),
    _probe("root-leaf", ["backward"], _root_leaf),
    _probe("equal-data", ["backward"], _equal_data),
    _probe("chain", ["backward"], _chain),
    _probe("zero-grad", ["zero_grad"], _zero_grad),
    *_dual_probes(),
)


ALL_PROBES = PROBES + FUNCTION_PROBES


class Evidence:
    """Which probes a submission passes, and what that rules out."""

    def __init__(self, outcomes, expected=None):
        """`outcomes`: probe id -> the submission's outcome (absent: it could not
        run); `expected`: probe id -> the reference's (default: simulated)."""
        self.outcomes = dict(outcomes)
        expected = expected or {}
        self.passed, self.raised = {}, set()
        for probe in ALL_PROBES:
            if probe.id in self.outcomes:
                want = expected.get(probe.id) or _reference(probe)
                got = self.outcomes[probe.id]
                self.passed[probe.id] = bool(got.get("ok")) and agrees(want, got, probe.last_read)
                if not got.get("ok"):
                    self.raised.add(probe.id)
        self._refuted = {}

    @classmethod
    def gather(cls, run_reference, run_submission, probes=None):
        outcomes, expected = {}, {}
        for probe in ALL_PROBES if probes is None else probes:
            steps = _steps(probe)
            expected[probe.id] = run_reference(steps)
            reply = run_submission(steps)
            if reply.failure:
                break  # a hanging or crashing submission: stop asking
            outcomes[probe.id] = reply.outcome
        return cls(outcomes, expected)

    def cleared(self, label):
        """Every probe about `label` ran and passed."""
        about = [p for p in ALL_PROBES if label in p.about]
        return bool(about) and all(self.passed.get(p.id) for p in about)

    def failed(self, label):
        """A probe about `label` ran to the end and gave other numbers than the reference."""
        return any(p.id in self.passed and not self.passed[p.id] and p.id not in self.raised
                   for p in ALL_PROBES if label in p.about)

    def refutes(self, model, culprit=None):
        """The submission does not make this mistake (see the module docstring);
        `culprit`: what the model is about, for the second test."""
        key = (model, culprit)
        if key not in self._refuted:
            self._refuted[key] = any(self._refuted_by(probe, model, culprit) for probe in PROBES
                                     if probe.id in self.outcomes)
        return self._refuted[key]

    def _refuted_by(self, probe, model, culprit):
        predicted = _predicted(probe, model)
        if self.passed[probe.id]:
            return not agrees(_reference(probe), predicted, probe.last_read)
        if culprit and culprit in probe.about and all(op == culprit or self.cleared(op) for op in probe.ops):
            return not _same_numbers(predicted, self.outcomes[probe.id], probe.last_read)
        return False

    def score(self, model):
        """How many probes the model predicts exactly, passed or failed: the
        better of two explanations that both fit a program explains more."""
        key = ("score", model)
        if key not in self._refuted:
            self._refuted[key] = sum(
                _same_numbers(_predicted(probe, model), self.outcomes[probe.id], probe.last_read)
                for probe in PROBES if probe.id in self.outcomes
            )
        return self._refuted[key]

    def as_dict(self):
        return dict(sorted(self.passed.items()))


_REFERENCE = {}


def _reference(probe):
    """The probe's expected outcome (the simulator gives the reference's numbers)."""
    if probe.id not in _REFERENCE:
        _REFERENCE[probe.id] = simulate(_steps(probe))
    return _REFERENCE[probe.id]


_PREDICTED = {}


def _predicted(probe, model):
    """The probe's outcome under a misconception's model: fixed programs and the
    catalog's models, so each is simulated once per process, whoever is graded."""
    key = (probe.id, model)
    if key not in _PREDICTED:
        _PREDICTED[key] = _as_got(simulate(_steps(probe), model))
    return _PREDICTED[key]


def _same_numbers(predicted, got, last_read):
    if predicted.get("ok") != got.get("ok"):
        return False
    if not predicted.get("ok"):
        return True  # both raised: no numbers to compare
    return agrees(predicted, got, last_read)


def _as_got(outcome):
    return outcome if outcome["ok"] else {"ok": False, "snapshots": outcome["snapshots"]}
