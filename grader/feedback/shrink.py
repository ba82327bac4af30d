"""Shrink a failing graph program to a small one that fails the same way.

This shrinker works on any program, fixed or generated, after the test has
failed, so it only ever
improves the message: the test's outcome (and the score) is decided before it
runs, and it talks to a worker of its own (see Engine.refine).

Greedy and deterministic: starting from the program cut at the failing read,
it tries, in a fixed order, to drop a call, to call backward() on a smaller
root, to replace a node (and everything only it used) by a leaf holding the
value the node had, to drop a node from a zero_grad list, and finally to round
leaf values. A candidate is kept only if the reference still runs it and the
submission still fails it *the same way*: same kind of failure, same culprit
(or a narrower one among the original's candidates), same broken rule, same
hint. Every candidate costs one worker call; the calls and the time are bounded.
"""

import json
import time
from dataclasses import dataclass

from grader.program import graph_from_steps
from grader.exercise import EXERCISE

NODE_KINDS = EXERCISE.node_kinds
CALL_KINDS = EXERCISE.call_kinds
SHRINKABLE = ("grad", "der", "data", "error", "order")


@dataclass(frozen=True)
class Signature:
    kind: str
    labels: frozenset  # the culprit candidates
    rule: str  # a diagnosed rule, "" when none
    hint: str
    error: tuple  # (type, function, line) for raised errors

    @classmethod
    def of(cls, finding):
        labels = frozenset(finding.candidates or ([finding.culprit] if finding.culprit else []))
        rule = (finding.rule or {}).get("id", "") if (finding.rule or {}).get("diagnosed") else ""
        error = ()
        if finding.kind == "error" and finding.error:
            error = (finding.error.get("type"), finding.error.get("function"), finding.error.get("line"))
        return cls(finding.kind, labels, rule, (finding.hint or {}).get("id", ""), error)

    def kept_by(self, other, culprit):
        """`other` (a candidate's signature, whose best label is `culprit`) fails the same way."""
        if (other.kind, other.rule, other.hint, other.error) != (self.kind, self.rule, self.hint, self.error):
            return False
        if not self.labels:
            return not other.labels
        if culprit:
            return culprit in self.labels
        return bool(other.labels) and other.labels <= self.labels


# ------------------------------------------------------------------ programs


def node_count(steps):
    return sum(1 for step in steps if step[0] in NODE_KINDS)


def _refs(step):
    if step[0] == "op":
        return [int(a[1:]) for a in step[2:] if isinstance(a, str)]
    if step[0] == "backward":
        return [int(step[1][1:])]
    if step[0] == "zero_grad":
        return [int(ref[1:]) for ref in step[1]]
    return []


def _inputs(steps):
    found = []
    for step in steps:
        if step[0] in NODE_KINDS:
            found.append(_refs(step))
    return found


def _closure(steps, roots):
    inputs = _inputs(steps)
    needed, stack = set(), list(roots)
    while stack:
        node = stack.pop()
        if node not in needed:
            needed.add(node)
            stack.extend(inputs[node])
    return needed


def collect(steps, extra_roots=()):
    """Drop the nodes nothing needs (not a call's argument, not an input of one), renumbering."""
    roots = set(extra_roots)
    for step in steps:
        if step[0] in CALL_KINDS:
            roots.update(_refs(step))
    keep = _closure(steps, roots)
    new_number, result, node = {}, [], 0
    for step in steps:
        if step[0] in NODE_KINDS:
            if node in keep:
                new_number[node] = len(new_number)
                result.append(_renumber(step, new_number))
            node += 1
        else:
            result.append(_renumber(step, new_number))
    return result, new_number


def _renumber(step, new_number):
    def ref(a):
        return f"n{new_number[int(a[1:])]}" if isinstance(a, str) else a

    if step[0] == "op":
        return ["op", step[1], *[ref(a) for a in step[2:]]]
    if step[0] == "backward":
        return ["backward", ref(step[1])]
    if step[0] == "zero_grad":
        return ["zero_grad", [ref(a) for a in step[1]]]
    return list(step)


def _ancestors(steps, node):
    return _closure(steps, [node])


def _node_positions(steps):
    return [i for i, step in enumerate(steps) if step[0] in NODE_KINDS]


