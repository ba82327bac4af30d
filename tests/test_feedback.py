"""Feedback a student can act on: the culprit, the broken rule, the hint, the smallest program.

The mutants of tests/mutants.py (plus a few of this file's own) each hide one
realistic mistake in the reference. Each runs a fixed battery of graph programs
through the real Engine (compare, evidence probes, hints, shrinker); here the
"worker" is the mutant loaded in this process, which is fine for the kit's own
trusted mutants (students' code only ever runs in a worker). Then:

* for at least 90% of the failing programs, the named culprit is the mutated op
  (or backward()/zero_grad for a mutated rule of theirs), where the expected
  culprit is read off the mutant's location in the reference;
* the hint shown is the hint of that mistake, never another one;
* the reference passes everything and no hint ever matches its numbers;
* the smallest program still fails the same way, deterministically, within its budget.
"""

import json
import os
import random
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from grader.feedback.explain import explain as compare
from grader.program import graph_from_steps
from grader.engine import Engine, GradingFailure
from grader.oracle_reference import ReferenceOracle, SimulatedOracle
from grader.feedback import matcher
from grader.feedback.catalog import load as load_catalog
from grader.formula import Formula, FormulaError
from grader.feedback.probes import ALL_PROBES, PROBES, Evidence, _steps
from grader.feedback.simulate import REVERSE_VARIABLES, simulate
from grader.program import Graph
from grader.feedback.shrink import Shrinker, Signature, judge_with, node_count
from grader.worker.interpreter import Interpreter
from grader.worker_client import Reply

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutants import MUTANTS, NO_HINT, REFERENCE, Mutant, blamed, expected_culprit, expected_hint  # noqa: E402
from mutants import DUAL_LABELS, METHOD_LABELS  # noqa: E402

SOURCE = REFERENCE.read_text(encoding="utf-8")
CJK = re.compile(r"[\u4e00-\u9fff]")

# Mutants of this file's own, for mistakes the shared corpus may not hold.
OWN_MUTANTS = [
    Mutant("own_tanh_assigns", "accumulation", "self.grad += (1.0 - t * t) * out.grad",
           "self.grad = (1.0 - t * t) * out.grad", "x used by tanh and another op"),
    Mutant("own_add_drops_right_input", "gradients", "self.grad += out.grad\n            other.grad += out.grad",
           "self.grad += out.grad", "x + y: y gets nothing"),
    Mutant("own_mul_forgets_upstream", "gradients",
           "self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
           "self.grad += other.data\n            other.grad += self.data", "a product below the root"),
    Mutant("own_pow_missing_factor_k", "gradients", "k * self.data ** (k - 1) * out.grad",
           "self.data ** (k - 1) * out.grad", "x ** k with k != 1"),
    Mutant("own_relu_passes_always", "gradients", "(1.0 if self.data > 0 else 0.0) * out.grad",
           "out.grad", "relu of a negative input"),
    Mutant("own_dual_mul_multiplies_ders", "forward_mode", "der = self.val * other.der + self.der * other.val",
           "der = self.der * other.der", "any product"),
    Mutant("own_dual_exp_keeps_der", "forward_mode", "der = e * self.der", "der = self.der", "exp"),
    Mutant("own_log_uses_input", "gradients", "self.grad += (1.0 / self.data) * out.grad",
           "self.grad += self.data * out.grad", "log(x) with x != 1"),
]

def all_mutants():
    seen = {(m.find, m.replace) for m in MUTANTS}
    return list(MUTANTS) + [m for m in OWN_MUTANTS if (m.find, m.replace) not in seen]


def load_source(source, name):
    module = ModuleType(name)
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)  # noqa: S102 - the kit's own mutants
    return module


class InProcessWorker:
    """Runs programs on a module of this process, like a worker would (JSON in, JSON out)."""

    def __init__(self, module):
        self.interpreter = Interpreter(vars(module))
        self.calls = 0

    def run(self, steps):
        self.calls += 1
        return Reply(outcome=json.loads(json.dumps(self.interpreter.run(json.loads(json.dumps(steps))))))


