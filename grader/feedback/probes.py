"""Evidence for feedback: a fixed set of small probe programs run once per submission.

Two wrong engines can give the same wrong numbers on one program: with `=` in
`*`, two backward() calls on x * y leave x.grad as if leaf grads were reset.
The probes tell such explanations apart. Each probe is run on the submission
(on the feedback worker, after a test has failed) and on the reference; then

* a hint model is *refuted* when a probe the submission passes would fail under
  that model (the submission does not make that mistake), and
* a culprit is *cleared* when every probe about it passes.

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
    steps: tuple

    @property
    def last_read(self):
        return sum(1 for step in self.steps if step[0] == "read") - 1


def _probe(probe_id, about, build):
    g = Graph()
    build(g)
    return Probe(probe_id, tuple(about), tuple(tuple(s) if s[0] != "zero_grad" else ("zero_grad", tuple(s[1]))
                                              for s in g.steps))


def _steps(probe):
    return [list(s) if s[0] != "zero_grad" else ["zero_grad", list(s[1])] for s in probe.steps]


def _unary(op, x0, scale=2.5):
    def build(g):
        x = g.value(x0)
        y = getattr(x, op)()
        g.backward(y * scale)
        g.backward(y + y)

    return build


def _binary(op, x0, y0):
    def build(g):
        x, y = g.values(x0, y0)
        out = x + y if op == "+" else x * y
        g.backward(out)
        g.backward(out * 2.5)

    return build


def _pow(k, x0):
    def build(g):
        x = g.value(x0)
        y = x**k
        g.backward(y)
        g.backward(y + y)

    return build


def _paths(op):
    def build(g):
        x, y = g.values(1.5, -2.0)
        if op == "+":
            g.backward(x + x)
            g.backward((x * y) + (x * y))
        else:
            g.backward(x * x)
            a = x * y
            g.backward(a * a)

    return build


def _accumulate(op):
    def build(g):
        x, y = g.values(1.5, -2.0)
        out = x + y if op == "+" else x * y
        g.backward(out)
        g.backward(out)

    return build


def _reset(g):
    x, y = g.values(0.5, -1.5)
    z = (x * y).tanh() + x
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
    x, y = g.values(2.0, 3.0)
    a = x * 2.0
    b = y + 1.0
    g.backward(a * b)


def _chain(g):
    x = g.value(0.5)
    g.backward((x * 2.0).tanh().exp())


def _dual_binary(op, a, b):
    def build(g):
        x, y = g.dual(*a), g.dual(*b)
        g.op(op, x.ref, y.ref)
        g.read()

    return build


def _dual_constants(g):
    x = g.dual(2.0, 0.5)
    _ = x * 3.0
    _ = 3.0 + x
    g.read()


def _dual_unary(op):
    def build(g):
        x = g.dual(0.5, 2.0)
        getattr(x, op)()
        g.read()

    return build


PROBES = (
    _probe("add", ["+"], _binary("+", 2.0, -3.0)),
    _probe("mul", ["*"], _binary("*", 2.0, -3.0)),
    _probe("pow", ["**"], _pow(3, 1.5)),
    _probe("pow-negative", ["**"], _pow(-1, 1.5)),
    _probe("pow-fraction", ["**"], _pow(0.5, 2.25)),
    _probe("exp", ["exp"], _unary("exp", 0.7)),
    _probe("log", ["log"], _unary("log", 2.0)),
    _probe("tanh", ["tanh"], _unary("tanh", 0.5)),
    _probe("relu", ["relu"], _unary("relu", 1.5)),
    _probe("relu-negative", ["relu"], _unary("relu", -1.0)),
    _probe("relu-zero", ["relu"], _unary("relu", 0.0)),
    _probe("paths-add", ["+"], _paths("+")),
    _probe("paths-mul", ["*"], _paths("*")),
    _probe("accumulate-add", ["backward"], _accumulate("+")),
    _probe("accumulate-mul", ["backward"], _accumulate("*")),
    _probe("reset", ["backward"], _reset),
    _probe("root-leaf", ["backward"], _root_leaf),
    _probe("zero-grad", ["zero_grad"], _zero_grad),
    _probe("equal-data", ["backward"], _equal_data),
    _probe("chain", ["backward"], _chain),
    _probe("dual-add", ["Dual.+"], _dual_binary("+", (2.0, 0.5), (3.0, -1.0))),
    _probe("dual-mul", ["Dual.*"], _dual_binary("*", (2.0, 0.5), (3.0, -1.0))),
    _probe("dual-constants", ["Dual.lift"], _dual_constants),
    _probe("dual-exp", ["Dual.exp"], _dual_unary("exp")),
    _probe("dual-tanh", ["Dual.tanh"], _dual_unary("tanh")),
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

    def refutes(self, model, culprit=None):
        """The submission does not make this mistake: a probe it passes would
        fail with it, or a probe about the mistake's culprit gives other numbers
        than the mistake would (`culprit`: what the model is about)."""
        key = (model, culprit)
        if key not in self._refuted:
            refuted = False
            for probe in PROBES:
                if probe.id not in self.outcomes:
                    continue
                predicted = _as_got(simulate(_steps(probe), model))
                if self.passed[probe.id] and not agrees(_reference(probe), predicted, probe.last_read):
                    refuted = True
                elif culprit and culprit in probe.about and not _same_numbers(predicted, self.outcomes[probe.id],
                                                                                probe.last_read):
                    refuted = True
                if refuted:
                    break
            self._refuted[key] = refuted
        return self._refuted[key]

    def cleared(self, label):
        """Every probe about `label` ran and passed."""
        about = [p for p in PROBES if label in p.about]
        return bool(about) and all(self.passed.get(p.id) for p in about)

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