def _nice(value):
    """Simpler numbers to try in place of `value`, simplest first."""
    found = []
    for candidate in (round(value), round(value, 1), round(value, 2)):
        candidate = float(candidate)
        if candidate != value and candidate not in found:
            found.append(candidate)
    return found


# ------------------------------------------------------------------ shrinker


class Shrinker:
    def __init__(self, run_reference, run_submission, judge, max_calls=60, max_seconds=4.0):
        """`run_reference(steps)` -> outcome; `run_submission(steps)` -> Reply;
        `judge(steps, expected, reply)` -> the first Finding, or None when it passes."""
        self.run_reference = run_reference
        self.run_submission = run_submission
        self.judge = judge
        self.max_calls = max_calls
        self.max_seconds = max_seconds
        self.calls = 0

    def shrink(self, steps, finding):
        """(steps, finding) of the smallest program found, or None when even the
        cut original does not fail the same way (then there is nothing to show)."""
        if finding.kind not in SHRINKABLE:
            return None
        self.deadline = time.monotonic() + self.max_seconds
        self.seen = set()
        target = Signature.of(finding)
        current = self._cut(steps, finding)
        best = self._try(current, target)
        if best is None:
            return None
        current, current_finding = best
        while not self._exhausted():
            for candidate in self._candidates(current, current_finding):
                if self._exhausted():
                    break
                found = self._try(candidate, target)
                if found is not None:
                    current, current_finding = found
                    break
            else:
                break
        return current, current_finding

    def _exhausted(self):
        return self.calls >= self.max_calls or time.monotonic() > self.deadline

    # A program shrinks toward: no reads but the last, nothing after the failure.
    @staticmethod
    def _cut(steps, finding):
        if finding.kind == "error" and finding.error and isinstance(finding.error.get("step"), int):
            cut = steps[: finding.error["step"] + 1]
        elif finding.snapshot is not None:
            reads = [i for i, step in enumerate(steps) if step[0] == "read"]
            cut = steps[: reads[finding.snapshot] + 1]
        else:
            cut = list(steps)
        last = len(cut) - 1
        return [step for i, step in enumerate(cut) if step[0] != "read" or i == last]

    def _try(self, steps, target):
        key = json.dumps(steps)
        if key in self.seen:
            return None
        self.seen.add(key)
        try:
            expected = self.run_reference(steps)
        except Exception:  # noqa: BLE001 - a candidate the reference cannot run is simply not kept
            return None
        if not expected.get("ok"):
            return None
        self.calls += 1
        reply = self.run_submission(steps)
        if reply.failure:
            return None
        finding = self.judge(steps, expected, reply)
        if finding is None:
            return None
        if not target.kept_by(Signature.of(finding), finding.culprit):
            return None
        return steps, finding

    # ---------------------------------------------------------- candidates

    def _candidates(self, steps, finding):
        extra = self._extra_roots(steps, finding)
        yield from self._drop_calls(steps, extra)
        yield from self._leafify(steps, finding, extra)
        yield from self._hoist(steps, finding, extra)
        yield from self._reroot(steps, finding, extra)
        yield from self._shorten_zero_grad(steps, extra)
        yield from self._simplify_numbers(steps, extra)

    @staticmethod
    def _extra_roots(steps, finding):
        """Nodes that must stay although no call uses them (forward-mode and data findings)."""
        if finding.kind in ("der", "data"):
            return set(finding.culprits)
        if finding.kind == "error" and steps and steps[-1][0] == "op":
            return {node_count(steps) - 1}
        return set()

    def _collected(self, steps, extra):
        collected, new_number = collect(steps, extra)
        return collected, new_number

    def _drop_calls(self, steps, extra):
        calls = [i for i, step in enumerate(steps) if step[0] in CALL_KINDS]
        for i in calls[:-1]:
            yield self._collected(steps[:i] + steps[i + 1:], extra)[0]

    def _reroot(self, steps, finding, extra):
        backwards = [i for i, step in enumerate(steps) if step[0] == "backward"]
        if not backwards or finding.kind not in ("grad", "order", "error"):
            return
        last = backwards[-1]
        root = int(steps[last][1][1:])
        positions = _node_positions(steps)
        inner = [n for n in _ancestors(steps, root) if n != root and steps[positions[n]][0] == "op"]
        culprits = [n for n in finding.culprits if n in inner]
        inputs = _inputs(steps)
        consumers = [n for n in inner if set(inputs[n]) & set(culprits) and n not in culprits]
        rest = sorted((n for n in inner if n not in culprits and n not in consumers),
                      key=lambda n: (len(_ancestors(steps, n)), n))
        for n in (culprits + consumers + rest)[:8]:
            changed = list(steps)
            changed[last] = ["backward", f"n{n}"]
            yield self._collected(changed, extra)[0]

    def _leafify(self, steps, finding, extra):
        positions = _node_positions(steps)
        expected = self.run_reference([s for s in steps if s[0] != "read"] + [["read"]])
        if not expected.get("ok"):
            return
        values = expected["snapshots"][-1]
        protected = set(finding.culprits) | extra
        for step in steps:
            if step[0] == "backward":
                protected.add(int(step[1][1:]))
        ops = [n for n, i in enumerate(positions) if steps[i][0] == "op" and n not in protected]
        ops.sort(key=lambda n: (-len(_ancestors(steps, n)), n))
        for n in ops:
            data, second = values[n]
            if isinstance(data, dict) or isinstance(second, dict):
                continue
            changed = list(steps)
            is_dual = _is_dual(steps, n)
            changed[positions[n]] = ["dual", data, second] if is_dual else ["value", data]
            yield self._collected(changed, extra)[0]

    def _hoist(self, steps, finding, extra):
        """Use an op's input in its place (x instead of x + y): the op disappears."""
        positions = _node_positions(steps)
        inputs = _inputs(steps)
        protected = set(finding.culprits) | extra
        ops = [n for n, i in enumerate(positions) if steps[i][0] == "op" and n not in protected]
        ops.sort(key=lambda n: (-len(_ancestors(steps, n)), n))
        for n in ops:
            for parent in dict.fromkeys(inputs[n]):
                if _is_dual(steps, parent) == _is_dual(steps, n):
                    yield self._collected(_substitute(steps, n, parent), {_shift(e, n, parent) for e in extra})[0]

    def _shorten_zero_grad(self, steps, extra):
        for i, step in enumerate(steps):
            if step[0] == "zero_grad" and len(step[1]) > 1:
                for ref in step[1]:
                    changed = list(steps)
                    changed[i] = ["zero_grad", [r for r in step[1] if r != ref]]
                    yield self._collected(changed, extra)[0]

    def _simplify_numbers(self, steps, extra):
        for i, step in enumerate(steps):
            if step[0] == "value":
                for nicer in _nice(step[1]):
                    changed = list(steps)
                    changed[i] = ["value", nicer]
                    yield changed
            elif step[0] == "dual":
                for field in range(1, len(step)):  # ["dual", val] leaves der to Dual's default
                    for nicer in _nice(step[field]):
                        changed = list(steps)
                        changed[i] = list(step)
                        changed[i][field] = nicer
                        yield changed