# ------------------------------------------------------------------ the battery

BATTERY = []


def program(category, **check):
    def register(build):
        BATTERY.append((build.__name__, category, build, check))
        return build

    return register


@program("gradients")
def tanh_of_product(g):
    x, y = g.values(0.8, -0.6)
    g.backward((x * y).tanh() * 2.0)


@program("gradients")
def exp_times_leaf(g):
    x, y = g.values(0.3, 1.7)
    g.backward(x.exp() * y)


@program("gradients")
def log_of_shifted_sum(g):
    x, y = g.values(0.5, -1.25)
    g.backward((x + 2.5).log() * y)


@program("gradients")
def powers(g):
    x, y = g.values(1.2, 0.7)
    g.backward((x**3 + y**-2) * 0.5)


@program("gradients")
def square_root(g):
    x, y = g.values(2.25, 1.5)
    g.backward(x**0.5 * y)


@program("gradients")
def relu_both_sides(g):
    x, y = g.values(1.5, -0.5)
    g.backward(x.relu() * y + (y * 3.0).relu())


@program("gradients")
def relu_at_zero(g):
    x, y = g.values(0.0, 1.25)
    g.backward(x.relu() * 3.0 + y)


@program("gradients")
def sub_and_div(g):
    x, y = g.values(1.5, -0.75)
    g.backward((x - y) / (x + 3.0))


@program("gradients")
def reflected_ops(g):
    x, y = g.values(0.4, 1.6)
    g.backward((2.0 - x) * (-y) + 1.0 / y)


@program("gradients", check_order=True)
def order_of_a_diamond(g):
    x, y = g.values(1.5, -2.0)
    a = x * y
    g.backward((a + x).tanh())


@program("accumulation")
def x_plus_x(g):
    x = g.value(0.7)
    g.backward((x + x) * 1.5)


@program("accumulation")
def x_times_x(g):
    x = g.value(0.7)
    g.backward((x * x).tanh())


@program("accumulation")
def exp_shared(g):
    x = g.value(0.4)
    g.backward(x * 2.0 + x.exp())


@program("accumulation")
def inner_squared(g):
    x, y = g.values(0.4, 0.3)
    a = x + y
    g.backward((a * a).tanh())


@program("accumulation")
def diamond(g):
    x, y = g.values(0.6, -0.4)
    a = x * y
    g.backward(a.exp() + a.tanh())


@program("accumulation")
def shared_leaf(g):
    x, y = g.values(0.9, 1.1)
    g.backward(x * y + x.tanh() + (x**2) * 0.5)


@program("accumulation")
def backward_twice(g):
    x, y = g.values(0.5, -1.5)
    z = (x * y).tanh() + x
    g.backward(z)
    g.backward(z)


@program("accumulation")
def leaf_root_twice(g):
    x = g.value(1.5)
    g.backward(x)
    g.backward(x)


@program("gradients")
def equal_data_nodes(g):
    x, y = g.values(1.5, 2.0)
    a = x * 2.0
    b = y + 1.0
    g.backward((a * b).tanh())


@program("zero_grad")
def zero_grad_then_backward(g):
    x, y = g.values(1.5, -2.0)
    z = x * y + y
    g.backward(z)
    g.zero_grad([x, y])
    g.backward(z)


@program("zero_grad")
def three_levels_twice(g):
    x, y = g.values(0.3, 0.8)
    z = ((x * y).exp() * 0.5).tanh()
    g.backward(z)
    g.backward(z)


@program("forward_mode")
def dual_product(g):
    a, b = g.dual(1.5, 0.5), g.dual(-2.0, 2.0)
    g.op("*", a.ref, b.ref)
    g.read()


@program("forward_mode")
def dual_sum_and_difference(g):
    a, b = g.dual(1.5, 0.5), g.dual(-2.0, 2.0)
    s = a + b
    _ = s - b * a
    g.read()


