"""Expected outcomes without the reference: record them once, answer from the recording.

The student bundle (`make dist`) ships the public suite but not the reference
solution. So at build time the public suite runs on the reference through a
`RecordingOracle`, which stores every program's expected outcome keyed by the
program's canonical JSON; the bundle ships that file and its grader answers
from it with a `RecordedOracle`.

Why the recording covers what a student's run asks for: every test checks
fixed programs (generated tests run over frozen examples, grader/generated.py,
and stop at their first failure), so a run asks for exactly the programs the
reference run asked for, or a prefix of them. A program missing from the
recording means it no longer matches the suite (a test edited after the
build): the test fails with a finding that says the expectation is unavailable
here. It never passes on a program nobody checked, and nothing crashes.
"""

import json
from pathlib import Path

from grader.feedback.finding import Finding
from grader.engine import REFERENCE_FILE, GradingFailure, ReferenceOracle

FORMAT = 1
EXPECTED_DIR = Path(__file__).resolve().parent / "expected"


def program_key(steps):
    """The canonical JSON text of a graph program: the recording's key."""
    return json.dumps(steps, separators=(",", ":"), ensure_ascii=True)


class RecordingOracle:
    """Answers like `inner` (the reference) and remembers every answer it gave."""

    def __init__(self, inner=None):
        self.inner = inner or ReferenceOracle()
        self.programs = {}

    def expected(self, steps):
        outcome = self.inner.expected(steps)
        self.programs[program_key(steps)] = outcome
        return outcome

    def recording(self, suite):
        return {
            "format": FORMAT,
            "suite": suite,
            "count": len(self.programs),
            "programs": dict(sorted(self.programs.items())),
        }

    def save(self, path, suite):
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.recording(suite), indent=0, sort_keys=True, ensure_ascii=True)
        path.write_text(text + "\n", encoding="utf-8")
        return path


class RecordedOracle:
    """Expected outcomes read from recordings (see the module docstring)."""

    def __init__(self, paths=None):
        paths = sorted(EXPECTED_DIR.glob("*.json")) if paths is None else [Path(p) for p in paths]
        if not paths:
            raise FileNotFoundError(f"no recorded expectations in {EXPECTED_DIR}")
        self.table = {}
        self.suites = []
        for path in paths:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            if data.get("format") != FORMAT or not isinstance(data.get("programs"), dict):
                raise ValueError(f"{path}: not a recording of format {FORMAT}")
            self.table.update(data["programs"])
            self.suites.append(data.get("suite"))
        self.misses = 0

    def expected(self, steps):
        outcome = self.table.get(program_key(steps))
        if outcome is not None:
            return outcome
        self.misses += 1
        raise GradingFailure(unavailable_finding())


def unavailable_finding():
    return Finding(
        "The expected result of this test program is not in this copy of the grader, so it cannot be "
        "checked here (was the public suite changed after the bundle was built?). Tell your instructor; "
        "the official grading uses the full grader.",
        "这份评分器里没有这个测试程序的期望结果，所以这里无法检查它（打包之后公开测试被改过？）。"
        "请告诉老师；正式评分使用完整的评分器。",
        "unavailable",
    )


def recordings_present(directory=EXPECTED_DIR):
    return Path(directory).is_dir() and any(Path(directory).glob("*.json"))


def default_oracle():
    """The oracle a grading run uses when none is given.

    A grader that ships recordings (the student bundle) always answers from
    them, even if a file named like the reference appears next to it: a student
    must not be able to supply their own "reference". Otherwise (the kit, the
    Gradescope bundle) the reference solution is the oracle.
    """
    if recordings_present():
        return RecordedOracle()
    if REFERENCE_FILE.is_file():
        return ReferenceOracle()
    raise FileNotFoundError(
        f"no reference solution ({REFERENCE_FILE}) and no recorded expectations ({EXPECTED_DIR}): "
        "this grader cannot know the expected results"
    )
