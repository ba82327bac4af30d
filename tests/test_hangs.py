"""grader/hangs.py: a call that hung costs the programs that make it, not the others."""

from grader.hangs import Hangs, calls
from grader.program import Graph


def _program(with_backward=True, dual=False):
    g = Graph()
    if dual:
        d = g.dual(0.5, 1.0)
        (2.0 * d).tanh()
        g.read()
        return g.steps
    x, y = g.values(1.0, 2.0)
    root = (x * y + 1.0).tanh()
    if with_backward:
        g.backward(root)
    else:
        g.read()
    return g.steps


def test_each_step_is_named_by_the_function_it_calls():
    steps = _program()
    assert calls(steps) == ["Value()", "Value()", "Value.__mul__()", "Value.__add__()", "Value.tanh()",
                            "Value.backward()", "reading .data/.grad (.val/.der)"]
    assert calls(_program(dual=True))[:3] == ["Dual()", "Dual.__rmul__()", "Dual.tanh()"]


def test_after_a_hang_programs_with_that_call_get_a_short_limit_then_are_not_run():
    hangs = Hangs(call_seconds=5.0, retry_seconds=1.0, give_up_after=2)
    program, dual = _program(), _program(dual=True)
    assert hangs.plan(program) == (5.0, "")
    assert hangs.record(program, program.index(["backward", "n4"])) == "Value.backward()"
    assert hangs.plan(program) == (1.0, "")
    assert hangs.plan(dual) == (5.0, "")  # never calls backward(): keeps its whole limit
    hangs.record(program, program.index(["backward", "n4"]))
    limit, why = hangs.plan(program)
    assert limit == 0 and "`Value.backward()` did not return in 2 earlier programs" in why
    assert hangs.plan(_program(with_backward=False)) == (5.0, "")


def test_a_step_number_out_of_range_records_nothing():
    hangs = Hangs(call_seconds=5.0)
    assert hangs.record(_program(), 99) == "" and hangs.record(_program(), "1") == ""
    assert hangs.counts == {}
