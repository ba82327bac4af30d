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

from grader.feedback.matcher import agrees
from grader.feedback.simulate import simulate
from grader.program import Graph


@dataclass(frozen=True)
class Probe:
    id: str
    about: tuple  # the culprits it tests
    ops: tuple  # the culprit labels of everything it uses besides backward()/zero_grad
    steps: tuple

    @property
    def last_read(self):
        return sum(1 for step in self.steps if step[0] == "read") - 1


def _probe(probe_id, about, ops, build):
    g = Graph()
    build(g)
    steps = tuple(tuple(s) if s[0] != "zero_grad" else ("zero_grad", tuple(s[1])) for s in g.steps)
    return Probe(probe_id, tuple(about), tuple(ops), steps)


def _steps(probe):
    return [list(s) if s[0] != "zero_grad" else ["zero_grad", list(s[1])] for s in probe.steps]


# Pure probes of each op: the op applied to its own output gives an upstream
# factor other than 1; a leaf used twice by the op tests its accumulation.


def _twice(op, x0, k=None):
    def build(g):
        x = g.value(x0)
        inner = x**k if op == "**" else getattr(x, op)()
        g.backward(inner**2 if op == "**" else getattr(inner, op)())

    return build


def _binary(op, x0, y0):
    def build(g):
        x, y = g.values(x0, y0)
        g.backward(g.op(op, g.op(op, x.ref, y.ref).ref, x.ref))

    return build


def _upstream(op, x0):
    def build(g):
        x, y = g.values(x0, 0.75)
        inner = getattr(x, op)() if op in ("exp", "log", "tanh", "relu") else g.op(op, x.ref, y.ref)
        g.backward(inner * 2.5)

    return build


def _shared(op, x0):
    """x used by the op and by another op, in both orders: `=` instead of `+=` shows."""
    def build(g):
        def apply(x):
            return x**2 if op == "**" else getattr(x, op)()

        x = g.value(x0)
        g.backward(apply(x) + x * 2.0)
        y = g.value(x0)
        g.backward(y * 2.0 + apply(y))

    return build


def _accumulate(op):
    def build(g):
        x, y = g.values(1.5, -2.0)
        out = g.op(op, x.ref, y.ref)
        g.backward(out)
        g.backward(out)

    return build


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


def _dual_binary(op):
    def build(g):
        a, b = g.dual(2.0, 0.5), g.dual(3.0, -1.0)
        g.op(op, g.op(op, a.ref, b.ref).ref, a.ref)
        g.read()

    return build


def _dual_twice(op):
    def build(g):
        a = g.dual(0.5, 2.0)
        getattr(getattr(a, op)(), op)()
        g.read()

    return build


def _dual_constants(g):
    a = g.dual(2.0, 0.5)
    _ = a * 3.0
    _ = 3.0 + a
    g.read()


PROBES = (
    _probe("add", ["+"], ["+"], _binary("+", 2.0, -3.0)),
    _probe("mul", ["*"], ["*"], _binary("*", 2.0, -3.0)),
    _probe("pow", ["**"], ["**"], _twice("**", 1.5, 3)),
    _probe("pow-negative", ["**"], ["**"], _twice("**", 1.5, -1)),
    _probe("pow-fraction", ["**"], ["**"], _twice("**", 2.25, 0.5)),
    _probe("exp", ["exp"], ["exp"], _twice("exp", 0.3)),
    _probe("log", ["log"], ["log"], _twice("log", 3.0)),
    _probe("tanh", ["tanh"], ["tanh"], _twice("tanh", 0.5)),
    _probe("relu", ["relu"], ["relu"], _twice("relu", 1.5)),
    _probe("relu-negative", ["relu"], ["relu"], _twice("relu", -1.0)),
    _probe("relu-zero", ["relu"], ["relu"], _twice("relu", 0.0)),
    _probe("add-upstream", ["+"], ["+", "*"], _upstream("+", 2.0)),
    _probe("relu-upstream", ["relu"], ["relu", "*"], _upstream("relu", 1.5)),
    *(_probe(f"{op}-shared", [op], [op, "+", "*"], _shared(op, 1.5)) for op in ("**", "exp", "log", "tanh", "relu")),
    _probe("accumulate-add", ["backward"], ["+"], _accumulate("+")),
    _probe("accumulate-mul", ["backward"], ["*"], _accumulate("*")),
    _probe("reset", ["backward"], ["*"], _reset),
    _probe("root-leaf", ["backward"], [], _root_leaf),
    _probe("equal-data", ["backward"], ["*"], _equal_data),
    _probe("chain", ["backward"], ["*"], _chain),
    _probe("zero-grad", ["zero_grad"], ["*"], _zero_grad),
    _probe("dual-add", ["Dual.+"], ["Dual.+"], _dual_binary("+")),
    _probe("dual-mul", ["Dual.*"], ["Dual.*"], _dual_binary("*")),
    _probe("dual-exp", ["Dual.exp"], ["Dual.exp"], _dual_twice("exp")),
    _probe("dual-tanh", ["Dual.tanh"], ["Dual.tanh"], _dual_twice("tanh")),
    _probe("dual-constants", ["Dual.lift"], ["Dual.*", "Dual.+"], _dual_constants),
)


class Evidence:
    """Which probes a submission passes, and what that rules out."""

    def __init__(self, outcomes, expected=None):
        """`outcomes`: probe id -> the submission's outcome (absent: it could not
        run); `expected`: probe id -> the reference's (default: simulated)."""
        self.outcomes = dict(outcomes)
        expected = expected or {}
        self.passed = {}
        for probe in PROBES:
            if probe.id in self.outcomes:
                want = expected.get(probe.id) or _reference(probe)
                got = self.outcomes[probe.id]
                self.passed[probe.id] = bool(got.get("ok")) and agrees(want, got, probe.last_read)
        self._refuted = {}

    @classmethod
    def gather(cls, run_reference, run_submission, probes=PROBES):
        outcomes, expected = {}, {}
        for probe in probes:
            steps = _steps(probe)
            expected[probe.id] = run_reference(steps)
            reply = run_submission(steps)
            if reply.failure:
                break  # a hanging or crashing submission: stop asking
            outcomes[probe.id] = reply.outcome
        return cls(outcomes, expected)

    def cleared(self, label):
        """Every probe about `label` ran and passed."""
        about = [p for p in PROBES if label in p.about]
        return bool(about) and all(self.passed.get(p.id) for p in about)

    def refutes(self, model, culprit=None):
        """The submission does not make this mistake (see the module docstring);
        `culprit`: what the model is about, for the second test."""
        key = (model, culprit)
        if key not in self._refuted:
            self._refuted[key] = any(self._refuted_by(probe, model, culprit) for probe in PROBES
                                     if probe.id in self.outcomes)
        return self._refuted[key]

    def _refuted_by(self, probe, model, culprit):
        predicted = _as_got(simulate(_steps(probe), model))
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
                _same_numbers(_as_got(simulate(_steps(probe), model)), self.outcomes[probe.id], probe.last_read)
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


def _same_numbers(predicted, got, last_read):
    if predicted.get("ok") != got.get("ok"):
        return False
    if not predicted.get("ok"):
        return True  # both raised: no numbers to compare
    return agrees(predicted, got, last_read)


def _as_got(outcome):
    return outcome if outcome["ok"] else {"ok": False, "snapshots": outcome["snapshots"]}
