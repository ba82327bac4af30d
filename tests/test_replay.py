"""Replaying the suite's recorded programs grades exactly like running pytest.

`python -m grader batch` records each suite once (grader/replay.py) and replays
its graph programs on every submission instead of running pytest. That is only
allowed because the two give the same results: the same tests, pass or fail,
scores and messages (the Gradescope results file, except its execution time),
for correct, empty, broken and buggy submissions, including mutants that fail
Hypothesis-generated tests part-way through their examples.
"""

from pathlib import Path

import pytest

from grader.replay import ReplayUnsupported, grade_by_replay, record_plan
from grader.results import gradescope
from mutants import BY_ID as MUTANTS_BY_ID

pytestmark = pytest.mark.slow  # `make test-fast` leaves it out: it grades many submissions or builds environments

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference" / "tiny_autograd.py"
TEMPLATE = ROOT / "student_template" / "tiny_autograd.py"
# Mutants of every category. All of them fail Hypothesis-generated tests of suite
# "all" (after the failing example, pytest stops generating; so must the replay),
# and the first seven also the generated test of the public suite.
MUTANTS = (
    "add_assigns",
    "mul_not_crossing",
    "relu_one_at_zero",
    "root_grad_not_set",
    "order_not_reversed",
    "visited_keyed_by_data",
    "topological_order_repeats_nodes",
    "exp_uses_input",
    "log_uses_output",
    "intermediate_grads_not_reset",
    "zero_grad_only_first",
    "dual_mul_missing_cross_term",
    "dual_tanh_forgets_seed",
)


@pytest.fixture(scope="module")
def plans():
    return {suite: record_plan(suite) for suite in ("public", "all")}


@pytest.fixture(scope="module")
def broken_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("broken") / "tiny_autograd.py"
    path.write_text(REFERENCE.read_text(encoding="utf-8").replace("def exp(self):", "def exp(self)", 1),
                    encoding="utf-8")
    return path


def _submission(name, mutant_file, broken_file):
    if name == "reference":
        return REFERENCE
    if name == "template":
        return TEMPLATE
    if name == "broken":
        return broken_file
    return mutant_file(MUTANTS_BY_ID[name])


def _results(result):
    data = gradescope(result)
    data.pop("execution_time")
    return data


@pytest.mark.parametrize("suite", ["public", "all"])
@pytest.mark.parametrize("name", ["reference", "template", "broken", *MUTANTS])
def test_replay_gives_the_results_of_the_pytest_run(name, suite, plans, graded_once, reference_oracle,
                                                    mutant_file, broken_file):
    path = _submission(name, mutant_file, broken_file)
    by_pytest = _results(graded_once(path, suite))
    by_replay = _results(grade_by_replay(path, suite, plans[suite], oracle=reference_oracle))
    assert [t["name"] for t in by_replay["tests"]] == [t["name"] for t in by_pytest["tests"]]
    for replayed, expected in zip(by_replay["tests"], by_pytest["tests"]):
        assert replayed == expected, replayed["name"]
    assert by_replay == by_pytest


def test_the_plan_holds_every_test_with_its_checks_in_order(plans):
    public = plans["public"]
    assert public.suite == "public" and len(public.tests) >= 10
    assert all(test.checks and test.category and test.nodeid.startswith("public/") for test in public.tests)
    everything = plans["all"]
    assert {t.nodeid for t in public.tests} < {t.nodeid for t in everything.tests}
    # A generated test's checks are grouped by example, numbered from 0 in order.
    generated = next(t for t in everything.tests if t.nodeid.endswith("::test_random_graphs"))
    examples = [check.example for check in generated.checks]
    assert examples == sorted(examples) and examples[0] == 0 and len(set(examples)) > 1
    plain = next(t for t in everything.tests if t.nodeid.endswith("::test_leaf_as_root"))
    assert [check.example for check in plain.checks] == [None] * len(plain.checks)


def test_a_suite_that_reads_raw_outcomes_cannot_be_recorded(monkeypatch):
    from grader import replay

    def check_reads_outcome(self, graph, check_order=False, rule=None):
        self.outcome(graph)

    monkeypatch.setattr(replay._Recorder, "check", check_reads_outcome)
    with pytest.raises(ReplayUnsupported):
        record_plan("public")


def test_a_plan_grades_only_its_own_suite(plans):
    with pytest.raises(ValueError):
        grade_by_replay(REFERENCE, "all", plans["public"])


def test_batch_replays_by_default_and_pytest_gives_the_same_gradebook(tmp_path, mutant_file, broken_file):
    import io
    import json
    import shutil

    from grader import batch

    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(REFERENCE, folder / "ada.py")
    shutil.copy(mutant_file(MUTANTS_BY_ID["add_assigns"]), folder / "bob.py")
    shutil.copy(broken_file, folder / "cy.py")
    outputs = {}
    for engine in ("replay", "pytest"):
        log = io.StringIO()
        out = tmp_path / engine / "grades.csv"
        batch.run(folder, out, jobs=1, stream=log, engine=engine, suite="public")
        assert f"(suite public, {engine})" in log.getvalue()
        results = {}
        for path in sorted(batch.results_folder(out).glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            data.pop("execution_time")
            results[path.name] = data
        outputs[engine] = (out.read_text(encoding="utf-8"), results)
    assert outputs["replay"] == outputs["pytest"]
    gradebook = outputs["replay"][0]
    assert "ada,100," in gradebook and ",problem," in gradebook
