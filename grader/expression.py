"""Random graph recipes, as the suites use them at grading time (standard library only).

An `Expression` is a recipe: some leaf values and a list of operations over
earlier nodes and constants. The recipes the suites use were generated once, at
authoring time (authoring/strategies.py, with Hypothesis), and are committed as
data (grader/suites/*/examples.json, see grader/generated.py). The same recipe
can be built on `Value` leaves or on `Dual` leaves of a `Graph`:

    @generated(15, expr=expressions())
    def test_random_graphs(engine, expr):
        g = Graph()
        leaves, root = expr.on_values(g)
        g.backward(root)
        engine.check(g)
"""

from dataclasses import dataclass

from grader.program import Node, apply


@dataclass(frozen=True)
class Ref:
    """An operand that is an earlier node of the recipe (leaves come first)."""

    index: int


@dataclass(frozen=True)
class Const:
    """An operand that is a plain number (or the constant exponent of `**`)."""

    value: float


@dataclass(frozen=True)
class Expression:
    point: tuple  # the leaves' data
    steps: tuple  # ((op, (operand, ...)), ...) in creation order; the last is the root
    direction: tuple  # one seed derivative per leaf, for forward mode

    @property
    def n_leaves(self):
        return len(self.point)

    def build(self, graph, leaves):
        """Apply the recipe to `leaves` (Value or Dual nodes of `graph`); returns the root."""
        nodes = list(leaves)
        for op, operands in self.steps:
            nodes.append(apply(op, [nodes[a.index] if isinstance(a, Ref) else a.value for a in operands]))
        return nodes[-1]

    def on_values(self, graph):
        """Value leaves at the recipe's point; returns (leaves, root)."""
        leaves = graph.values(*self.point)
        return leaves, self.build(graph, leaves)

    def on_duals(self, graph, direction=None):
        """Dual leaves at the recipe's point seeded with `direction`; returns (leaves, root)."""
        direction = self.direction if direction is None else direction
        leaves = [graph.dual(x, v) for x, v in zip(self.point, direction)]
        return leaves, self.build(graph, leaves)

    # --- as data (JSON: numbers keep their type, so an exponent 2 stays an int)

    def as_json(self):
        return {
            "point": list(self.point),
            "steps": [[op, [f"n{a.index}" if isinstance(a, Ref) else a.value for a in operands]]
                      for op, operands in self.steps],
            "direction": list(self.direction),
        }

    @classmethod
    def from_json(cls, data):
        steps = tuple(
            (op, tuple(Ref(int(a[1:])) if isinstance(a, str) else Const(a) for a in operands))
            for op, operands in data["steps"]
        )
        return cls(tuple(data["point"]), steps, tuple(data["direction"]))


def all_nodes(graph):
    """Every node built so far in `graph` (leaves and results), in creation order."""
    return [Node(graph, number) for number in range(len(graph.node_steps))]


def pick(mask, items):
    """The items whose bit is set in `mask` (bit i for item i): a random subset."""
    return [item for i, item in enumerate(items) if mask >> i & 1]
