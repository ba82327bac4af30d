"""The class at a glance: the gradebook's problems column, grades.html and what a re-run changed.

A small class (correct, buggy, empty and hostile-named submissions) is graded
once with `batch.run` and its default suite. The gradebook must name every
problem of a student who lost points and none of one who did not; the class
report must parse, reference nothing outside itself, show the same numbers as
the gradebook (the histogram's bars, the problems' counts), link each student to
their own report by the file name batch chose, escape every name, and be the
same bytes when nothing changed. The seam (grader/problems.py) is specified
with documents built by hand, with and without `extra_data.diagnoses`.
"""

import copy
import csv
import io
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader import batch, class_report, cli, gradebook_changes, histogram
from grader.problems import problem_ids, problems_of
from grader.worker_client import Limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutants import BY_ID as MUTANTS_BY_ID, mutant_source  # noqa: E402
from strict_html import parse  # noqa: E402

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
    assert book["hal"]["problems"] == "loads"


def test_a_problem_carries_its_smallest_program(graded):
    work, out, _ = graded
    [problem] = problems_of(document_of(out, "cat"))
    assert problem["op"] == "+" and problem["points"] > 0 and problem["tests"]
    assert "n0 + n0" in problem["program"] and problem["summary"]["en"] and problem["summary"]["zh"]


def page_of(out):
    return class_report.report_path(out).read_text(encoding="utf-8")


def test_the_class_report_parses_and_references_nothing_outside_itself(graded):
    work, out, _ = graded
    page = page_of(out)
    parser = parse(page)
    assert not parser.problems and parser.stack == [], parser.problems[:5]
    assert page.startswith("<!DOCTYPE html>")
    assert not [t for t, _ in parser.tags if t in ("img", "script", "link", "iframe", "object", "embed")]
    for tag, attrs in parser.tags:
        assert "src" not in attrs and not any(key.startswith("on") for key in attrs), (tag, attrs)
        href = attrs.get("href")
        if href is not None:
            assert href.startswith("#") or href.startswith("grades-results/"), href
            assert ":" not in href and "//" not in href and ".." not in href, href
    for pattern in ("http:", "https:", "@import", "@font-face", "url("):
        assert pattern not in page


def test_the_histogram_shows_the_gradebook(graded):
    work, out, _ = graded
    book = read_gradebook(out)
    bars = {attrs["data-bin"]: int(attrs["data-count"]) for tag, attrs in parse(page_of(out)).tags
            if tag == "rect" and attrs.get("class") == "bin"}
    assert list(bars) == list(histogram.LABELS)
    expected = histogram.counts([(float(r["total"]), float(r["max_total"])) for r in book.values()
                                 if r["status"] != "error"])
    assert list(bars.values()) == expected
    assert sum(expected) == len(book) and bars["100"] == 2 and bars["0-9"] == 1


def test_the_problem_counts_are_the_gradebooks(graded):
    work, out, _ = graded
    book = read_gradebook(out)
    counted = {}
    for row in book.values():
        for key in row["problems"].split():
            counted[key] = counted.get(key, 0) + 1
    shown = {attrs["data-problem"]: int(attrs["data-count"]) for tag, attrs in parse(page_of(out)).tags
             if tag == "tr" and "data-problem" in attrs}
    assert shown == counted
    assert shown["assign-instead-of-add"] == 3  # `=` in +, twice, and in *
    order = [attrs["data-problem"] for tag, attrs in parse(page_of(out)).tags if "data-problem" in attrs]
    assert order[0] == "assign-instead-of-add"  # the most common first


def test_each_problem_shows_its_smallest_program_and_who_has_it(graded):
    work, out, _ = graded
    page = page_of(out)
    section = page.split('id="problem-1"', 1)[1].split("</section>", 1)[0]
    assert "assign-instead-of-add" in section and "<pre>" in section and "n0 + n0" in section
    assert ">cat</a>" in section and ">dan</a>" in section and ">eve</a>" in section
    assert ">ann</a>" not in section


