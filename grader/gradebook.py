"""The CSV gradebook of a batch and the names of the students' results files."""

import csv
import hashlib
import io
from pathlib import Path

from grader import files
from grader.exercise import categories
from grader.text import one_line

# Cells that a spreadsheet would read as a formula (or a command) when they start so.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def write_gradebook(path, rows):
    """CSV: student, total, each category, then max_total, status, a note and the problems' ids."""
    present = [c for c in categories() if any(c in row.categories for row in rows)]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", "total", *present, "max_total", "status", "note", "problems"])
    for row in sorted(rows, key=lambda r: r.student):
        writer.writerow([
            cell(row.student),
            _number(row.score),
            *(_number(row.categories.get(c, 0.0)) for c in present),
            _number(row.max_score),
            cell(row.status),
            cell(row.note.splitlines()[0] if row.note else ""),
            cell(" ".join(row.problems)),
        ])
    files.write_private(path, buffer.getvalue())


def _number(value):
    return f"{value:g}"


def cell(text):
    """Text for a CSV cell that a spreadsheet shows as text: on one line, without
    control characters, and never read as a formula (a leading ' says "text")."""
    text = one_line(text, 500)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def results_folder(out_csv):
    out_csv = Path(out_csv)
    return out_csv.with_name(out_csv.stem + "-results")


def results_names(students):
    """{student: results file name}: one file per student, never shared.

    A plain name (letters, digits, `-_.@+`, at most 100 characters) is kept as
    it is unless another student's name is the same but for case (a folder on
    macOS or Windows would hold both in one file); every other name is made safe
    and gets a hash of the student's exact name."""
    def plain(name):
        return len(name) <= 100 and all(ch.isascii() and (ch.isalnum() or ch in "-_.@+") for ch in name) \
            and not name.startswith(".")

    folded = {}
    for student in students:
        folded.setdefault(student.casefold(), []).append(student)
    names = {}
    for student in students:
        if plain(student) and len(folded[student.casefold()]) == 1:
            names[student] = student
            continue
        safe = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_.@+") else "_" for ch in student)
        digest = hashlib.sha256(student.encode("utf-8", errors="surrogatepass")).hexdigest()[:12]
        names[student] = f"{safe.lstrip('.')[:80] or '_'}-{digest}"
    taken = set()
    for student in sorted(names):  # a plain name may still equal another's safe one
        while names[student].casefold() in taken:
            names[student] += "-" + hashlib.sha256(names[student].encode()).hexdigest()[:4]
        taken.add(names[student].casefold())
    return names
