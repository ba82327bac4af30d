"""Grading a whole class: `python -m grader batch DIR --out grades.csv --jobs N`.

A generated class of 200 submissions mixes correct ones (files, folders,
notebooks), buggy ones (mutants of the reference), broken ones (syntax error,
empty, binary, no candidate file, exit at import) and hanging ones (a loop at
import, in backward, a sleep in _backward). The gradebook must give each
student what grading that submission alone gives, finish despite the hangs,
and a re-run must grade only what changed.
"""

import csv
import io
import json
import multiprocessing
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from authoring.notebook import notebook_text
from grader import batch, batch_jobs, class_report
from grader.worker_client import Limits
from mutants import BY_ID as MUTANTS_BY_ID, mutant_source

pytestmark = pytest.mark.slow  # `make test-fast` leaves it out: it grades many submissions or builds environments

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_TEXT = (ROOT / "reference" / "tiny_autograd.py").read_text(encoding="utf-8")
CALL_TIMEOUT, BUDGET = 0.5, 2.0  # small limits, so that hanging submissions cost little
LIMITS = Limits(call_seconds=CALL_TIMEOUT, budget_seconds=BUDGET, load_seconds=BUDGET)
# Mutants that a public test catches (grading them is quick).
BUGGY = ("add_assigns", "tanh_uses_input", "leaf_grads_reset_too", "zero_grad_does_nothing",
         "dual_mul_missing_cross_term", "backward_returns_reversed_order", "intermediate_grads_not_reset",
         "dual_tanh_uses_input")
BROKEN = {
    "syntax": ("syntax error", lambda: REFERENCE_TEXT.replace("def exp(self):", "def exp(self)", 1)),
    "empty": ("empty", lambda: ""),
    "binary": ("binary", lambda: b"\x00\x01\x02garbage\xff"),
    "exits": ("loaded", lambda: "import os\nos._exit(3)\n" + REFERENCE_TEXT),
}
HANGING = {
    "import_loop": "while True:\n    pass\n" + REFERENCE_TEXT,
    "backward_loop": REFERENCE_TEXT.replace("order = _topological_order(self)",
                                            "order = _topological_order(self)\n        while True:\n            pass", 1),
    "backward_sleep": "import time\n" + REFERENCE_TEXT.replace(
        "self.grad += out.grad\n", "self.grad += out.grad\n            time.sleep(3600)\n", 1),
}


def write_class(folder):
    """200 submissions; returns {student: kind} where kind is correct, a mutant id, broken:* or hanging:*."""
    folder.mkdir()
    kinds = {}

    def add(student, kind, content, layout="file"):
        header = f"# {student}\n"
        if layout == "file":
            path = folder / f"{student}.py"
            path.write_bytes(content if isinstance(content, bytes) else (header + content if content else "").encode())
        elif layout == "folder":
            (folder / student).mkdir()
            (folder / student / "tiny_autograd.py").write_text(header + content, encoding="utf-8")
            (folder / student / "README.md").write_text("my homework\n", encoding="utf-8")
        elif layout == "notebook":
            (folder / f"{student}.ipynb").write_text(notebook_text(content), encoding="utf-8")
        kinds[student] = kind

    number = iter(range(1, 1000))
    for _ in range(110):
        add(f"s{next(number):03d}", "correct", REFERENCE_TEXT)
    for _ in range(8):
        add(f"s{next(number):03d}", "correct", REFERENCE_TEXT, "folder")
    for _ in range(8):
        add(f"s{next(number):03d}", "correct", REFERENCE_TEXT, "notebook")
    for mutant in BUGGY:
        for _ in range(5):
            add(f"s{next(number):03d}", mutant, mutant_source(MUTANTS_BY_ID[mutant]))
    for name, (_, content) in BROKEN.items():
        for _ in range(6):
            add(f"s{next(number):03d}", f"broken:{name}", content())
    for _ in range(4):
        student = f"s{next(number):03d}"
        (folder / student).mkdir()
        (folder / student / "notes.txt").write_text("forgot the code\n")
        kinds[student] = "broken:no_candidate"
    for name, content in HANGING.items():
        for _ in range(2):
            add(f"s{next(number):03d}", f"hanging:{name}", content)
    (folder / ".DS_Store").write_bytes(b"\0")  # not a student
    assert len(kinds) == 200
    return kinds