def test_every_student_links_to_their_own_report(graded):
    work, out, _ = graded
    book = read_gradebook(out)
    names = batch.results_names(list(book))
    links, student = {}, None
    for tag, attrs in parse(page_of(out)).tags:  # the first link of each row of the students' table
        if tag == "tr":
            student = attrs.get("data-student")
        elif tag == "a" and student is not None:
            links[student], student = attrs["href"], None
    assert set(links) == set(book)
    for student, href in links.items():
        assert href == f"grades-results/{names[student]}.html", (student, href)
        report = out.parent / href
        assert report.is_file() and report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_names_are_text_never_markup(graded):
    work, out, _ = graded
    page = page_of(out)
    assert HOSTILE not in page and "<img" not in page
    tags = parse(page).tags
    assert not [t for t, _ in tags if t == "img"]
    assert [attrs for t, attrs in tags if t == "tr" and attrs.get("data-student") == HOSTILE]


def test_the_page_has_both_languages(graded):
    work, out, _ = graded
    page = page_of(out)
    for key in ("title", "distribution", "problems"):
        text = class_report.WORDS[key]
        assert f'lang="en">{text["en"]}' in page and f'lang="zh">{text["zh"]}' in page


@pytest.mark.skipif(not shutil.which("chromium"), reason="chromium is not installed (apt-get install chromium)")
def test_chromium_renders_the_class_report(graded):
    work, out, _ = graded
    with tempfile.TemporaryDirectory() as profile:
        command = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                   "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}"]
        done = subprocess.run(command + ["--dump-dom", class_report.report_path(out).as_uri()],
                              capture_output=True, text=True, timeout=120)
        shot = work / "class-report.png"
        subprocess.run(command + [f"--screenshot={shot}", "--window-size=1200,1600",
                                  class_report.report_path(out).as_uri()], capture_output=True, timeout=120)
    dom = done.stdout
    book = read_gradebook(out)
    assert dom.count('class="bin"') == len(histogram.LABELS), done.stderr[-2000:]
    for key in ("assign-instead-of-add", "mul-not-crossed", "loads"):
        count = sum(1 for r in book.values() if key in r["problems"].split())
        assert f'data-problem="{key}" data-count="{count}"' in dom
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_a_rerun_writes_the_same_bytes_and_says_what_changed(graded):
    work, out, _ = graded
    first = io.StringIO()
    batch.run(work / "class", out, jobs=1, limits=LIMITS, stream=first)
    csv_bytes, page_bytes = out.read_bytes(), class_report.report_path(out).read_bytes()
    assert "since the last gradebook: 0 new, 0 regraded, 9 unchanged, 0 removed" in first.getvalue()
    again = io.StringIO()
    batch.run(work / "class", out, jobs=1, limits=LIMITS, stream=again)
    assert out.read_bytes() == csv_bytes and class_report.report_path(out).read_bytes() == page_bytes

    (work / "class" / "cat.py").write_text(REFERENCE_TEXT, encoding="utf-8")
    (work / "class" / "ivy.py").write_text(REFERENCE_TEXT, encoding="utf-8")
    (work / "class" / "gus.py").unlink()
    changed = io.StringIO()
    batch.run(work / "class", out, jobs=1, limits=LIMITS, stream=changed)
    summary = changed.getvalue().splitlines()[-1]
    assert "since the last gradebook: 1 new, 1 regraded (1 submission changed), 7 unchanged, 1 removed" in summary
    assert "removed since the last gradebook: gus" in changed.getvalue()
    rows = {attrs["data-change"]: attrs for tag, attrs in parse(page_of(out)).tags
            if tag == "tr" and "data-change" in attrs}
    assert {key: int(attrs["data-count"]) for key, attrs in rows.items()} == \
        {"new": 1, "regraded": 1, "unchanged": 7, "removed": 1}
    assert rows["regraded"]["data-reason"] == "submission"
    assert read_gradebook(out)["cat"]["problems"] == ""


# ------------------------------------------------------------ the seam, by hand