@program("forward_mode")
def dual_exp_tanh(g):
    a, b = g.dual(0.3, 1.5), g.dual(0.2, -1.0)
    _ = (a.exp() * b).tanh()
    g.read()


@program("forward_mode")
def dual_constants(g):
    a = g.dual(1.25, 2.0)
    _ = a * 2.5 + 1.5
    _ = 3.0 - a
    g.read()


def build(builder):
    g = Graph()
    builder(g)
    return g


def run_battery(module, refine=True):
    """[(program name, final finding)] of the failing battery programs."""
    worker, shrink_worker = InProcessWorker(module), InProcessWorker(module)
    engine = Engine(worker, ReferenceOracle(), shrink_worker=shrink_worker)
    failures = []
    for name, category, builder, check in BATTERY:
        engine.begin_test(category=category)
        try:
            engine.check(build(builder), **check)
        except GradingFailure as failure:
            failures.append((name, engine.refine(failure.finding) if refine else failure.finding))
    return failures


@pytest.fixture(scope="module")
def reference_module():
    return load_source(SOURCE, "feedback_reference")


@pytest.fixture(scope="module")
def mutant_failures():
    """mutant id -> [(program name, finding)] for every mutant."""
    results = {}
    for mutant in all_mutants():
        module = load_source(mutant.apply(SOURCE), f"feedback_{mutant.id}")
        results[mutant.id] = run_battery(module)
    return results


# ------------------------------------------------------------- the measures


def test_every_mutant_location_names_a_culprit():
    for mutant in all_mutants():
        assert expected_culprit(mutant) in set(METHOD_LABELS.values()) | set(DUAL_LABELS.values()), mutant.id


def test_the_named_culprit_is_the_mutated_op_for_at_least_90_percent(mutant_failures):
    pairs, right, misses = 0, 0, []
    for mutant in all_mutants():
        want = expected_culprit(mutant)
        for name, finding in mutant_failures[mutant.id]:
            if finding.kind not in ("grad", "der", "data", "order"):
                continue
            pairs += 1
            if blamed(finding) == want:
                right += 1
            else:
                misses.append(f"{mutant.id} on {name}: named {blamed(finding)!r}, expected {want!r}")
    caught = sum(1 for failures in mutant_failures.values() if failures)
    assert caught >= 25, f"the battery should catch nearly every mutant: {caught}/{len(mutant_failures)}"
    assert right >= 0.9 * pairs, f"{right}/{pairs} named right:\n" + "\n".join(misses)


def test_the_hint_shown_is_the_mistakes_own(mutant_failures):
    problems = []
    for mutant in all_mutants():
        want = expected_hint(mutant.id)
        if want is NO_HINT or not mutant_failures[mutant.id]:
            continue
        shown = {name: (finding.hint or {}).get("id") for name, finding in mutant_failures[mutant.id]}
        wrong = {name: hint for name, hint in shown.items() if hint not in (want, None)}
        if wrong:
            problems.append(f"{mutant.id}: expected {want}, shown {wrong}")
        if want is not None and want not in shown.values():
            problems.append(f"{mutant.id}: {want} never shown ({shown})")
    assert not problems, "\n".join(problems)


def test_every_finding_speaks_both_languages(mutant_failures):
    for failures in mutant_failures.values():
        for _, finding in failures:
            assert finding.en and finding.zh and CJK.search(finding.zh), finding.en
            for part in (finding.headline, finding.cause, finding.hint, finding.rule):
                if part:
                    assert part["en"] and CJK.search(part["zh"]), part


