"""Feedback in mistakes: each mistake is one problem, named once, in every report.

A submission's failed tests are grouped by what went wrong (grader/feedback/diagnose.py).
The terminal says "N problems found" and shows every one; the results carry them as
`extra_data.diagnoses`. Every kit mutant is named in the first problem shown; three
independent mistakes are three problems; a file that cannot load is one problem;
and each message that used to mislead has the text that replaced it pinned here.
"""

import io
import json
import re

import pytest

from grader import results as results_format
from grader import terminal
from grader.feedback.diagnose import diagnose
from mutants import BY_ID, MUTANTS, NO_HINT, REFERENCE, expected_culprit, expected_hint

SOURCE = REFERENCE.read_text(encoding="utf-8")
THREE_MISTAKES = ("tanh_uses_input", "relu_tests_output_not_below_zero", "dual_mul_missing_cross_term")


def write(tmp_path, source, name="tiny_autograd.py"):
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return path


def edited(*replacements):
    """The reference with each (find, replace) applied; each find occurs once."""
    source = SOURCE
    for find, replace in replacements:
        assert source.count(find) == 1, find
        source = source.replace(find, replace)
    return source


def terminal_text(result, lang="en"):
    stream = io.StringIO()
    terminal.summary(result, lang, "results.json", stream=stream)
    return stream.getvalue()


@pytest.fixture(scope="module")
def three_mistakes(tmp_path_factory, grade_submission):
    folder = tmp_path_factory.mktemp("three")
    source = SOURCE
    for mutant_id in THREE_MISTAKES:
        source = BY_ID[mutant_id].apply(source)
    return grade_submission(write(folder, source), suite="all")


# ---------------------------------------------------------- one problem per mistake


def test_three_independent_mistakes_are_three_problems(three_mistakes):
    found = {(d.id, d.op) for d in three_mistakes.diagnoses()}
    assert found == {("tanh-uses-input", "tanh"), ("relu-always-passes", "relu"),
                     ("dual-mul-cross-term", "Dual.*")}


def test_every_failed_test_is_under_exactly_one_problem(three_mistakes):
    listed = [t.nodeid for d in three_mistakes.diagnoses() for t in d.tests]
    failed = [t.nodeid for t in three_mistakes.tests if not t.passed]
    assert sorted(listed) == sorted(failed)


def test_the_problems_cost_exactly_the_points_lost(three_mistakes):
    lost = three_mistakes.max_score - three_mistakes.score
    assert sum(d.points for d in three_mistakes.diagnoses()) == pytest.approx(lost)
    for diagnosis in three_mistakes.diagnoses():
        assert sum(diagnosis.lost.values()) == pytest.approx(diagnosis.points)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_terminal_names_every_problem(three_mistakes, lang):
    text = terminal_text(three_mistakes, lang)
    heading = "3 problems found" if lang == "en" else "发现 3 个问题"
    assert heading in text
    for number, diagnosis in enumerate(three_mistakes.diagnoses(), start=1):
        assert f"{number}. " in text
        assert " ".join(diagnosis.summary[lang].split()[:3]) in " ".join(text.split())


def test_the_results_carry_every_problem_in_both_languages(three_mistakes):
    document = results_format.gradescope(three_mistakes)
    diagnoses = document["extra_data"]["diagnoses"]
    assert [(d["id"], d["op"]) for d in diagnoses] == [(d.id, d.op) for d in three_mistakes.diagnoses()]
    names = {t["name"].split(":")[0] for t in document["tests"] if t["status"] == "failed"}
    for entry in diagnoses:
        assert set(entry["summary"]) == {"en", "zh"} and re.search(r"[\u4e00-\u9fff]", entry["summary"]["zh"])
        assert entry["tests"] and set(entry["tests"]) <= names
        assert entry["points"] > 0 and entry["program"].startswith("from tiny_autograd import")
    json.dumps(document, allow_nan=False)


def test_the_most_costly_problem_comes_first(three_mistakes):
    points = [d.points for d in three_mistakes.diagnoses()]
    assert points == sorted(points, reverse=True)


@pytest.mark.slow  # every kit mutant, graded
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.id)
def test_every_kit_mutant_is_named_in_the_first_problem(mutant, mutant_file, graded_once):
    result = graded_once(mutant_file(mutant), "all")
    first = result.diagnoses()[0]
    assert first.op == expected_culprit(mutant), [(d.id, d.op) for d in result.diagnoses()]
    hint = expected_hint(mutant.id)
    if hint not in (None, NO_HINT):
        assert first.id == hint


def test_the_reference_has_no_problem(graded_once):
    assert graded_once(REFERENCE, "all").diagnoses() == []


def test_a_file_that_cannot_load_is_one_problem(tmp_path, grade_submission):
    result = grade_submission(write(tmp_path, SOURCE + "\ndef broken(:\n"), suite="public")
    (problem,) = result.diagnoses()
    assert problem.id == "loads" and problem.points == result.max_score
    assert "line" in problem.symptom["en"]
    assert terminal_text(result).count("Syntax error") == 1
    document = results_format.gradescope(result)
    assert document["output"].count("Syntax error") == 1
    assert not [t for t in document["tests"] if "Syntax error" in t["output"]]


