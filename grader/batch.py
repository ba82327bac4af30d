"""Grade a whole class: `python -m grader batch DIR --out grades.csv [--jobs N]`.

Every direct child of DIR (a file or a folder) is one student's submission. Each
is graded exactly like `python -m grader grade` would grade it (by default with
the hidden tests: `--suite all`); the results go to one JSON file per student
(Gradescope format), with the student's HTML report beside it, in a folder next
to the CSV. The CSV gradebook has one row per student: total, each category and
the ids of the student's problems (grader/problems.py); the class report
(grader/class_report.py) goes next to it, and the run says what changed since
the last gradebook (grader/gradebook_changes.py).

Parallelism: N grading processes (grader/batch_jobs.py), each grading many
submissions one after the other, each beginning the next submission (its own
fresh sandboxed worker loading) while it grades the current one. By default (`--engine
replay`) the suite runs once, in the parent, to record the graph programs each
test checks; each submission then replays them on its worker without pytest
(grader/replay.py, same results). `--engine pytest` runs the suite with pytest
in-process for every submission. The student code itself still runs only in
the grader's worker processes, with the usual limits.

Robustness: the grader's own limits stop hanging and crashing submissions; a
watchdog also kills a grading process that outlives every limit and starts a
new one, and an exception inside the grader costs only that submission (its
row says "error" and a re-run tries it again). The gradebook's CSV and the
results files' names are grader/gradebook.py's.

Re-runs: each results file records a hash of the submission's content and a
fingerprint of the grader (its files, the suite, the limits, the language). A
re-run reuses results whose hashes still match, so it only grades what changed.
This also merges shards (`--shard K/N`): grade the shards anywhere, copy their
results folders together, and a run without `--shard` writes the full gradebook
without grading anything again.
"""

import hashlib
import json
import os
import stat
import sys
import time
from dataclasses import asdict
from pathlib import Path

from grader import class_report, files, gradebook_changes
from grader.batch_jobs import Job, Options, Row, error_results, grade_job, row_from_results, run_jobs
from grader.gradebook import cell as _cell, results_folder, results_names, write_gradebook
from grader.paths import GRADER_DIR, KIT_ROOT, REFERENCE_FILE
from grader.submission import SKIPPED_DIRS, walk_submission
from grader.text import file_name, one_line
from grader.worker_client import Limits

__all__ = ["Job", "Options", "Row", "error_results", "grade_job", "run_jobs", "results_folder", "results_names",
           "write_gradebook", "find_submissions", "content_hash", "grader_fingerprint", "previous_row", "run",
           "parse_shard", "readable_class_warning", "add_arguments", "main"]

# The grader's files that decide a result (caches such as .hypothesis/ do not).
FINGERPRINTED = (".py", ".toml", ".json", ".ini", ".cfg", ".txt")
MAX_HASHED_BYTES = 64 * 1024 * 1024  # of one file: a submission is at most 1 MiB


# ------------------------------------------------------------------ planning


def find_submissions(folder, exclude=()):
    """[(student, path)] for each direct child of `folder`, sorted by name.

    Hidden entries (.git, .DS_Store) and caches are not students. A file's
    student name is its stem unless another child would get the same name.
    Names are shown as a person reads them (grader/text.py: file_name); the
    path keeps the bytes on disk."""
    folder = Path(folder)
    excluded = {os.path.realpath(p) for p in exclude}
    children = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.startswith((".", "~")) or entry.name in SKIPPED_DIRS:
                continue
            if os.path.realpath(entry.path) in excluded:
                continue
            children.append(entry)
    children.sort(key=lambda entry: os.fsencode(entry.name))

    def stem(entry):
        name = file_name(entry.name)
        is_dir = _is_dir(entry)
        return name if is_dir or "." not in name.lstrip(".") else name.rsplit(".", 1)[0]

    stems = {}
    for entry in children:
        stems[stem(entry)] = stems.get(stem(entry), 0) + 1
    found, taken = [], {}
    for entry in children:
        name = stem(entry) if stems[stem(entry)] == 1 else file_name(entry.name)
        taken[name] = taken.get(name, 0) + 1
        if taken[name] > 1:  # names whose bytes differ but read the same (invalid bytes, say)
            name += "~" + hashlib.sha256(os.fsencode(entry.name)).hexdigest()[:6]
        found.append((name, Path(entry.path)))
    return found


def _is_dir(entry):
    try:
        return entry.is_dir()  # a link to a folder counts as the folder, as for `grade`
    except OSError:
        return False