def test_the_reference_passes_the_battery_and_gets_no_hint(reference_module):
    assert run_battery(reference_module, refine=False) == []
    worker = InProcessWorker(reference_module)
    evidence = Evidence.gather(Interpreter(vars(reference_module)).run, worker.run)
    assert all(evidence.passed.values()) and len(evidence.passed) == len(ALL_PROBES)
    for _, _, builder, _ in BATTERY:
        steps = build(builder).steps
        got = worker.run(steps).outcome
        last = sum(1 for s in steps if s[0] == "read") - 1
        assert matcher.match_all(steps, got, last, SimulatedOracle()) == []
        assert matcher.match_all(steps, got, last, SimulatedOracle(), evidence=evidence) == []


# ------------------------------------------------------------- localization


def mutant_module(mutant_id):
    mutant = next(m for m in all_mutants() if m.id.removeprefix("own_") == mutant_id.removeprefix("own_"))
    return load_source(mutant.apply(SOURCE), f"feedback_{mutant.id}")


def first_finding(module, builder, category="gradients", refine=True, **check):
    worker = InProcessWorker(module)
    engine = Engine(worker, ReferenceOracle(), shrink_worker=InProcessWorker(module))
    engine.begin_test(category=category)
    with pytest.raises(GradingFailure) as failure:
        engine.check(build(builder), **check)
    return engine.refine(failure.value.finding) if refine else failure.value.finding


def test_a_wrong_local_rule_is_named_with_its_input_and_numbers():
    def product(g):
        x, y = g.values(2.0, -3.0)
        g.backward(x * y)

    finding = first_finding(mutant_module("mul_not_crossing"), product)
    assert finding.culprit == "*"
    assert ("The gradient that `*` at n2 = n0 * n1 sends to its left input n0 is wrong: expected -3, got 2"
            in finding.en)
    assert "左输入 n0 的梯度不对：应为 -3，实际是 2" in finding.zh
    assert finding.hint["id"] == "mul-not-crossed"


def test_a_broken_rule_of_backward_is_named_with_the_calls_that_show_it():
    finding = first_finding(mutant_module("leaf_grads_reset_too"), backward_twice, category="accumulation")
    assert finding.culprit == "backward"
    assert finding.rule["id"] == "leaf-accumulates" and finding.rule["diagnosed"]
    assert finding.calls == "n4.backward(); n4.backward()"
    assert "`n4.backward(); n4.backward()`" in finding.en and "`n4.backward(); n4.backward()`" in finding.zh
    assert finding.hint["id"] == "leaf-grads-reset"


def test_zero_grad_is_blamed_for_what_it_left_behind():
    def zero_grad_then_read(g):
        x, y = g.values(1.5, -2.0)
        g.backward(x * y)
        g.zero_grad([x, y])

    finding = first_finding(mutant_module("zero_grad_only_first"), zero_grad_then_read, category="zero_grad")
    assert finding.culprit == "zero_grad" and finding.rule["id"] == "zero-grad"
    assert "n1 was given to zero_grad, so its grad should be 0" in finding.en


def test_forward_mode_names_the_first_wrong_node_whose_inputs_are_right():
    def chain(g):
        a, b = g.dual(0.5, 1.5), g.dual(-1.0, 2.0)
        c = a + b
        d = c * a
        _ = d.exp()
        g.read()

    finding = first_finding(mutant_module("dual_mul_missing_cross_term"), chain, category="forward_mode")
    assert finding.kind == "der" and finding.culprit == "Dual.*"
    assert finding.culprits == [3]  # d = c * a; e = d.exp() is wrong too, but only because d is
    assert finding.wrong_nodes == [3, 4]


def test_a_rule_named_by_the_test_is_kept_when_the_numbers_name_none():
    def product(g):
        x, y = g.values(2.0, -3.0)
        g.backward(x * y * 2.0)

    module = mutant_module("mul_not_crossing")
    engine = Engine(InProcessWorker(module), ReferenceOracle())
    engine.begin_test(category="gradients")
    with pytest.raises(GradingFailure) as failure:
        engine.check(build(product), rule="paths-add")
    assert failure.value.finding.rule["id"] == "paths-add" and not failure.value.finding.rule["diagnosed"]


