"""Which of the submission's own methods a wrong op is in, when the op is built from others.

`x - y`, `-x`, `x / y` and every op with a plain number on the left (`3 + x`
runs `__radd__`) are not primitives: the reference builds them from the
primitives (grader/exercise.toml, `built`), and the comparison blames the
primitive it reaches first. But a student's `__rsub__` can be wrong while `+`
and negation are right on their own. The probes try each such method alone
(grader/feedback/probes.py, FUNCTION_PROBES); the method to look at is the
innermost one that fails while everything it is built from passes.
"""

from grader.exercise import EXERCISE


def method_name(name, dual=False, reflected=False):
    """"Value.__rsub__" for ("-", False, True)."""
    op = EXERCISE.op(name)
    return f"{'Dual' if dual else 'Value'}.{op.reflected if reflected else op.method}"


def built_methods():
    """(op, dual, reflected) of every method that is built from other ops, and of
    the built methods those use (Dual's `-` uses negation, which is not graded alone)."""
    found = []
    for dual in (False, True):
        for name in EXERCISE.names(dual):
            if EXERCISE.op(name).recipe(dual) is not None:
                found.append((name, dual, False))
            if name in EXERCISE.reflected(dual):
                found.append((name, dual, True))
    for method in list(found):
        found += parts(*method)[0]
    return list(dict.fromkeys(found))


def parts(name, dual=False, reflected=False):
    """(the built methods it uses directly, every primitive label it is made of)."""
    recipe = EXERCISE.op(name).recipe(dual)
    inner = []
    if recipe is not None:
        if reflected:  # `3 - x` is `lift(3) - x`: the method may well use the unreflected one
            inner.append((name, dual, False))
        _walk(recipe, dual, inner)
    labels = list(EXERCISE.primitives_of(name, dual))
    if dual and reflected:
        labels.append(EXERCISE.dual_lift)  # the plain number becomes a Dual first
    return list(dict.fromkeys(inner)), list(dict.fromkeys(labels))


def _walk(node, dual, inner):
    if node.kind == "op" and EXERCISE.op(node.name).recipe(dual) is not None:
        inner.append((node.name, dual, False))
    for child in node.children:
        _walk(child, dual, inner)


def wrong_method(name, dual, reflected, evidence):
    """(op, dual, reflected) of the built method to blame for a wrong `name` node,
    or None when the numbers point at a primitive (or the probes cannot tell)."""
    # failed(): a probe gave other numbers. One that raised says nothing here: a
    # submission may build `-` without a `__neg__` of its own.
    if evidence is None or not evidence.failed(method_name(name, dual, reflected)):
        return None
    inner, labels = parts(name, dual, reflected)
    for part in inner:
        found = wrong_method(*part, evidence)
        if found:
            return found
    if all(evidence.cleared(label) for label in labels) and all(evidence.cleared(method_name(*p)) for p in inner):
        return name, dual, reflected
    return None


def is_reflected(step):
    """Whether an op step has a plain number on the left (`3 - n0`)."""
    return len(step) > 3 and not isinstance(step[2], str)
