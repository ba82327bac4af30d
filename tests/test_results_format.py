"""The results files match their published formats, and points add up exactly.

grader/schemas/ holds a JSON Schema for each format of design section 6:
Gradescope's results.json and the GitHub Classroom runner result. Real results
(the reference, the template, a broken file) are validated against them, and
`share_points`, which splits a category's points among its tests, is checked to
give hundredths that add up exactly, by largest remainder, deterministically.
"""

import json
import math
from fractions import Fraction

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader import results
from grader.exercise import categories
from grader.results import load_rubric, share_points
from mutants import BY_ID, REFERENCE

SCHEMAS = REFERENCE.parent.parent / "grader" / "schemas"
TEMPLATE = REFERENCE.parent.parent / "student_template" / "tiny_autograd.py"


def validator(name):
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def cents(number):
    return Fraction(str(number)) * 100


@pytest.fixture(scope="module")
def graded(tmp_path_factory, graded_once, mutant_file):
    """Real results: full marks, partial credit, nothing implemented, and nothing loadable."""
    broken = tmp_path_factory.mktemp("formats") / "broken.py"
    broken.write_text("class Value:\n    def __init__(self, data)\n        self.data = data\n", encoding="utf-8")
    return {
        "reference": graded_once(REFERENCE, "all"),
        "partial": graded_once(mutant_file(BY_ID["zero_grad_does_nothing"]), "public"),
        "template": graded_once(TEMPLATE, "public"),
        "broken": graded_once(broken, "public"),
    }