def run_batch(kit, folder, out, jobs):
    """`python -m grader batch` with the grader of `kit` (a snapshot: its fingerprint stays put)."""
    command = [sys.executable, "-m", "grader", "batch", str(folder), "--out", str(out), "--jobs", str(jobs),
               "--suite", "public", "--lang", "en", "--call-timeout", str(CALL_TIMEOUT), "--budget", str(BUDGET)]
    started = time.monotonic()
    done = subprocess.run(command, cwd=kit, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr, time.monotonic() - started


def read_gradebook(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    work = tmp_path_factory.mktemp("class")
    kit = work / "kit"
    shutil.copytree(ROOT / "grader", kit / "grader", ignore=shutil.ignore_patterns("__pycache__", ".*"))
    shutil.copytree(ROOT / "reference", kit / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    kinds = write_class(work / "submissions")
    out = work / "grades.csv"
    log, seconds = run_batch(kit, work / "submissions", out, jobs=2)
    return work, kinds, out, log


@pytest.fixture(scope="module")
def alone(grade_submission, tmp_path_factory):
    """The result of grading one submission of each buggy kind on its own, in this process."""
    folder = tmp_path_factory.mktemp("alone")
    results = {}
    for mutant in BUGGY:
        path = folder / f"{mutant}.py"
        path.write_text(mutant_source(MUTANTS_BY_ID[mutant]), encoding="utf-8")
        results[mutant] = grade_submission(path, suite="public", limits=LIMITS)
    return results


def test_gradebook_has_one_row_per_student_with_total_and_categories(graded_class):
    work, kinds, out, log = graded_class
    with open(out, newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    assert header[:2] == ["student", "total"]
    assert header[2:6] == ["gradients", "accumulation", "zero_grad", "forward_mode"]
    rows = read_gradebook(out)
    assert set(rows) == set(kinds)
    for row in rows.values():
        categories = sum(float(row[c]) for c in header[2:6])
        assert abs(categories - float(row["total"])) < 0.011
        results = json.loads((batch.results_folder(out) / f"{row['student']}.json").read_text(encoding="utf-8"))
        assert results["score"] == float(row["total"])
    assert "200 submissions" in log and "graded 200" in log
    assert header[-1] == "problems"
    for row in rows.values():  # a lost point always has a problem; a full score none
        assert bool(row["problems"]) == (float(row["total"]) < float(row["max_total"])), row


def test_the_class_report_covers_the_whole_class(graded_class):
    from strict_html import parse  # noqa: E402

    work, kinds, out, log = graded_class
    parser = parse(class_report.report_path(out).read_text(encoding="utf-8"))
    assert not parser.problems and parser.stack == []
    bars = [int(attrs["data-count"]) for tag, attrs in parser.tags if tag == "rect" and attrs.get("class") == "bin"]
    assert sum(bars) == 200 and bars[-1] == sum(1 for kind in kinds.values() if kind == "correct")
    assert len([attrs for tag, attrs in parser.tags if tag == "tr" and "data-student" in attrs]) == 200
    assert f"class report {class_report.report_path(out)}" in log


def test_correct_submissions_get_full_marks_in_every_form(graded_class):
    work, kinds, out, log = graded_class
    rows = read_gradebook(out)
    for student, kind in kinds.items():
        if kind == "correct":
            row = rows[student]
            assert (row["status"], row["total"]) == ("graded", row["max_total"]), student
            assert float(row["max_total"]) == 100


def test_buggy_submissions_score_as_when_graded_alone(graded_class, alone):
    work, kinds, out, log = graded_class
    rows = read_gradebook(out)
    for student, kind in kinds.items():
        if kind in alone:
            expected = alone[kind]
            row = rows[student]
            assert float(row["total"]) == expected.score < expected.max_score, (student, kind)
            for category, (earned, _) in expected.categories().items():
                assert float(row[category]) == earned, (student, kind, category)


def test_broken_submissions_get_zero_and_the_reason(graded_class):
    work, kinds, out, log = graded_class
    rows = read_gradebook(out)
    reasons = {f"broken:{name}": reason for name, (reason, _) in BROKEN.items()}
    reasons["broken:no_candidate"] = "no .py or .ipynb"
    for student, kind in kinds.items():
        if kind.startswith("broken:"):
            row = rows[student]
            assert (row["status"], float(row["total"])) == ("problem", 0.0), student
            assert reasons[kind].lower() in row["note"].lower(), (kind, row["note"])


def test_hanging_submissions_lose_what_hangs_and_stop_nothing(graded_class):
    work, kinds, out, log = graded_class
    rows = read_gradebook(out)
    hanging = [student for student, kind in kinds.items() if kind.startswith("hanging:")]
    assert hanging
    for student in hanging:
        row = rows[student]
        assert row["status"] in ("graded", "problem") and float(row["total"]) < float(row["max_total"])
        results = json.loads((batch.results_folder(out) / f"{student}.json").read_text(encoding="utf-8"))
        text = results["output"] + " ".join(t["output"] for t in results["tests"])
        assert "timed out" in text or "time budget" in text, student
    assert not [row for row in rows.values() if row["status"] == "error"]


def test_a_rerun_grades_only_what_changed(graded_class, tmp_path):
    work, kinds, out, log = graded_class
    before = out.read_bytes()
    log, _ = run_batch(work / "kit", work / "submissions", out, jobs=2)
    assert "0 to grade" in log and out.read_bytes() == before
    students = sorted(kinds)
    changed = work / "submissions" / f"{students[0]}.py"
    changed.write_text(mutant_source(MUTANTS_BY_ID["add_assigns"]), encoding="utf-8")
    (work / "submissions" / "latecomer.py").write_text(REFERENCE_TEXT, encoding="utf-8")
    log, _ = run_batch(work / "kit", work / "submissions", out, jobs=2)
    assert "199 unchanged since the last run, 2 to grade" in log
    rows = read_gradebook(out)
    assert len(rows) == 201 and rows["latecomer"]["total"] == "100"
    assert float(rows[students[0]]["total"]) < 100


# ------------------------------------------------------------- processes


def fake_grade_job(job, options, oracle=None, begun=None):
    """Stands in for grading: hangs or kills its process on cue."""
    import os

    if job.student == "stuck":
        time.sleep(3600)
    if job.student == "crash":
        os._exit(7)
    return batch.Row(job.student, "graded", score=1.0, max_score=1.0)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork to inject a fake")
def test_a_stuck_or_dying_grading_process_costs_only_its_submission(monkeypatch, tmp_path):
    """The watchdog kills a grading process that outlives every limit; a process that
    dies is replaced; the other submissions are graded all the same."""
    monkeypatch.setattr(batch_jobs, "grade_job", fake_grade_job)
    monkeypatch.setattr(batch_jobs, "_context", lambda: multiprocessing.get_context("fork"))
    monkeypatch.setattr(batch_jobs, "WATCHDOG_MARGIN_SECONDS", 1.0)
    options = batch.Options(limits=Limits(budget_seconds=0.5, load_seconds=0.5), fingerprint="f")
    names = ["a", "stuck", "b", "crash", "c", "d"]
    jobs = [batch.Job(name, str(tmp_path / name), str(tmp_path / f"{name}.json"), "h") for name in names]
    rows = []
    batch.run_jobs(jobs, options, workers=2, on_row=rows.append)
    by_student = {row.student: row for row in rows}
    assert set(by_student) == set(names)
    assert by_student["stuck"].status == "error" and "longer than" in by_student["stuck"].note
    assert by_student["crash"].status == "error" and "died" in by_student["crash"].note
    assert all(by_student[name].status == "graded" for name in ("a", "b", "c", "d"))
    results = json.loads((tmp_path / "stuck.json").read_text(encoding="utf-8"))
    assert results["score"] == 0 and results["extra_data"]["batch"]["status"] == "error"


def test_students_are_the_direct_children_with_unique_names(tmp_path):
    for name in ("ann.py", "ann.ipynb", "bob.py", "cy"):
        path = tmp_path / name
        path.mkdir() if name == "cy" else path.write_text("x = 1\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / "__pycache__").mkdir()
    found = dict(batch.find_submissions(tmp_path))
    assert sorted(found) == ["ann.ipynb", "ann.py", "bob", "cy"]


def test_shards_split_the_class_and_cover_it(tmp_path):
    (tmp_path / "class").mkdir()
    for number in range(7):
        (tmp_path / "class" / f"s{number}.py").write_text("")
    seen = []
    for index in (1, 2, 3):
        rows = batch.run(tmp_path / "class", tmp_path / f"shard{index}.csv", jobs=1,
                         shard=batch.parse_shard(f"{index}/3"), stream=io.StringIO())
        seen += [row.student for row in rows]
    assert sorted(seen) == [f"s{number}" for number in range(7)]
    with pytest.raises(ValueError):
        batch.parse_shard("4/3")


# --------------------------------------------- hostile entries of a class


def _hostile_class(folder):
    """A class where most entries try to break the batch itself; returns the honest students."""
    folder.mkdir()
    (folder / "good").mkdir()
    (folder / "good" / "tiny_autograd.py").write_text(REFERENCE_TEXT, encoding="utf-8")
    for name, target in (("mem", "/proc/self/mem"), ("kmsg", "/proc/kmsg"), ("zero", "/dev/zero")):
        (folder / name).mkdir()
        (folder / name / "tiny_autograd.py").write_text(REFERENCE_TEXT, encoding="utf-8")
        (folder / name / "extra.bin").symlink_to(target)  # hashing must not read through it
    (folder / "mem-link.py").symlink_to("/proc/self/mem")
    os.mkfifo(folder / "fifo")
    os.mkfifo(folder / "pipe.py")
    (folder / "with-fifo").mkdir()
    (folder / "with-fifo" / "tiny_autograd.py").write_text(REFERENCE_TEXT, encoding="utf-8")
    os.mkfifo(folder / "with-fifo" / "queue")
    gbk = os.path.join(os.fsencode(folder), "张三".encode("gbk"))  # a zip from a Chinese Windows machine
    os.mkdir(gbk)
    with open(os.path.join(gbk, b"tiny_autograd.py"), "w", encoding="utf-8") as handle:
        handle.write(REFERENCE_TEXT)
    (folder / ("x" * 250 + ".py")).write_text(REFERENCE_TEXT, encoding="utf-8")
    huge = folder / "huge"
    huge.mkdir()
    (huge / "tiny_autograd.py").write_text(REFERENCE_TEXT, encoding="utf-8")
    for number in range(6000):
        (huge / f"f{number}.txt").write_bytes(b"")
    unreadable = folder / "locked"
    unreadable.mkdir()
    (unreadable / "tiny_autograd.py").write_text(REFERENCE_TEXT, encoding="utf-8")
    os.chmod(unreadable, 0)
    return ("good", "mem", "kmsg", "zero", "with-fifo", "张三", "x" * 250)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc and fifos")
def test_any_entry_of_a_class_folder_costs_at_most_its_own_row(tmp_path):
    honest = _hostile_class(tmp_path / "class")
    out = tmp_path / "grades.csv"
    stream = io.StringIO()
    try:
        rows = batch.run(tmp_path / "class", out, jobs=2, limits=LIMITS, stream=stream)
    finally:
        os.chmod(tmp_path / "class" / "locked", 0o700)
    book = read_gradebook(out)
    assert len(book) == len(rows) == len(honest) + 5  # + the link, two fifos, the huge and the locked folder
    for student in honest:
        assert book[student]["status"] == "graded" and book[student]["total"] == "100", (student, book[student])
    for student in ("mem-link", "fifo", "pipe", "huge"):
        assert book[student]["status"] == "problem" and book[student]["note"], book[student]
    assert "5000 entries" in book["huge"]["note"]
    assert book["locked"]["status"] in ("problem", "graded")  # root reads it; anyone else cannot
    assert "张三" in stream.getvalue()


def test_names_never_become_formulas_commands_or_shared_files(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    names = ["=40+60", "=HYPERLINK(\"evil\",\"x\")", "+1", "@SUM(A1)", "-2", "\x1b[2Jclear",
             "mallory\nmallory: 100", "a_b", "a b", "Alice", "alice"]
    for name in names:
        (folder / name).mkdir()
        (folder / name / "tiny_autograd.py").write_text("", encoding="utf-8")
    out = tmp_path / "grades.csv"
    stream = io.StringIO()
    batch.run(folder, out, jobs=1, limits=LIMITS, stream=stream)
    text = out.read_text(encoding="utf-8")
    cells = [row[0] for row in csv.reader(io.StringIO(text))][1:]
    assert len(cells) == len(names)
    assert not [cell for cell in cells if cell[:1] in "=+-@\t\r"], cells
    assert not any(ord(c) < 32 for c in text.replace("\n", ""))
    log = stream.getvalue()
    assert "\x1b" not in log
    assert not [line for line in log.splitlines() if line.startswith("mallory: 100")]
    files = sorted(p.name for p in batch.results_folder(out).iterdir())
    results = [name for name in files if name.endswith(".json")]
    reports = [name for name in files if name.endswith(".html")]
    assert len(results) == len(reports) == len(names) and len(files) == 2 * len(names), files
    assert len({name.casefold() for name in files}) == len(files)  # distinct on a case-blind disk too


def test_results_and_gradebook_are_readable_by_the_grader_only(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ann.py").write_text(REFERENCE_TEXT, encoding="utf-8")
    out = tmp_path / "grades.csv"
    batch.run(folder, out, jobs=1, limits=LIMITS, stream=io.StringIO())
    results = batch.results_folder(out)
    assert stat.S_IMODE(results.stat().st_mode) == 0o700
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert stat.S_IMODE(out.with_suffix(".html").stat().st_mode) == 0o600  # the class report
    assert {p.suffix for p in results.iterdir()} == {".json", ".html"}  # results and the student's report
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in results.iterdir())


def test_a_planted_results_file_is_not_taken_as_an_earlier_grade(tmp_path):
    """A file in the results folder that the grader did not write (a link, or one
    another user could have written) never becomes a student's grade."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ann.py").write_text("", encoding="utf-8")
    out = tmp_path / "grades.csv"
    [row] = batch.run(folder, out, jobs=1, limits=LIMITS, stream=io.StringIO())
    assert row.score == 0
    results = batch.results_folder(out) / "ann.json"
    forged = json.loads(results.read_text(encoding="utf-8"))
    forged["score"] = 100.0
    planted = tmp_path / "forged.json"
    planted.write_text(json.dumps(forged), encoding="utf-8")
    results.unlink()
    results.symlink_to(planted)
    [again] = batch.run(folder, out, jobs=1, limits=LIMITS, stream=io.StringIO())
    assert not again.reused and again.score == 0


def test_a_class_folder_others_may_read_is_flagged_where_workers_see_the_file_system(tmp_path, monkeypatch):
    import dataclasses

    from grader import sandbox

    folder = tmp_path / "class"
    folder.mkdir()
    os.chmod(folder, 0o755)
    seeing = dataclasses.replace(sandbox.detect("process"), level="unprivileged", confined=())
    monkeypatch.setattr(sandbox, "detect", lambda *args: seeing)
    assert "chmod -R go-rwx" in batch.readable_class_warning(folder)
    os.chmod(folder, 0o700)
    assert batch.readable_class_warning(folder) == ""
    confined = dataclasses.replace(seeing, confined=("landlock files",))
    monkeypatch.setattr(sandbox, "detect", lambda *args: confined)
    os.chmod(folder, 0o755)
    assert batch.readable_class_warning(folder) == ""


def test_an_entry_that_could_not_be_graded_still_has_a_valid_results_file(tmp_path):
    import jsonschema

    folder = tmp_path / "class"
    folder.mkdir()
    os.mkfifo(folder / "pipe.py")
    out = tmp_path / "grades.csv"
    [row] = batch.run(folder, out, jobs=1, limits=LIMITS, stream=io.StringIO())
    data = json.loads((batch.results_folder(out) / "pipe.json").read_text(encoding="utf-8"))
    schema = json.loads((ROOT / "grader" / "schemas" / "gradescope.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schema)
    assert row.status == "problem" and row.max_score == data["extra_data"]["max_score"] > 0
    assert "not a regular file" in data["tests"][0]["output"]


def test_a_submission_begun_ahead_is_graded_as_when_graded_at_once(tmp_path):
    """A grading process launches the next submission's worker before it grades the
    current one (grading.begin): the result is the same, and a begun submission that
    is never graded leaves nothing behind."""
    from grader import results
    from grader.grading import begin
    from grader.replay import grade_by_replay, plan_for

    path = tmp_path / "tiny_autograd.py"
    path.write_text(mutant_source(MUTANTS_BY_ID["add_assigns"]), encoding="utf-8")
    plan = plan_for("public")
    begun = begin(path, LIMITS)
    time.sleep(0.2)  # the worker loads meanwhile
    ahead = results.gradescope(grade_by_replay(path, "public", plan, limits=LIMITS, begun=begun), "en")
    at_once = results.gradescope(grade_by_replay(path, "public", plan, limits=LIMITS), "en")
    for document in (ahead, at_once):
        document.pop("execution_time", None)
    assert ahead == at_once and ahead["score"] < ahead["extra_data"]["max_score"]
    assert begun.workdir is None  # released by the grading

    unused = begin(path, LIMITS)
    folder, worker = unused.workdir, unused.worker
    unused.discard()
    assert not folder.exists() and worker.process is None
