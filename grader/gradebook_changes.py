"""What a batch run changed since the last gradebook: new, regraded, unchanged, removed.

The last gradebook is the CSV the run is about to replace (a shard compares
with its own). A student is
- new: not in the last gradebook (graded now, or taken from the results folder),
- regraded: in it and graded again, with the reason: the submission changed,
  the grader changed (its files, the suite, the language or the limits), an
  earlier error was tried again, or the earlier results file was missing;
- unchanged: in it, and the earlier results were reused;
- removed: in it, but no longer in the class folder.
The gradebook stores names as its cells (see batch._cell), so the comparison
is between cells: `cell` turns a student's name into one.
"""

import csv
import io
import json
from dataclasses import dataclass, field

from grader import files
from grader.i18n import bilingual
from grader.text import one_line

REASONS = {  # why a student was graded again
    "submission": bilingual("submission changed", "提交有改动"),
    "grader": bilingual("grader or settings changed", "评分器或设置有改动"),
    "error": bilingual("an earlier error tried again", "上次出错，重新评分"),
    "missing": bilingual("earlier results missing", "上次的结果文件不见了"),
}


@dataclass
class Changes:
    first: bool = True  # there was no earlier gradebook
    new: list = field(default_factory=list)
    regraded: dict = field(default_factory=dict)  # student -> a key of REASONS
    unchanged: list = field(default_factory=list)
    removed: list = field(default_factory=list)  # gradebook cells, as the last gradebook had them

    def status(self, student):
        if student in self.regraded:
            return "regraded"
        return "new" if student in self.new else "unchanged"

    def summary(self):
        """One clause for the batch's summary line on stderr."""
        if self.first:
            return f"first gradebook here: {len(self.new)} new"
        reasons = {}
        for reason in self.regraded.values():
            reasons[reason] = reasons.get(reason, 0) + 1
        why = ", ".join(f"{count} {REASONS[key]['en']}" for key, count in sorted(reasons.items()))
        return (f"since the last gradebook: {len(self.new)} new, {len(self.regraded)} regraded"
                + (f" ({why})" if why else "") + f", {len(self.unchanged)} unchanged, {len(self.removed)} removed")


def last_gradebook(out_csv):
    """The student cells of the gradebook at `out_csv`, or None when there is none (or
    it is not the grader's own file: never read through a link or another user's file)."""
    text = files.read_own(out_csv)
    if text is None:
        return None
    try:
        return {row["student"] for row in csv.DictReader(io.StringIO(text)) if row.get("student") is not None}
    except (csv.Error, KeyError):
        return None


def regrade_reason(results_file, content_hash, fingerprint):
    """Why a student whose earlier results could not be reused is graded again."""
    try:
        batch = json.loads(files.read_own(results_file) or "")["extra_data"]["batch"]
        if not isinstance(batch, dict):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        return "missing"
    if batch.get("content_sha256") != content_hash:
        return "submission"
    if batch.get("grader_fingerprint") != fingerprint:
        return "grader"
    return "error"


def compare(before, rows, reasons, cell):
    """Changes between the last gradebook's cells `before` (or None) and this run's rows;
    `reasons` maps each student graded in this run to a key of REASONS."""
    changes = Changes(first=before is None)
    before = before or set()
    now = set()
    for row in sorted(rows, key=lambda r: r.student):
        name = cell(row.student)
        now.add(name)
        if name not in before:
            changes.new.append(row.student)
        elif row.reused:
            changes.unchanged.append(row.student)
        else:
            changes.regraded[row.student] = reasons.get(row.student, "missing")
    changes.removed = sorted(one_line(name, 500) for name in before - now)
    return changes