def content_hash(path):
    """sha256 of what a student handed in: the file's bytes, or every entry of
    the folder (relative path and bytes; a link's target; a special file's
    kind) outside caches and VCS folders. Never blocks, never raises: whatever
    cannot be read is hashed as what it is (see `_digest_file`)."""
    path = Path(path)
    digest = hashlib.sha256()
    try:
        is_dir = path.is_dir()
    except OSError:
        is_dir = False
    if not is_dir:
        digest.update(b"file\0" + _digest_file(path))
        return digest.hexdigest()
    digest.update(b"folder\0")
    entries, complete = walk_submission(path)
    for relative, kind in entries:
        digest.update(os.fsencode(relative) + b"\0" + kind.encode() + b"\0")
        if kind == "file":
            digest.update(_digest_file(path / relative))
        elif kind == "link":
            try:
                digest.update(os.fsencode(os.readlink(path / relative)))
            except OSError:
                pass
    if not complete:
        digest.update(b"\0truncated")
    return digest.hexdigest()


def _digest_file(path, limit=MAX_HASHED_BYTES):
    """The sha256 of a regular file's first `limit` bytes; for anything else (a
    pipe, a device, /proc) a marker of what it is: opened without blocking and
    read only if it is a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        return b"unreadable:" + str(error.errno).encode()
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b"special:" + str(stat.S_IFMT(info.st_mode)).encode()
        digest = hashlib.sha256()
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            digest.update(chunk)
            left -= len(chunk)
        return digest.digest()
    except OSError as error:
        return b"unreadable:" + str(error.errno).encode()
    finally:
        os.close(fd)


def grader_fingerprint(suite, lang, limits):
    """What else decides a result: every file of the grader, the reference or
    recordings it answers from, the suite, the language and the limits."""
    digest = hashlib.sha256()
    digest.update(json.dumps({"suite": suite, "lang": lang, "limits": asdict(limits)}, sort_keys=True).encode())
    files = [
        p for p in sorted(GRADER_DIR.rglob("*"))
        if p.is_file() and p.suffix in FINGERPRINTED
        and not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(GRADER_DIR).parts)
    ]
    if REFERENCE_FILE.is_file():
        files.append(REFERENCE_FILE)
    for item in files:
        digest.update(str(item.relative_to(KIT_ROOT).as_posix()).encode() + b"\0")
        digest.update(hashlib.sha256(item.read_bytes()).digest())
    return digest.hexdigest()


def previous_row(job, fingerprint):
    """The row of an earlier run whose results still hold, else None."""
    text = files.read_own(job.results_file)  # never through a link, never someone else's file
    try:
        data = json.loads(text)
        batch = data["extra_data"]["batch"]
    except (ValueError, KeyError, TypeError):
        return None
    if batch.get("content_sha256") != job.content_hash or batch.get("grader_fingerprint") != fingerprint:
        return None
    if batch.get("status") not in ("graded", "problem"):
        return None  # an error is always tried again
    return row_from_results(job.student, data, reused=True)


def parse_shard(text):
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard wants K/N, like 2/4, not {text!r}") from None
    if not 1 <= index <= count:
        raise ValueError(f"--shard {text}: K must be between 1 and N")
    return index, count


def run(folder, out_csv, jobs=1, suite="all", lang="en", limits=None, shard=None, stream=None, engine="replay"):
    """Grade the class in `folder`; returns the rows of the gradebook it wrote."""
    stream = stream or sys.stderr
    folder, out_csv = Path(folder), Path(out_csv)
    if not folder.is_dir():
        raise NotADirectoryError(f"{folder} is not a folder of submissions")
    limits = limits or Limits()
    out_dir = files.ensure_folder(results_folder(out_csv))
    os.chmod(out_dir, files.FOLDER_MODE)  # classmates' results are nobody else's business
    options = Options(suite=suite, lang=lang, limits=limits, fingerprint=grader_fingerprint(suite, lang, limits))
    warning = readable_class_warning(folder)
    if warning:
        print(warning, file=stream)
    before = gradebook_changes.last_gradebook(out_csv)
    students = find_submissions(folder, exclude=(out_csv, out_dir, class_report.report_path(out_csv)))
    if shard:
        index, count = shard
        students = [s for number, s in enumerate(students) if number % count == index - 1]
    started = time.monotonic()
    rows, todo = [], []
    names = results_names([student for student, _ in students])
    for student, path in students:
        job = Job(student, str(path), str(out_dir / f"{names[student]}.json"), content_hash(path))
        previous = previous_row(job, options.fingerprint)
        if previous is not None:
            rows.append(previous)
        else:
            todo.append(job)
    if todo and engine == "replay":
        options.plan = _record_plan(suite, stream)
    total = len(students)
    print(f"{total} submissions in {folder}: {len(rows)} unchanged since the last run, "
          f"{len(todo)} to grade with {jobs} process{'es' if jobs != 1 else ''} "
          f"(suite {suite}, {'replay' if options.plan else 'pytest'})", file=stream)

    def progress(row):
        rows.append(row)
        mark = {"graded": "", "problem": "  [problem]", "error": "  [ERROR]"}.get(row.status, "")
        done = sum(1 for r in rows if not r.reused)
        print(f"[{done:>{len(str(len(todo)))}}/{len(todo)}] {one_line(row.student, 80)}: "
              f"{row.score:g}/{row.max_score:g}  ({row.seconds:.2f} s){mark}", file=stream, flush=True)

    reasons = {job.student: gradebook_changes.regrade_reason(job.results_file, job.content_hash, options.fingerprint)
               for job in todo}
    run_jobs(todo, options, jobs, progress)
    write_gradebook(out_csv, rows)
    changes = gradebook_changes.compare(before, rows, reasons, _cell)
    report = _write_class_report(out_csv, rows, names, out_dir, changes, options, stream)
    elapsed = time.monotonic() - started
    errors = sum(1 for r in rows if r.status == "error")
    rate = len(todo) / elapsed if elapsed > 0 and todo else 0.0
    if changes.removed:
        print("removed since the last gradebook: " + ", ".join(one_line(n, 80) for n in changes.removed), file=stream)
    print(f"graded {len(todo)}, reused {total - len(todo)}, errors {errors} in {elapsed:.1f} s"
          + (f" ({rate:.1f} submissions/s)" if todo else "") + f"; {changes.summary()}; gradebook {out_csv}"
          + (f", class report {report}" if report else "") + f", results in {out_dir}", file=stream)
    return rows


def _write_class_report(out_csv, rows, names, out_dir, changes, options, stream):
    """grades.html (grader/class_report.py); its path, or None if it could not be written."""
    try:
        return class_report.write(out_csv, rows, names, out_dir, changes, options.suite, options.lang)
    except Exception as error:  # the gradebook is written: the report never costs it
        print(f"could not write the class report: {type(error).__name__}: {one_line(str(error))}", file=stream)
        return None


def readable_class_warning(folder):
    """Where workers are not kept out of the file system (no namespaces, no Landlock),
    a class folder that other users may read lets one student's code read another's."""
    from grader import sandbox

    try:
        isolation = sandbox.detect()
        mode = os.stat(folder).st_mode
    except (OSError, sandbox.IsolationUnavailable):
        return ""
    if isolation.level == "bubblewrap" or "landlock files" in isolation.confined or not mode & 0o005:
        return ""
    return (f"warning: {one_line(str(folder))} is readable by other users, and workers here ({isolation.level} "
            "level, no Landlock) see the file system: one student's code could read another's submission. "
            f"Make it private first: chmod -R go-rwx {one_line(str(folder))}")


def _record_plan(suite, stream):
    """The suite's replay plan, or None (grade with pytest) if it cannot be recorded."""
    try:
        from grader.replay import plan_for

        return plan_for(suite)
    except Exception as error:  # the suite cannot be replayed: pytest still grades it
        print(f"cannot replay the {suite} suite ({type(error).__name__}: {error}); "
              "grading with pytest", file=stream)
        return None


