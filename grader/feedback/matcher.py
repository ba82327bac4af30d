"""Recognise a known misconception by the numbers it produces.

For each hint of the catalog, in order, each of its models gives numbers on the
failing program (the oracle's predictions: simulated in the kit, recorded in the
student bundle); the hint matches when they are exactly the submission's answers
(every node, both fields, at every read up to the failing one). A hint is shown
only then: a partial resemblance is not enough.
"""

from dataclasses import dataclass

from grader.exercise import EXERCISE
from grader.feedback.catalog import load


@dataclass(frozen=True)
class Match:
    hint: object  # catalog.Hint
    culprit: str
    op: str

    def as_dict(self):
        """The hint as the results keep it: its nudge (en, zh), name and explanation."""
        return {"id": self.hint.id, "rule": self.hint.rule, "culprit": self.culprit, "op": self.op,
                "en": self.hint.text("en", self.op), "zh": self.hint.text("zh", self.op),
                "summary": self.hint.filled(self.hint.summary, self.op),
                "explain": self.hint.filled(self.hint.explain, self.op)}


def close(expected, got):
    if isinstance(got, dict) or isinstance(expected, dict):
        return expected == got
    return EXERCISE.matches(expected, got)


def agrees(outcome, got, upto):
    """The simulated outcome gives the submission's numbers at reads 0..upto."""
    if not outcome["ok"] or len(outcome["snapshots"]) <= upto or len(got["snapshots"]) <= upto:
        return False
    for want, have in zip(outcome["snapshots"][: upto + 1], got["snapshots"][: upto + 1]):
        if len(want) != len(have):
            return False
        for (w0, w1), (h0, h1) in zip(want, have):
            if not (close(w0, h0) and close(w1, h1)):
                return False
    return True


def features(steps):
    ops, kinds, has_number = set(), {s[0] for s in steps}, False
    for step in steps:
        if step[0] == "op":
            ops |= set(EXERCISE.primitives_of(step[1]))  # to skip models that cannot matter
            has_number |= any(not isinstance(a, str) for a in step[2:]) \
                or EXERCISE.dual_lift in EXERCISE.primitives_of(step[1], dual=True)  # a recipe lifts a number
    return ops, kinds, has_number


def relevant(hint_model, program):
    """Whether a model can give other numbers than the reference on this program."""
    ops, kinds, has_number = program
    model = hint_model.model
    if model.ders or model.lift_der:
        return "dual" in kinds and (not model.ders or model.ders[0][0] in ops) and (not model.lift_der or has_number)
    if "backward" not in kinds:
        return model.zero_grad != "set" and "zero_grad" in kinds
    if model.sends:
        return model.sends[0][0] in ops
    if model.assign and "all" not in model.assign:
        return model.assign[0] in ops
    if model.zero_grad != "set":
        return "zero_grad" in kinds
    return True


def match_all(steps, got, upto, oracle, only=None, catalog=None, evidence=None, expected=None):
    """Every (hint, model) whose numbers are the submission's, in catalog order,
    one per hint, leaving out models the probes refute (see probes.Evidence).

    Only a model whose numbers differ from the reference's can explain a
    difference: a right answer never gets a hint. `only`: a set of hint ids
    to try (the shrinker asks about one hint). `oracle` gives the predictions
    (grader/oracle.py); `expected`: the reference's outcome."""
    if not got.get("ok") or (only is not None and not only):
        return []
    if agrees(expected if expected is not None else oracle.expected(steps), got, upto):
        return []
    catalog = catalog or load()
    found, done = [], set()
    for prediction in oracle.predictions(steps, only):
        if prediction.hint in done or (only is not None and prediction.hint not in only):
            continue
        if evidence is not None and prediction.model is not None \
                and evidence.refutes(prediction.model, prediction.culprit):
            continue
        if agrees(prediction.outcome, got, upto):
            done.add(prediction.hint)
            found.append((Match(catalog.hint(prediction.hint), prediction.culprit, prediction.op), prediction.model))
    if evidence is not None:  # the explanation that fits the probes best first
        found.sort(key=lambda item: -evidence.score(item[1]) if item[1] is not None else 0)
    return [item[0] for item in found]


def match(steps, got, upto, oracle, only=None, catalog=None, evidence=None):
    """The first hint whose numbers are the submission's, or None."""
    found = match_all(steps, got, upto, oracle, only=only, catalog=catalog, evidence=evidence)
    return found[0] if found else None


def pick(found, label="", candidates=()):
    """The match that agrees best with a diagnosis: same culprit, then one of its
    candidates, then the first in catalog order."""
    for wanted in [label, *candidates]:
        for item in found:
            if wanted and item.culprit == wanted:
                return item
    return found[0] if found else None
