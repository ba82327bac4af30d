"""The graded suites as written.

* A Dual built without a derivative (`g.dual(3.0)`) is run as the submission's
  own `Dual(3.0)`: the exercise's default der of 0 is what gets graded.
"""

from grader.program import Graph
from grader.worker.interpreter import Interpreter


# ------------------------------------------------------------- Dual's default der


class _DualWithDefaultOne:
    def __init__(self, val, der=1.0):
        self.val, self.der = val, der


def test_a_dual_without_der_is_the_submissions_own_default(engine):
    g = Graph()
    g.dual(3.0)
    g.dual(-1.5, 2.0)
    g.read()
    assert g.steps[:2] == [["dual", 3.0], ["dual", -1.5, 2.0]]
    assert g.as_python().splitlines() == ["n0 = Dual(3.0)", "n1 = Dual(-1.5, 2.0)"]

    reference = Interpreter(vars(engine)).run(g.steps)
    assert reference == {"ok": True, "snapshots": [[[3.0, 0.0], [-1.5, 2.0]]], "orders": []}
    # The interpreter passes no der of its own: a default der of 1 shows.
    other = Interpreter({"Dual": _DualWithDefaultOne}).run(g.steps)
    assert other["snapshots"] == [[[3.0, 1.0], [-1.5, 2.0]]]

