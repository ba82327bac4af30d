"""The oracle without the reference: record its answers once, answer from the recording.

The student bundle (`make dist`) ships the public suite but neither the
reference solution nor the simulated exercise (grader/feedback/simulate.py:
the exercise's rules in other words). So at build time the public suite runs on
the reference through a `RecordingOracle`, which stores, for every program a
test checks, keyed by the program's canonical JSON, the three answers of an
oracle (grader/oracle.py): the expected outcome, the reference's flow (what
each node sent: the feedback names culprits with it) and the predictions of
the catalog's misconceptions (the feedback's hints). The bundle ships that file
and its grader answers from it with a `RecordedOracle`.

Why the recording covers what a student's run asks for: every test checks
fixed programs (generated tests run over frozen examples, grader/generated.py,
and stop at their first failure), so a run asks for exactly the programs the
reference run asked for, or a prefix of them. A program missing from the
recording means it no longer matches the suite (a test edited after the
build): the test fails with a finding that says the expectation is unavailable
here. It never passes on a program nobody checked, and nothing crashes.
What the bundle cannot do is run new programs on the reference: it shows no
smallest failing program and gathers no probe evidence.
"""

import json
from pathlib import Path
from typing import Iterator, Optional

from grader.engine import GradingFailure
from grader.feedback.finding import Finding
from grader.oracle import Flow, Prediction
from grader.oracle_reference import ReferenceOracle
from grader.paths import EXPECTED_DIR, REFERENCE_FILE

FORMAT = 2


def program_key(steps):
    """The canonical JSON text of a graph program: the recording's key."""
    return json.dumps(steps, separators=(",", ":"), ensure_ascii=True)


class RecordingOracle:
    """Answers like `inner` (the reference) and remembers every answer, with its
    flow and predictions, for each program it was asked about."""

    def __init__(self, inner=None):
        self.inner = inner or ReferenceOracle()
        self.programs = {}

    def expected(self, steps):
        outcome = self.inner.expected(steps)
        key = program_key(steps)
        if key not in self.programs:
            self.programs[key] = self._entry(steps, outcome)
        return outcome

    def _entry(self, steps, outcome):
        flow = self.inner.flow(steps) if any(step[0] == "backward" for step in steps) else None
        predictions = [
            {"hint": p.hint, "culprit": p.culprit, "op": p.op, "model": p.key, "outcome": p.outcome}
            for p in self.inner.predictions(steps)
            if p.outcome["ok"] != outcome["ok"] or p.outcome["snapshots"] != outcome["snapshots"]
        ]  # a model that gives the reference's numbers never explains a difference
        return {"outcome": outcome, "flow": flow.as_json() if flow else None, "predictions": predictions}

    def flow(self, steps):
        return self.inner.flow(steps)

    def predictions(self, steps, hints=None):
        return self.inner.predictions(steps, hints)

    def runner(self):
        return self.inner.runner()

    def begin_test(self):
        pass

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
    """The oracle's answers read from recordings (see the module docstring)."""

    def __init__(self, paths=None):
        paths = sorted(EXPECTED_DIR.glob("*.json")) if paths is None else [Path(p) for p in paths]
        if not paths:
            raise FileNotFoundError(f"no recorded expectations in {EXPECTED_DIR}")
        self.table = {}
        self.suites = []
        for path in paths:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            if data.get("format") != FORMAT or not isinstance(data.get("programs"), dict):
                raise ValueError(f"{path}: not a recording of format {FORMAT} (rebuild it with `make dist`)")
            self.table.update(data["programs"])
            self.suites.append(data.get("suite"))
        self.misses = 0

    def expected(self, steps):
        entry = self.table.get(program_key(steps))
        if entry is not None:
            return entry["outcome"]
        self.misses += 1
        raise GradingFailure(unavailable_finding())

    def flow(self, steps) -> Optional[Flow]:
        entry = self.table.get(program_key(steps))
        return Flow.from_json(entry["flow"]) if entry and entry.get("flow") else None

    def predictions(self, steps, hints=None) -> Iterator[Prediction]:
        entry = self.table.get(program_key(steps)) or {}
        for p in entry.get("predictions", ()):
            if hints is not None and p["hint"] not in hints:
                continue
            yield Prediction(p["hint"], p["culprit"], p["op"], p["model"], p["outcome"])

    def runner(self):
        return None  # no reference here: nothing new can be run on it

    def begin_test(self):
        pass


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