def test_a_consequence_of_a_wrong_value_is_not_a_problem_of_its_own(tmp_path, grade_submission):
    """`-x` computing x makes `log` and `**` raise later, on inputs the reference keeps
    in their domain: one problem, in `__neg__`, not three."""
    source = edited(("    def __neg__(self):  # -x\n        return self * -1.0",
                     "    def __neg__(self):  # -x\n        return self * 1.0"))
    (problem,) = diagnose(grade_submission(write(tmp_path, source), suite="all"))
    assert problem.op == "Value.__neg__" and problem.id == "built-op"


# ---------------------------------------------------------- messages that misled


def test_a_reflected_method_returning_a_float_is_named(tmp_path, grade_submission):
    source = edited(("    __radd__ = __add__\n", "    def __radd__(self, other):\n        return self.val + other\n"))
    (problem,) = diagnose(grade_submission(write(tmp_path, source), suite="all"))
    assert problem.op == "Dual.__radd__" and problem.id == "returns-a-node"
    assert re.fullmatch(r"`[-\d.]+ \+ n\d+` returned a float, not a Dual: see `Dual.__radd__`\.",
                        problem.symptom["en"])
    assert "read" not in problem.symptom["en"]


def test_a_derived_op_is_blamed_on_its_own_method_not_a_primitive(tmp_path, grade_submission):
    source = edited(("        return Value(other) - self\n", "        return self - Value(other)\n"))
    (problem,) = diagnose(grade_submission(write(tmp_path, source), suite="all"))
    assert problem.op == "Value.__rsub__" and problem.id == "reflected-op"
    cause = problem.finding["cause"]["en"]
    assert "runs `Value.__rsub__`" in cause and "the mistake is in `Value.__rsub__` itself" in cause
    assert "`*`" not in problem.summary["en"] and "_backward" not in problem.nudge["en"]


def test_the_log_hint_does_not_contradict_itself():
    from grader.feedback.catalog import load

    hint = load().hint("log-wrong-derivative")
    for text in (hint.summary["en"], hint.en, hint.explain["en"]):
        assert "is not (1 / x)" not in text and "not 1 / x" not in text


def test_an_instance_attribute_hiding_backward_is_named(tmp_path, grade_submission):
    source = "\n".join(line for line in SOURCE.splitlines() if "__slots__" not in line) + "\n"
    source = source.replace("        self._backward = _leaf_backward\n",
                            "        self._backward = _leaf_backward\n        self.backward = lambda: None\n", 1)
    (problem,) = diagnose(grade_submission(write(tmp_path, source), suite="public"))
    assert problem.id == "method-runs"
    assert "never ran the method `Value.backward`" in problem.symptom["en"]
    assert "root" not in problem.summary["en"]


def test_a_tanh_mistake_fails_no_test_named_for_order(tmp_path, graded_once, mutant_file):
    result = graded_once(mutant_file(BY_ID["tanh_uses_input"]), "all")
    assert not [t.name for t in result.tests if not t.passed and "order" in t.name]


def test_a_dual_default_der_of_one_is_named_in_the_constructor(mutant_file, graded_once):
    (problem,) = graded_once(mutant_file(BY_ID["dual_default_der_one"]), "all").diagnoses()
    assert problem.op == "Dual.__init__" and problem.id == "dual-constant"
    assert "inputs  are" not in problem.finding["cause"]["en"]


def test_no_hint_or_rule_gives_the_code_of_the_fix():
    """Level 2 and 3 texts state concepts, never the line to write."""
    from grader.feedback.catalog import load

    catalog = load()
    texts = [h.en for h in catalog.hints] + [h.explain["en"] for h in catalog.hints if h.explain]
    texts += [r["nudge"]["en"] for r in catalog.rules.values() if r.get("nudge")]
    for text in texts:
        assert "out.grad" not in text or "sends" not in text, text
        assert not re.search(r"(self|other)\.grad\s*\+?=", text), text
        assert "> 0 else" not in text, text


# ---------------------------------------------------------- advice, not grades


def test_a_recursive_sort_keeps_full_marks_and_hears_of_deep_graphs(graded_once):
    """The seed's own engine sorts recursively: full marks, and a note about 5,000-node chains."""
    result = graded_once(REFERENCE.parent.parent / "tests" / "seed_tiny_autograd.py", "all")
    assert result.score == result.max_score
    (note,) = result.notes
    assert note["en"].startswith("Not graded: ") and "RecursionError" in note["en"]
    assert note["zh"].startswith("不计分：")
    assert "RecursionError" in terminal_text(result)


def test_the_reference_gets_no_advice(graded_once):
    assert graded_once(REFERENCE, "all").notes == []


def test_a_node_exponent_without_a_gradient_is_pointed_out(tmp_path, grade_submission):
    source = edited(('        if isinstance(k, bool) or not isinstance(k, (int, float)):',
                     '        k = k.data if isinstance(k, Value) else k\n'
                     '        if isinstance(k, bool) or not isinstance(k, (int, float)):'))
    result = grade_submission(write(tmp_path, source), suite="public")
    assert result.score == result.max_score
    (note,) = result.notes
    assert "k.grad is 0.0" in note["en"] and "5.54518" in note["en"]
