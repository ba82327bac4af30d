"""The graded suites catch realistic mistakes, warn of them publicly, and charge the right category.

Each mutant in tests/mutants.py is the reference with one student-style bug. It is
graded with the public suite (what students run) and the hidden suite (what
grades them). In both it must lose points, and lose them in the category whose
tests exist for that kind of mistake: a mutant that keeps full marks means a
suite lacks an input that exposes it (the mutant's `why` says which), and a
mutant that loses hidden points while keeping full public marks is a mistake
the public suite never warns of. A mistake in reverse mode (any category but
forward_mode) must cost no forward-mode points: one mistake, one category.
"""

import pytest

from grader.engine import Engine
from grader.exercise import categories
from mutants import BY_ID, MUTANTS, REFERENCE

SUITES = ("public", "hidden")


@pytest.fixture(scope="module")
def graded(grade_submission, mutant_file):
    """graded(mutant, suite) -> its GradeResult for that suite (each graded once).

    The feedback refinement (shrinking each failing program for its message) is
    left out: it runs after a test's outcome is decided, cannot change a score,
    and takes a fifth of the time. tests/test_grading.py grades with it.
    """
    results = {}

    def result(mutant, suite):
        key = (mutant.id, suite)
        if key not in results:
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(Engine, "refine", lambda self, finding: finding)
                results[key] = grade_submission(mutant_file(mutant), suite=suite)
            assert results[key].problem is None, f"{mutant.id} should load and be graded: {results[key].problem}"
        return results[key]

    return result


def test_corpus_has_many_distinct_mistakes_in_every_category():
    assert len(MUTANTS) >= 25
    assert len(BY_ID) == len(MUTANTS), "mutant ids must be unique"
    assert {m.category for m in MUTANTS} == set(categories())
    assert len({(m.find, m.replace) for m in MUTANTS}) == len(MUTANTS), "two mutants make the same edit"


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.id)
def test_mutant_is_one_edit_of_the_current_reference(mutant):
    reference = REFERENCE.read_text(encoding="utf-8")
    assert reference.count(mutant.find) == 1, f"{mutant.id}: update its find text to the current reference"
    source = mutant.apply(reference)
    assert source != reference
    compile(source, f"{mutant.id}.py", "exec")


@pytest.mark.slow  # every kit mutant, graded
@pytest.mark.parametrize("suite", SUITES)
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.id)
def test_mutant_loses_points_in_its_category(mutant, suite, graded):
    result = graded(mutant, suite)
    categories = result.categories()
    assert mutant.category in categories, f"suite {suite!r} has no {mutant.category} tests"
    earned, possible = categories[mutant.category]
    assert earned < possible, (
        f"{mutant.id} keeps full marks in {mutant.category} ({earned}/{possible}) on the {suite} suite; "
        f"it needs an input where {mutant.why}. All categories: {categories}"
    )
    assert result.score < result.max_score
    failed = [t for t in result.tests if not t.passed and t.category == mutant.category]
    assert failed and all(t.message("en") and t.message("zh") for t in failed)


@pytest.mark.slow  # every kit mutant, graded on both suites
def test_no_mutant_that_loses_hidden_points_keeps_full_public_marks(graded):
    silent = []
    for mutant in MUTANTS:
        public, hidden = graded(mutant, "public"), graded(mutant, "hidden")
        if hidden.score < hidden.max_score and public.score == public.max_score:
            lost = [t.nodeid for t in hidden.tests if not t.passed]
            silent.append(f"{mutant.id} ({mutant.why}): full public marks, fails hidden {lost}")
    assert not silent, "the public suite never warns of:\n" + "\n".join(silent)


@pytest.mark.parametrize("suite", SUITES)
@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.category != "forward_mode"], ids=lambda m: m.id)
def test_a_reverse_mode_mistake_costs_no_forward_mode_points(mutant, suite, graded):
    earned, possible = graded(mutant, suite).categories()["forward_mode"]
    assert earned == possible, f"{mutant.id}, a {mutant.category} mistake, costs forward_mode points on the {suite} suite"
