"""A graph program as a script a student can paste next to their file and run."""

from grader.program import render_step
from grader.exercise import EXERCISE

NODE_KINDS = EXERCISE.node_kinds
SHOWN = 4


def _number(value):
    if isinstance(value, dict):
        return value.get("nonfinite") or "?"
    return f"{value:.6g}"


def runnable(steps, expected=None, got=None, show=(), module="tiny_autograd"):
    """The steps up to (not including) the last read, then prints of the nodes in
    `show` with what they should print (and what the submission gave) as comments."""
    last_read = max((i for i, s in enumerate(steps) if s[0] == "read"), default=len(steps))
    body = steps[:last_read]
    names = []
    if any(s[0] == "value" for s in body):
        names.append("Value")
    if any(s[0] == "dual" for s in body):
        names.append("Dual")
    if any(s[0] == "zero_grad" for s in body):
        names.append("zero_grad")
    lines = [f"from {module} import {', '.join(names) or 'Value'}", ""]
    node = 0
    for step in body:
        code = render_step(step)
        if step[0] in NODE_KINDS:
            lines.append(f"n{node} = {code}")
            node += 1
        elif code:
            lines.append(code)
    is_dual = _dual_nodes(body)
    for number in list(show)[:SHOWN]:
        field = "der" if number in is_dual else "grad"
        comment = ""
        if expected is not None:
            comment = f"  # expected / 应为 {_number(expected[number][1])}"
            if got is not None:
                comment += f", yours / 你的 {_number(got[number][1])}"
        lines.append(f"print(n{number}.{field}){comment}")
    return "\n".join(lines)


def _dual_nodes(steps):
    duals, node = set(), 0
    for step in steps:
        if step[0] not in NODE_KINDS:
            continue
        if step[0] == "dual" or (step[0] == "op" and any(isinstance(a, str) and int(a[1:]) in duals for a in step[2:])):
            duals.add(node)
        node += 1
    return duals
