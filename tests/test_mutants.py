"""The graded suites catch realistic mistakes, and charge them to the right category.

Each mutant in tests/mutants.py is the reference with one student-style bug. Graded
with suite "all" (public and hidden), it must lose points, and lose them in the
category whose tests exist for that kind of mistake. A mutant that keeps full marks
means the suites lack an input that exposes it (the mutant's `why` says which).
"""

import pytest

from grader.engine import Engine
from grader.exercise import categories
from mutants import BY_ID, MUTANTS, REFERENCE


@pytest.fixture(scope="module")
def graded(grade_submission, mutant_file):
    """graded(mutant) -> its GradeResult for suite "all" (each mutant is graded once).

    The feedback refinement (shrinking each failing program for its message) is
    left out: it runs after a test's outcome is decided, cannot change a score,
    and takes a fifth of the time. tests/test_grading.py grades with it.
    """
    results = {}

    def result(mutant):
        if mutant.id not in results:
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(Engine, "refine", lambda self, finding: finding)
                results[mutant.id] = grade_submission(mutant_file(mutant), suite="all")
        return results[mutant.id]

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


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.id)
def test_mutant_loses_points_in_its_category(mutant, graded):
    result = graded(mutant)
    assert result.problem is None, f"{mutant.id} should load and be graded: {result.problem}"
    categories = result.categories()
    assert mutant.category in categories, f"suite 'all' has no {mutant.category} tests"
    earned, possible = categories[mutant.category]
    assert earned < possible, (
        f"{mutant.id} keeps full marks in {mutant.category} ({earned}/{possible}); "
        f"the suites need an input where {mutant.why}. All categories: {categories}"
    )
    assert result.score < result.max_score
    failed = [t for t in result.tests if not t.passed and t.category == mutant.category]
    assert failed and all(t.message("en") and t.message("zh") for t in failed)