CASES = ["reference", "partial", "template", "broken"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("case", CASES)
def test_gradescope_results_match_the_schema(case, lang, graded):
    document = json.loads(json.dumps(results.gradescope(graded[case], lang), ensure_ascii=False))
    validator("gradescope").validate(document)
    tests = document["tests"]
    assert all(t["score"] <= t["max_score"] for t in tests)
    assert all(t["score"] in (0, t["max_score"]) for t in tests), "a test earns all its points or none"
    assert sum(cents(t["score"]) for t in tests) == cents(document["score"])
    assert sum(cents(t["max_score"]) for t in tests) == cents(document["extra_data"]["max_score"])
    for category, totals in document["extra_data"]["categories"].items():
        members = [t for t in tests if t["tags"] == [category]]
        assert sum(cents(t["score"]) for t in members) == cents(totals["score"])
        assert sum(cents(t["max_score"]) for t in members) == cents(totals["max_score"])
    assert len({t["number"] for t in tests}) == len(tests), "test numbers are unique"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("case", CASES)
def test_classroom_results_match_the_schema(case, lang, graded):
    result = graded[case]
    document = json.loads(json.dumps(results.classroom(result, lang), ensure_ascii=False))
    validator("classroom").validate(document)
    assert sum(cents(t["score"]) for t in document["tests"]) == cents(result.score)
    assert document["max_score"] == round(result.max_score)
    expected_status = {"reference": "pass", "partial": "fail", "template": "fail", "broken": "error"}[case]
    assert document["status"] == expected_status


def test_scores_of_real_results_are_what_they_should_be(graded):
    total = sum(load_rubric().points.values())
    assert graded["reference"].score == graded["reference"].max_score == total
    assert 0 < graded["partial"].score < total
    assert graded["template"].score == graded["broken"].score == 0


BREAKAGES = {
    "gradescope without tests": ("gradescope", lambda d: d.pop("tests")),
    "gradescope with no tests": ("gradescope", lambda d: d.update(tests=[])),
    "gradescope status error": ("gradescope", lambda d: d["tests"][0].update(status="error")),
    "gradescope unknown tag": ("gradescope", lambda d: d["tests"][0].update(tags=["style"])),
    "gradescope number not a string": ("gradescope", lambda d: d["tests"][0].update(number=2)),
    "gradescope time as text": ("gradescope", lambda d: d.update(execution_time="1 s")),
    "gradescope isolation unrecorded": ("gradescope", lambda d: d["extra_data"].pop("isolation")),
    "classroom without tests": ("classroom", lambda d: d.pop("tests")),
    "classroom with no tests": ("classroom", lambda d: d.update(tests=[])),
    "classroom version 2": ("classroom", lambda d: d.update(version=2)),
    "classroom fractional max_score": ("classroom", lambda d: d.update(max_score=99.5)),
    "classroom status passed": ("classroom", lambda d: d.update(status="passed")),
    "classroom test without line_no": ("classroom", lambda d: d["tests"][0].pop("line_no")),
}


@pytest.mark.parametrize("breakage", BREAKAGES)
def test_schemas_reject_what_the_consumers_cannot_read(breakage, graded):
    name, broken = BREAKAGES[breakage]
    document = results.FORMATS[name](graded["partial"], "en")
    validator(name).validate(document)
    broken(document)
    with pytest.raises(jsonschema.ValidationError):
        validator(name).validate(document)


# ------------------------------------------------------------------ share_points


def eighths(number):
    return Fraction(number) * 8


def test_share_points_gives_the_leftover_units_to_the_largest_remainders():
    assert share_points(40, [1, 1, 1]) == [13.375, 13.375, 13.25]
    assert share_points(10, [1, 1, 1]) == [3.375, 3.375, 3.25]
    # 15 * (1, 2, 4) / 7 = 2.142..., 4.285..., 8.571... in eighths: 17.1, 34.3, 68.6 -> 17, 34, 69.
    assert share_points(15, [1, 2, 4]) == [2.125, 4.25, 8.625]
    assert share_points(25, [3, 1]) == [18.75, 6.25]
    assert share_points(0, [1, 2, 3]) == [0.0, 0.0, 0.0]
    assert share_points(7.5, [1]) == [7.5]
    assert share_points(10, [1, 1, 1], unit=Fraction(1, 4)) == [3.5, 3.25, 3.25]
    assert share_points(10, [1, 1, 1], unit=1) == [4.0, 3.0, 3.0]


def test_share_points_breaks_ties_by_position():
    # Equal remainders: the earlier tests get the extra unit, on every call.
    shares = share_points(1, [1] * 7)
    assert shares == [0.25, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125]
    assert all(share_points(1, [1] * 7) == shares for _ in range(5))


@settings(derandomize=True, max_examples=150, deadline=None, database=None)
@given(
    total_units=st.integers(0, 8_000),
    weights=st.lists(
        st.one_of(st.integers(1, 50), st.decimals("0.01", "9.99", places=2).map(float)),
        min_size=1, max_size=40,
    ),
)
def test_share_points_adds_up_exactly_by_largest_remainder(total_units, weights):
    total = total_units / 8
    shares = share_points(total, weights)
    assert len(shares) == len(weights)
    assert sum(eighths(s) for s in shares) == total_units, "the shares add up to the total, to the unit"
    assert all(eighths(s).denominator == 1 and s >= 0 for s in shares), "whole units"
    exact = [Fraction(total_units) * Fraction(str(w)) / sum(Fraction(str(v)) for v in weights) for w in weights]
    got = [eighths(s) for s in shares]
    assert all(math.floor(e) <= g <= math.floor(e) + 1 for e, g in zip(exact, got)), "each within a unit of its quota"
    rounded_up = [e - math.floor(e) for e, g in zip(exact, got) if g > math.floor(e)]
    kept_down = [e - math.floor(e) for e, g in zip(exact, got) if g == math.floor(e) and e != g]
    if rounded_up and kept_down:
        assert min(rounded_up) >= max(kept_down), "the extra units go to the largest remainders"
    assert share_points(total, list(weights)) == shares, "deterministic"


@pytest.mark.parametrize("unit", ["0.1", "0.375", "3", "0", "-0.5"])
def test_a_rubric_unit_that_is_not_a_power_of_two_is_refused(tmp_path, unit):
    rubric = tmp_path / "rubric.toml"
    rubric.write_text(f"[categories]\ngradients = 40\n[points]\nunit = {unit}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="power of two"):
        load_rubric(rubric)


def test_category_points_must_be_whole_units(tmp_path):
    rubric = tmp_path / "rubric.toml"
    rubric.write_text("[categories]\ngradients = 40.1\n[points]\nunit = 0.125\n", encoding="utf-8")
    with pytest.raises(ValueError, match="whole number of units"):
        load_rubric(rubric)


def test_rubric_categories_are_the_graded_categories():
    rubric = load_rubric()
    points, weights = rubric.points, rubric.weights
    assert set(points) == set(categories())
    assert all(p > 0 for p in points.values())
    assert all(w > 0 for w in weights.values())
