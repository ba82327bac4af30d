"""Which call of the submission hung, and what that costs the programs after it.

A program that does not return within the call limit is stopped, and the
worker's progress page says which step it was running. A submission whose
`backward()` loops forever then fails the tests that call `backward()`, not the
others: once a call has hung, programs that make the same call get a short
limit (a correct call takes milliseconds on these programs), and after
GIVE_UP_AFTER hangs they are not run at all; programs that never make it keep
the normal limit and the budget they need.
"""

from dataclasses import dataclass, field
from grader.exercise import EXERCISE

RETRY_SECONDS = 1.0
GIVE_UP_AFTER = 3
NODE_KINDS = EXERCISE.node_kinds


def calls(steps):
    """The name of the submission's function that each step calls, e.g. `Value.backward()`."""
    kinds, names = [], []
    for step in steps:
        names.append(_call(step, kinds))
        if step[0] in NODE_KINDS:
            kinds.append(_kind(step, kinds))
    return names


def _kind(step, kinds):
    if step[0] == "op":
        refs = [kinds[int(a[1:])] for a in step[2:] if isinstance(a, str) and int(a[1:]) < len(kinds)]
        return "Dual" if "Dual" in refs else "Value"
    return "Dual" if step[0] == "dual" else "Value"


def _call(step, kinds):
    kind = step[0]
    if kind == "value":
        return "Value()"
    if kind == "dual":
        return "Dual()"
    if kind == "backward":
        return "Value.backward()"
    if kind == "zero_grad":
        return "zero_grad()"
    if kind == "read":
        return "reading .data/.grad (.val/.der)"
    if kind == "op":
        receiver = _kind(step, kinds)
        op, operands = EXERCISE.op(step[1]), step[2:]
        reflected = op.arity == 2 and not isinstance(operands[0], str)
        return f"{receiver}.{op.reflected if reflected else op.method}()"
    return kind


@dataclass
class Hangs:
    call_seconds: float
    retry_seconds: float = RETRY_SECONDS
    give_up_after: int = GIVE_UP_AFTER
    counts: dict = field(default_factory=dict)  # call name -> how many programs it hung

    def plan(self, steps):
        """(seconds this program may take, why it is not run at all or "")."""
        if not self.counts:  # nothing has hung: no need to name the program's calls
            return self.call_seconds, ""
        seen = [name for name in dict.fromkeys(calls(steps)) if name in self.counts]
        given_up = [name for name in seen if self.counts[name] >= self.give_up_after]
        if given_up:
            name = given_up[0]
            return 0.0, (f"not run: `{name}` did not return in {self.counts[name]} earlier programs, "
                         f"and this one calls it too")
        if seen:
            return min(self.call_seconds, self.retry_seconds), ""
        return self.call_seconds, ""

    def given_up(self, steps):
        """The call of `steps` that is no longer run, or ""."""
        return next((name for name in dict.fromkeys(calls(steps))
                     if self.counts.get(name, 0) >= self.give_up_after), "")

    def record(self, steps, index):
        """Note that step `index` of `steps` hung; returns the call's name (or "")."""
        names = calls(steps)
        if not isinstance(index, int) or not 0 <= index < len(names):
            return ""
        name = names[index]
        self.counts[name] = self.counts.get(name, 0) + 1
        return name