def add_arguments(parser):
    parser.add_argument("folder", help="a folder with one file or folder per student")
    parser.add_argument("--out", default="grades.csv", help="the CSV gradebook (default: %(default)s); the class "
                        "report goes next to it (same name, .html), each student's results to a folder beside it")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="grading processes (default: %(default)s)")
    parser.add_argument("--shard", default=None, help="grade only shard K of N (K/N), e.g. one job of a CI matrix")
    parser.add_argument("--call-timeout", type=float, default=None, help="seconds one test program may take")
    parser.add_argument("--budget", type=float, default=None, help="seconds one submission may use in total")
    parser.add_argument("--engine", choices=("replay", "pytest"), default="replay",
                        help="replay the suite's recorded programs (fast, the default) or run pytest per submission")


def main(args, lang):
    limits = Limits()
    if args.call_timeout is not None:
        limits.call_seconds = args.call_timeout
    if args.budget is not None:
        limits.budget_seconds = args.budget
        limits.load_seconds = min(limits.load_seconds, args.budget)
    shard = parse_shard(args.shard) if args.shard else None
    rows = run(args.folder, args.out, jobs=max(1, args.jobs), suite=args.suite, lang=lang, limits=limits, shard=shard,
               engine=args.engine)
    return 0 if rows is not None else 1