def document(score=100.0, max_score=100.0, status="graded", diagnoses=None, grader_error=False):
    data = {"score": score, "tests": [], "extra_data": {"max_score": max_score, "batch": {"status": status}}}
    if diagnoses is not None:
        data["extra_data"]["diagnoses"] = diagnoses
    if grader_error:
        data["extra_data"]["grader_error"] = True
    return data


def diagnosis(id, op=None, tests=("test_x",), points=1.0, program=""):
    return {"id": id, "op": op, "summary": {"en": f"about {id}", "zh": f"关于 {id}"}, "tests": list(tests),
            "points": points, "program": program}


def test_the_problems_are_the_documents_diagnoses():
    found = problems_of(document(score=95.5, diagnoses=[
        diagnosis("paths-add-assign", "+", ["test_x_plus_x", "test_diamond"], 3.0, "a\nb"),
        diagnosis("missing-upstream", "tanh", ["test_tanh"], 1.5)]))
    assert [(p["id"], p["op"], p["points"]) for p in found] == [("missing-upstream", "tanh", 1.5),
                                                                ("paths-add-assign", "+", 3.0)]
    assert found[1]["summary"] == {"en": "about paths-add-assign", "zh": "关于 paths-add-assign"}
    assert found[1]["tests"] == ["test_x_plus_x", "test_diamond"] and found[1]["program"] == "a\nb"


def test_the_problems_are_the_same_whatever_the_order_of_the_diagnoses():
    pick = random.Random(1).choice
    diagnoses = [diagnosis(pick("abc"), pick(["+", "*", None]), [f"t{n}"], n / 8) for n in range(30)]
    expected = problems_of(document(score=50.0, diagnoses=diagnoses))
    for seed in range(5):
        shuffled = copy.deepcopy(diagnoses)
        random.Random(seed).shuffle(shuffled)
        assert problems_of(document(score=50.0, diagnoses=shuffled)) == expected


def test_a_submission_the_grader_failed_on_is_one_problem():
    assert problem_ids(document(score=0.0, status="error")) == ["grader-error"]
    assert problem_ids(document(score=0.0, grader_error=True)) == ["grader-error"]
    assert problems_of(document(score=0.0, status="error"))[0]["points"] == 100.0


def test_a_lost_point_always_has_a_problem_and_a_full_score_none():
    assert problems_of(document()) == []
    assert problem_ids(document(score=99.0)) == ["unexplained"]
    assert problem_ids(document(score=99.0, diagnoses=[])) == ["unexplained"]
    assert problem_ids(document(score=99.0, diagnoses=[diagnosis("h")])) == ["h"]


@pytest.mark.parametrize("broken", [None, [], "text", {"extra_data": 3}, {"extra_data": {"batch": []}},
                                    {"extra_data": {"diagnoses": "x", "batch": {"failures": 7}}, "tests": "x"},
                                    {"extra_data": {"diagnoses": [{"id": 1, "tests": "x", "summary": 2, "op": [1]},
                                                                  {"id": "a", "op": 3}]}},
                                    {"score": "high", "extra_data": {"max_score": None}}])
def test_the_seam_never_raises_on_a_malformed_document(broken):
    assert isinstance(problems_of(broken), list)


# ------------------------------------------------------------ the pieces


def test_scores_fall_into_exact_bins():
    assert histogram.bin_of(0, 100) == 0 and histogram.bin_of(9.875, 100) == 0
    assert histogram.bin_of(10, 100) == 1 and histogram.bin_of(89.999, 100) == 8
    assert histogram.bin_of(99.875, 100) == 9 and histogram.bin_of(100, 100) == 10
    assert histogram.bin_of(0.3, 0.3) == 10 and histogram.bin_of(0.2, 0.3) == 6
    assert histogram.counts([(5, 100), (100, 100), (1, 0)]) == [1] + [0] * 9 + [1]  # no maximum: left out
    assert histogram.ticks(0) == [0, 1] and histogram.ticks(7) == [0, 2, 4, 6, 8]
    assert histogram.ticks(200) == [0, 50, 100, 150, 200]


