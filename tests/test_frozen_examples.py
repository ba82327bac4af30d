"""The suites' generated tests run over examples frozen at authoring time.

`python -m authoring` draws them with Hypothesis (authoring/freeze.py) into
grader/suites/*/examples.json; at grading time `@generated` runs the test body
over them in order and stops at the first failure, so grading needs no
Hypothesis and a submission meets the same programs everywhere.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from authoring import freeze
from grader import generated
from grader.expression import Const, Expression, Ref, pick
from grader.generated import StaleExamples, expressions, masks

ROOT = Path(__file__).resolve().parent.parent
SUITES = ROOT / "grader" / "suites"
REFERENCE = ROOT / "reference" / "tiny_autograd.py"


def write_suite(folder, body, examples=None):
    """A suite folder with one test module and, optionally, its examples.json."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_some.py").write_text(textwrap.dedent(body), encoding="utf-8")
    if examples is not None:
        (folder / "examples.json").write_text(json.dumps(examples), encoding="utf-8")
    return folder / "test_some.py"


def load(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"frozen_test_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MODULE = """
    from grader.generated import generated, masks
    seen = []

    @generated(3, mask=masks(4))
    def test_masks(fixture, mask):
        seen.append(mask)
        assert mask != 9, "nine fails"
"""


def examples_document(masks_list, count=3, bits=4):
    return {"format": 1, "made_with": {"hypothesis": "x"}, "tests": {"test_some.py::test_masks": {
        "count": count, "specs": {"mask": {"strategy": "masks", "args": {"bits": bits}}},
        "examples": [{"mask": m} for m in masks_list]}}}


def test_a_generated_test_runs_its_examples_in_order_and_stops_at_the_first_failure(tmp_path):
    module = load(write_suite(tmp_path / "suite", MODULE, examples_document([3, 9, 5])))
    with pytest.raises(AssertionError, match="nine fails"):
        module.test_masks(fixture="f")
    assert module.seen == [3, 9]
    module.seen.clear()
    module2 = load(write_suite(tmp_path / "other", MODULE, examples_document([3, 5, 6, 7])))
    module2.test_masks(fixture="f")
    assert module2.seen == [3, 5, 6], "never more than its count"


def test_pytest_sees_only_the_fixtures_of_a_generated_test(tmp_path):
    import inspect

    module = load(write_suite(tmp_path / "suite", MODULE, examples_document([1])))
    assert list(inspect.signature(module.test_masks).parameters) == ["fixture"]


@pytest.mark.parametrize("examples", [None, examples_document([1], count=4), examples_document([1], bits=5)],
                         ids=["missing", "other count", "other strategy"])
def test_stale_examples_fail_the_test_and_say_what_to_run(tmp_path, examples):
    module = load(write_suite(tmp_path / "suite", MODULE, examples))
    with pytest.raises(StaleExamples, match="make template"):
        module.test_masks(fixture="f")


def test_every_generated_suite_test_has_its_frozen_examples():
    """Each @generated test of the suites gets exactly its count of examples (none is empty)."""
    tests = [info for folder in freeze.suite_dirs(SUITES) for info in freeze.generated_tests(folder)]
    assert len(tests) >= 10
    for info in tests:
        class Stub:
            __generated__ = info
        examples = generated.examples_of(Stub)
        assert len(examples) == info.count, info.key
        assert all(set(example) == set(info.specs) for example in examples)


def test_committed_examples_are_what_authoring_draws():
    """The committed examples.json files are what `python -m authoring` writes (with the
    Hypothesis they were made with; another version cannot be compared)."""
    import hypothesis

    files = {folder / "examples.json" for folder in freeze.suite_dirs(SUITES)}
    versions = {freeze.made_with(path) for path in files}
    if versions != {hypothesis.__version__}:
        pytest.skip(f"examples made with Hypothesis {versions}, this is {hypothesis.__version__}")
    for path, text in freeze.files(SUITES).items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run `make template`"


def test_freezing_does_not_depend_on_which_local_modules_are_loaded(tmp_path, monkeypatch):
    """Hypothesis mixes literals of loaded local modules into its examples; freezing
    turns that off, or editing any module of the kit would change the examples."""
    import hypothesis

    if freeze.made_with(SUITES / "public" / "examples.json") != hypothesis.__version__:
        pytest.skip("needs the Hypothesis the examples were made with")
    before = freeze.frozen_text(SUITES / "public")
    module = tmp_path / "many_literals.py"
    module.write_text("FLOATS = [" + ", ".join(repr(0.01 + 0.37 * i) for i in range(300)) + "]\n"
                      "INTEGERS = [" + ", ".join(str(i) for i in range(-50, 300)) + "]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("many_literals")
    try:
        assert freeze.frozen_text(SUITES / "public") == before
    finally:
        sys.modules.pop("many_literals", None)


def test_an_expression_survives_json_with_its_number_types():
    expression = Expression((0.5, -2.0), (("**", (Ref(0), Const(2))), ("*", (Ref(2), Const(-1.5)))), (1.0, 0.25))
    again = Expression.from_json(json.loads(json.dumps(expression.as_json())))
    assert again == expression
    assert isinstance(again.steps[0][1][1].value, int), "an int exponent stays an int"


def test_pick_takes_the_items_whose_bit_is_set():
    assert pick(0b1010, ["a", "b", "c", "d", "e"]) == ["b", "d"]
    assert pick(0, [1, 2]) == [] and pick(2**30 - 1, [1, 2]) == [1, 2]


def test_specs_describe_strategies_as_data():
    assert expressions(size=(3, 10)).as_json() == {"strategy": "expressions", "args": {"size": [3, 10]}}
    assert masks().as_json() == {"strategy": "masks", "args": {"bits": 20}}


BLOCK_HYPOTHESIS = """
import runpy, sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name == "hypothesis" or name.startswith("hypothesis."):
            raise ImportError("grading must not import " + name)
sys.meta_path.insert(0, Blocked())
sys.argv = ["grader"] + sys.argv[1:]
runpy.run_module("grader", run_name="__main__")
"""


def test_grading_needs_no_hypothesis(tmp_path):
    """A full grade (public and hidden suites) in a process where Hypothesis cannot be imported."""
    out = tmp_path / "results.json"
    done = subprocess.run([sys.executable, "-c", BLOCK_HYPOTHESIS, "grade", str(REFERENCE), "--suite", "all",
                           "--out", str(out), "--quiet", "--lang", "en"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["score"] == results["extra_data"]["max_score"] > 0
    assert not [t for t in results["tests"] if t["status"] != "passed"]