def _shift(node, removed, replacement):
    if node == removed:
        return replacement
    return node - 1 if node > removed else node


def _substitute(steps, removed, replacement):
    """The program without node `removed`, every use of it reading `replacement` instead."""
    result, node = [], 0
    mapping = {}
    for step in steps:
        if step[0] in NODE_KINDS:
            if node != removed:
                mapping[node] = len(mapping)
            node += 1
    mapping[removed] = mapping[replacement]
    node = 0
    for step in steps:
        if step[0] in NODE_KINDS:
            if node != removed:
                result.append(_renumber(step, mapping))
            node += 1
        else:
            result.append(_renumber(step, mapping))
    return result


def _is_dual(steps, node):
    kinds = []
    for step in steps:
        if step[0] not in NODE_KINDS:
            continue
        if step[0] == "dual":
            kinds.append(True)
        elif step[0] == "value":
            kinds.append(False)
        else:
            kinds.append(any(isinstance(a, str) and kinds[int(a[1:])] for a in step[2:]))
    return kinds[node]


def judge_with(explain, rule=None, category=None, hints=frozenset(), evidence=None, oracle=None, locate=None):
    """A judge for the shrinker from explain(): only the original's hint is tried."""

    def judge(steps, expected, reply):
        findings = explain(graph_from_steps(steps), expected, reply, rule=rule, category=category, hints=hints,
                           evidence=evidence, oracle=oracle, locate=locate)
        return findings[0] if findings else None

    return judge