def row(student, reused):
    return batch.Row(student, "graded", score=1.0, max_score=1.0, reused=reused)


def test_changes_are_counted_against_the_last_gradebooks_cells():
    rows = [row("=x", True), row("kept", True), row("edited", False), row("late", False), row("merged", True)]
    changes = gradebook_changes.compare({"'=x", "kept", "edited", "gone"}, rows, {"edited": "submission"},
                                        batch._cell)
    assert not changes.first
    assert changes.new == ["late", "merged"] and changes.unchanged == ["=x", "kept"]
    assert changes.regraded == {"edited": "submission"} and changes.removed == ["gone"]
    assert changes.summary() == ("since the last gradebook: 2 new, 1 regraded (1 submission changed), "
                                 "2 unchanged, 1 removed")
    first = gradebook_changes.compare(None, rows, {}, batch._cell)
    assert first.first and len(first.new) == 5 and first.summary() == "first gradebook here: 5 new"


def test_a_regrade_says_why(tmp_path):
    results = tmp_path / "ann.json"
    assert gradebook_changes.regrade_reason(results, "h", "f") == "missing"
    for stored, reason in (({"content_sha256": "old", "grader_fingerprint": "f"}, "submission"),
                           ({"content_sha256": "h", "grader_fingerprint": "old"}, "grader"),
                           ({"content_sha256": "h", "grader_fingerprint": "f", "status": "error"}, "error")):
        batch.files.write_json(results, {"extra_data": {"batch": stored}})
        assert gradebook_changes.regrade_reason(results, "h", "f") == reason


def problem(key, op=None, points=1.0, program=""):
    return {"id": key, "op": op, "summary": {"en": key, "zh": key}, "tests": [], "points": points, "program": program}


def test_the_class_counts_students_not_instances():
    common = class_report.class_problems({
        "ann": [problem("a", "+", 2.0, "x\ny\nz"), problem("a", "*", 1.0, "x\ny")],
        "ben": [problem("a", "+", 0.5, "x\ny\nz\nw"), problem("b")],
        "cy": [problem("b", program="q")], "dee": [problem("c", points=9.0)], "eli": []})
    assert list(common) == ["a", "b", "c"]  # most students first, then most points
    assert common["a"]["students"] == ["ann", "ben"] and common["a"]["ops"] == ["*", "+"]
    assert common["a"]["points"] == 3.5 and common["a"]["program"] == "x\ny"
    assert common["b"]["students"] == ["ben", "cy"] and common["b"]["program"] == "q"


def test_the_report_is_never_the_gradebook():
    assert class_report.report_path(Path("x/grades.csv")) == Path("x/grades.html")
    assert class_report.report_path(Path("x/grades")) == Path("x/grades.html")
    assert class_report.report_path(Path("x/grades.html")) == Path("x/grades.html.html")


def test_a_page_of_no_students_and_a_page_of_many_are_well_formed():
    empty = class_report.render([], {}, {}, gradebook_changes.Changes(), "all")
    assert not parse(empty).problems and parse(empty).stack == []
    rows = [batch.Row(f"s{n:03d}", "graded", score=float(n % 101), max_score=100.0, reused=True,
                      problems=[] if n % 101 == 100 else [f"p{n % 7}"]) for n in range(200)]
    changes = gradebook_changes.compare({batch._cell(r.student) for r in rows}, rows, {}, batch._cell)
    page = class_report.render(rows, {}, {r.student: f"r/{r.student}.json" for r in rows}, changes, "all", "zh")
    assert page == class_report.render(rows, {}, {r.student: f"r/{r.student}.json" for r in rows}, changes, "all",
                                       "zh")
    parser = parse(page)
    assert not parser.problems and parser.stack == []
    assert sum(int(a["data-count"]) for t, a in parser.tags if t == "rect" and a.get("class") == "bin") == 200
    shown = {a["data-problem"]: int(a["data-count"]) for t, a in parser.tags if "data-problem" in a}
    assert shown == {f"p{k}": sum(1 for r in rows if r.problems == [f"p{k}"]) for k in range(7)}