def test_the_finding_is_plain_json():
    finding = first_finding(mutant_module("tanh_uses_input"), tanh_of_product)
    data = finding.as_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["shrunk"]["steps"] and data["expected"] and data["got"] and data["culprit"] == "tanh"


# ----------------------------------------------------------------- shrinking


def test_the_smallest_program_fails_the_same_way_and_runs_as_pasted():
    module = mutant_module("tanh_uses_input")
    finding = first_finding(module, shared_leaf)
    shrunk = finding.shrunk
    assert shrunk["culprit"] == "tanh" and shrunk["hint"]["id"] == "tanh-uses-input"
    assert shrunk["nodes"] < node_count(finding.steps)
    namespace = {}
    code = shrunk["code"].replace("from tiny_autograd import", "from feedback_pasted import")
    sys.modules["feedback_pasted"] = module
    try:
        exec(compile(code, "pasted.py", "exec"), namespace)  # noqa: S102 - our own mutant
    finally:
        del sys.modules["feedback_pasted"]
    assert "print(" in code and "# expected / 应为" in code


def test_shrinking_is_deterministic_and_bounded():
    module = mutant_module("mul_not_crossing")
    original = first_finding(module, shared_leaf, refine=False)
    reference = Interpreter(vars(load_source(SOURCE, "feedback_reference_2"))).run
    results = []
    for _ in range(2):
        worker = InProcessWorker(module)
        shrinker = Shrinker(reference, worker.run, judge_with(compare, category="accumulation"),
                            max_calls=25, max_seconds=60)
        results.append(shrinker.shrink(original.steps, original))
        assert worker.calls <= 25
    (steps_a, finding_a), (steps_b, finding_b) = results
    assert steps_a == steps_b and finding_a.en == finding_b.en
    assert Signature.of(original).kept_by(Signature.of(finding_a), finding_a.culprit)


def test_shrinking_gives_up_on_a_program_that_no_longer_fails():
    module = mutant_module("mul_not_crossing")
    original = first_finding(module, shared_leaf, refine=False)
    reference = Interpreter(vars(load_source(SOURCE, "feedback_reference_3"))).run
    fixed = InProcessWorker(load_source(SOURCE, "feedback_reference_4"))
    shrinker = Shrinker(reference, fixed.run, judge_with(compare), max_calls=10)
    assert shrinker.shrink(original.steps, original) is None


def test_graph_from_steps_round_trips_a_program():
    g = build(reflected_ops)
    copy = graph_from_steps(g.steps)
    assert copy.steps == g.steps and copy.node_steps == g.node_steps


# ------------------------------------------------------------ the simulator


def random_program(rng):
    steps, count = [], 0
    for _ in range(rng.randint(1, 3)):
        steps.append(["value", round(rng.uniform(-2, 2), 2)])
        count += 1
    for _ in range(rng.randint(1, 6)):
        kind = rng.random()
        if kind < 0.3:
            steps.append(["op", rng.choice(["exp", "tanh", "relu", "neg"]), f"n{rng.randrange(count)}"])
        elif kind < 0.4:
            steps.append(["op", "**", f"n{rng.randrange(count)}", rng.choice([2, 3, -1, 0.5])])
        elif kind < 0.45:
            steps.append(["op", "log", f"n{rng.randrange(count)}"])
        else:
            a = f"n{rng.randrange(count)}"
            b = f"n{rng.randrange(count)}" if rng.random() < 0.7 else round(rng.uniform(-3, 3), 1)
            if rng.random() < 0.3:
                a, b = b, a
            steps.append(["op", rng.choice(["+", "*", "-", "/"]), a, b])
        count += 1
    steps += [["backward", f"n{count - 1}"], ["read"], ["backward", f"n{rng.randrange(count)}"], ["read"],
              ["zero_grad", ["n0"]], ["read"]]
    return steps


