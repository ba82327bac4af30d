"""Does a submission's run agree with the reference's? Plain facts, no words.

The numbers of every node are compared within the exercise's tolerance
(grader/exercise.toml); a returned topological order is checked against the
graph. What a difference means, and what to tell the student, is the
feedback's (grader/feedback/explain.py), which builds on these facts.
"""

from dataclasses import dataclass

from grader.exercise import EXERCISE


def matches(expected, got):
    """NaN, infinity and non-numbers never match a finite expectation."""
    if isinstance(got, dict) or isinstance(expected, dict):
        return False
    return EXERCISE.matches(expected, got)


@dataclass(frozen=True)
class OrderProblem:
    """Why a returned order is not a topological order of the root's graph.

    kind: "repeated" (node appears twice), "missing" (node of the graph absent;
    `other`: a node with the same data, when there is one: a visited set keyed by
    value), "extra" (node not in the graph), "root-not-last", "before" (`other`,
    an input of `node`, comes after it)."""

    kind: str
    node: int
    other: int = None


def order_problem(graph, root, order, data=None):
    """The first OrderProblem of `order` (program node numbers, -1 for nodes the
    program did not make) for backward() from `root`, or None when it is a valid
    topological order. `data`: the nodes' expected values, to name a twin."""
    positions = {}
    for index, node in enumerate(order):
        if node >= 0:
            if node in positions:
                return OrderProblem("repeated", node)
            positions[node] = index
    reachable = graph.ancestors(root)
    missing = sorted(reachable - positions.keys())
    if missing:
        n = missing[0]
        twins = sorted(m for m in reachable if m != n and data and m < len(data) and n < len(data)
                       and data[m] == data[n])
        return OrderProblem("missing", n, twins[0] if twins else None)
    extra = sorted(n for n in positions if n not in reachable)
    if extra:
        return OrderProblem("extra", extra[0])
    if not order or order[-1] != root:
        return OrderProblem("root-not-last", root)
    for node in sorted(reachable):
        for parent in graph.inputs_of(node):
            if positions[parent] > positions[node]:
                return OrderProblem("before", node, parent)
    return None
