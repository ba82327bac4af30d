"""The class at a glance: the gradebook's problems column.

A small class (correct, buggy, empty and hostile-named submissions) is graded
once with `batch.run` and its default suite. The gradebook must name every
problem of a student who lost points and none of one who did not. The seam
(grader/problems.py) is specified with documents built by hand, with and
without `extra_data.diagnoses`.
"""

import copy
import csv
import io
import json
import random
import sys
from pathlib import Path

import pytest

from grader import batch, cli
from grader.problems import problem_ids, problems_of
from grader.worker_client import Limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutants import BY_ID as MUTANTS_BY_ID, mutant_source  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_TEXT = (ROOT / "reference" / "tiny_autograd.py").read_text(encoding="utf-8")
LIMITS = Limits(call_seconds=0.5, budget_seconds=2.0, load_seconds=2.0)
HOSTILE = '"><img src=x onerror=alert(1)>&amp;'


def read_gradebook(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


# ------------------------------------------------------------ a graded class


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """(work folder, gradebook path, stderr of the run) for a small class graded once."""
    work = tmp_path_factory.mktemp("class-report")
    folder = work / "class"
    folder.mkdir()
    (folder / "ann.py").write_text(REFERENCE_TEXT, encoding="utf-8")
    (folder / "ben").mkdir()
    (folder / "ben" / "tiny_autograd.py").write_text(REFERENCE_TEXT, encoding="utf-8")
    for student, mutant in (("cat", "add_assigns"), ("dan", "add_assigns"), ("eve", "mul_assigns"),
                            ("fay", "mul_not_crossing"), ("gus", "leaf_grads_reset_too")):
        (folder / f"{student}.py").write_text(mutant_source(MUTANTS_BY_ID[mutant]), encoding="utf-8")
    (folder / "hal.py").write_text("", encoding="utf-8")
    (folder / HOSTILE).mkdir()
    (folder / HOSTILE / "tiny_autograd.py").write_text(mutant_source(MUTANTS_BY_ID["tanh_uses_input"]),
                                                       encoding="utf-8")
    out = work / "grades.csv"
    stream = io.StringIO()
    batch.run(folder, out, jobs=2, limits=LIMITS, stream=stream)
    return work, out, stream.getvalue()


def document_of(out, student):
    name = batch.results_names(list(read_gradebook(out)))[student]
    return json.loads((batch.results_folder(out) / f"{name}.json").read_text(encoding="utf-8"))


def test_batch_grades_with_the_hidden_tests_by_default(graded):
    work, out, log = graded
    assert "suite all" in log
    assert document_of(out, "ann")["extra_data"]["suite"] == "all"
    assert cli.build_parser().parse_args(["batch", "somewhere"]).suite == "all"
    assert cli.build_parser().parse_args(["batch", "somewhere", "--suite", "public"]).suite == "public"


def test_the_problems_column_names_each_problem_of_a_student_who_lost_points(graded):
    work, out, _ = graded
    with open(out, newline="", encoding="utf-8") as handle:
        assert next(csv.reader(handle))[-1] == "problems"
    book = read_gradebook(out)
    for student, row in book.items():
        ids = row["problems"].split()
        if float(row["total"]) == float(row["max_total"]):
            assert ids == [], student
        else:
            assert ids and ids == sorted(set(ids)), (student, ids)
            assert ids == problem_ids(document_of(out, student)), student
    assert book["ann"]["problems"] == book["ben"]["problems"] == ""
    assert book["cat"]["problems"] == book["dan"]["problems"] == "assign-instead-of-add"
    assert book["fay"]["problems"] == "mul-not-crossed"
    assert book["hal"]["problems"] == "cannot-load"


def test_a_stand_in_problem_carries_its_smallest_program(graded):
    work, out, _ = graded
    [problem] = problems_of(document_of(out, "cat"))
    assert problem["op"] == "+" and problem["points"] > 0 and problem["tests"]
    assert "n0 + n0" in problem["program"] and problem["summary"]["en"] and problem["summary"]["zh"]


# ------------------------------------------------------------ the seam, by hand


def document(score=100.0, max_score=100.0, status="graded", failures=(), tests=(), diagnoses=None):
    data = {"score": score, "tests": list(tests),
            "extra_data": {"max_score": max_score, "batch": {"status": status, "failures": list(failures)}}}
    if diagnoses is not None:
        data["extra_data"]["diagnoses"] = diagnoses
    return data


def failure(test, hint=None, rule=None, kind="grad", op=None, points=1.0, program=""):
    return {"test": test, "number": "", "points": points, "hint": hint, "rule": rule, "kind": kind, "op": op,
            "summary": {"en": f"about {test}", "zh": f"关于 {test}"}, "program": program}


def test_diagnoses_are_the_problems_when_the_document_has_them():
    diagnoses = [{"id": "paths-add-assign", "op": "+", "summary": {"en": "= for +=", "zh": "用了 ="},
                  "tests": ["test_x_plus_x", "test_diamond"], "points": 3.0},
                 {"id": "missing-upstream", "op": "tanh", "summary": {"en": "no upstream", "zh": "没乘上游"},
                  "tests": ["test_tanh"], "points": 1.5}]
    records = [failure("test_x_plus_x", hint="assign-instead-of-add", op="+", program="a\nb\nc"),
               failure("test_diamond", hint="assign-instead-of-add", op="+", program="a\nb"),
               failure("test_tanh", hint="missing-upstream", op="tanh", program="")]
    found = problems_of(document(score=95.5, failures=records, diagnoses=diagnoses))
    assert [(p["id"], p["op"], p["points"]) for p in found] == [("missing-upstream", "tanh", 1.5),
                                                                ("paths-add-assign", "+", 3.0)]
    assert found[1]["summary"] == {"en": "= for +=", "zh": "用了 ="}
    assert found[1]["program"] == "a\nb"  # the smallest of its tests' programs
    assert found[0]["program"] == ""


def test_without_diagnoses_failures_are_grouped_by_the_mistake_the_feedback_named():
    records = [failure("t1", hint="assign-instead-of-add", rule="paths-add", op="+", program="x\ny\nz"),
               failure("t2", hint="assign-instead-of-add", op="+", program="x\ny"),
               failure("t3", hint="assign-instead-of-add", op="*"),
               failure("t4", rule="topological-order", op="backward", kind="order"),
               failure("t5", kind="worker"), failure("t6", kind="worker"),
               failure("t7", kind="grad")]
    found = problems_of(document(score=90.0, failures=records))
    assert [(p["id"], p["op"], p["tests"], p["points"]) for p in found] == [
        ("assign-instead-of-add", "*", ["t3"], 1.0),
        ("assign-instead-of-add", "+", ["t1", "t2"], 2.0),
        ("could-not-finish", None, ["t5", "t6"], 2.0),
        ("test:t7", None, ["t7"], 1.0),
        ("topological-order", "backward", ["t4"], 1.0)]
    assert found[1]["program"] == "x\ny"
    assert problem_ids(document(score=90.0, failures=records)) == [
        "assign-instead-of-add", "could-not-finish", "test:t7", "topological-order"]


def test_the_stand_in_is_the_same_whatever_the_order_of_the_failures():
    pick = random.Random(1).choice
    records = [failure(f"t{n}", hint=pick(["a", "b", None]), rule=pick(["r", None]), op=pick(["+", "*", None]),
                       kind=pick(["grad", "worker"]), program="p" * (n % 4)) for n in range(30)]
    expected = problems_of(document(score=50.0, failures=records))
    for seed in range(5):
        shuffled = copy.deepcopy(records)
        random.Random(seed).shuffle(shuffled)
        assert problems_of(document(score=50.0, failures=shuffled)) == expected


def test_a_failed_test_with_no_record_is_a_problem_of_its_own():
    tests = [{"name": "test_a: it adds", "status": "failed", "score": 0.0, "max_score": 2.0, "output": "wrong\nmore"},
             {"name": "test_b: it multiplies", "status": "passed", "score": 1.0, "max_score": 1.0, "output": ""}]
    [found] = problems_of(document(score=98.0, tests=tests))
    assert (found["id"], found["tests"], found["points"], found["summary"]["en"]) == ("test:test_a", ["test_a"],
                                                                                      2.0, "wrong")


def test_a_submission_that_was_not_graded_is_one_problem():
    assert problem_ids(document(score=0.0, status="problem", failures=[failure("t", kind="worker")])) == ["cannot-load"]
    assert problem_ids(document(score=0.0, status="error")) == ["grader-error"]
    assert problems_of(document(score=0.0, status="problem"))[0]["points"] == 100.0


def test_a_lost_point_always_has_a_problem_and_a_full_score_none():
    assert problems_of(document()) == []
    assert problem_ids(document(score=99.0)) == ["unexplained"]
    assert problem_ids(document(score=99.0, diagnoses=[])) == ["unexplained"]
    assert problem_ids(document(score=99.0, diagnoses=[], failures=[failure("t", hint="h")])) == ["h"]


@pytest.mark.parametrize("broken", [None, [], "text", {"extra_data": 3}, {"extra_data": {"batch": []}},
                                    {"extra_data": {"diagnoses": "x", "batch": {"failures": 7}}, "tests": "x"},
                                    {"extra_data": {"diagnoses": [{"id": 1, "tests": "x", "summary": 2, "op": [1]},
                                                                  {"id": "a", "op": 3}]}},
                                    {"extra_data": {"batch": {"failures": [{"hint": 1, "op": ["x"], "summary": 2},
                                                                           {"op": {}, "test": None}]}}},
                                    {"score": "high", "extra_data": {"max_score": None}}])
def test_the_seam_never_raises_on_a_malformed_document(broken):
    assert isinstance(problems_of(broken), list)