def test_the_simulator_gives_the_references_numbers(reference_module):
    interpreter = Interpreter(vars(reference_module))
    rng = random.Random(5)
    for _ in range(400):
        steps = random_program(rng)
        want, got = interpreter.run(steps), simulate(steps)
        assert want["ok"] == got["ok"], steps
        assert want["snapshots"] == got["snapshots"] and want["orders"] == got["orders"], steps
    for probe in ALL_PROBES:
        steps = _steps(probe)
        assert simulate(steps)["snapshots"] == interpreter.run(steps)["snapshots"], probe.id


# --------------------------------------------------------------- the catalog


def test_the_catalog_is_complete_and_bilingual():
    catalog = load_catalog()
    ids = {hint.id for hint in catalog.hints}
    required = {"assign-instead-of-add", "tanh-uses-input", "relu-at-zero", "mul-not-crossed", "exp-uses-input",
                "log-wrong-derivative", "pow-off-by-one", "missing-intermediate-reset", "leaf-grads-reset",
                "root-grad-not-one", "dual-mul-cross-term", "dual-lift-der-one"}
    assert required <= ids
    for hint in catalog.hints:
        assert hint.en.strip() and CJK.search(hint.zh), hint.id
        assert hint.rule in catalog.rules and hint.models, hint.id
    for rule in catalog.rules.values():
        assert rule["en"].strip() and CJK.search(rule["zh"])


def test_every_hint_model_is_a_real_mistake():
    """Each model gives other numbers than the reference on some probe or battery
    program: it can be told apart from a right answer."""
    programs = [_steps(probe) for probe in PROBES] + [build(builder).steps for _, _, builder, _ in BATTERY]
    for hint in load_catalog().hints:
        for hint_model in hint.models:
            differs = any(
                not matcher.agrees(simulate(steps), simulate(steps, hint_model.model),
                                   sum(1 for s in steps if s[0] == "read") - 1)
                for steps in programs
            )
            assert differs, f"{hint.id}: {hint_model.model}"


@pytest.mark.parametrize("text", ["__import__('os')", "x.real", "(lambda: 1)()", "open", "[x]", "x if y else"])
def test_catalog_formulas_are_arithmetic_only(text):
    with pytest.raises(FormulaError):
        Formula(text, REVERSE_VARIABLES)


def test_catalog_formulas_compute():
    assert Formula("(1 - x*x) * g if x >= 0 else -g", REVERSE_VARIABLES)({"x": 0.5, "g": 2.0}) == 1.5
    assert Formula("exp(0) + k ** 2", REVERSE_VARIABLES)({"k": 3}) == 10.0


# -------------------------------------------- the real suites (opt in: minutes)


@pytest.mark.skipif(not os.environ.get("FEEDBACK_SUITES"),
                    reason="grades every corpus mutant on suite 'all' with real workers; set FEEDBACK_SUITES=1")
def test_culprit_accuracy_on_the_graded_suites(tmp_path, grade_submission):
    pairs, right, misses, wrong_hints = 0, 0, [], []
    for mutant in MUTANTS:
        path = tmp_path / mutant.id / "tiny_autograd.py"
        path.parent.mkdir()
        path.write_text(mutant.apply(SOURCE), encoding="utf-8")
        result = grade_submission(path, suite="all")
        want, want_hint = expected_culprit(mutant), expected_hint(mutant.id)
        for test in result.tests:
            finding = test.finding or {}
            if test.passed or finding.get("kind") not in ("grad", "der", "data", "order"):
                continue
            pairs += 1
            if blamed(finding) == want:
                right += 1
            else:
                misses.append(f"{mutant.id} / {test.nodeid}: {blamed(finding)!r}, expected {want!r}")
            shown = (finding.get("hint") or {}).get("id")
            if want_hint is not NO_HINT and shown not in (want_hint, None):
                wrong_hints.append(f"{mutant.id} / {test.nodeid}: hint {shown}, expected {want_hint}")
    assert right >= 0.9 * pairs, f"{right}/{pairs} named right:\n" + "\n".join(misses)
    assert not wrong_hints, "\n".join(wrong_hints)
