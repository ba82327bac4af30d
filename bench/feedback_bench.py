"""Target 3: one student's feedback, against plain pytest without isolation.

    .venv/bin/python -m bench.feedback_bench [--rounds 7] [--suite hidden]

Candidates, each a fresh process, interleaved round by round:

    pytest    `python -m pytest grader/suites/hidden -c grader/suites/pytest.ini
              --rootdir grader/suites -q -p bench.inprocess_plugin
              --inprocess-submission SUB`: the same suite files and fixture API,
              the submission imported into pytest itself (no worker, no sandbox)
    grader    `python -m grader grade SUB --suite hidden --out TMP/results.json`
              (what `make grade` runs, with the terminal summary)
    make      `make grade SUBMISSION=SUB SUITE=hidden OUT=... HTML=...`

on two submissions: the reference (every test passes) and a mutant with one
realistic mistake (failing tests, so the feedback path runs too). Figures:
median wall seconds, median CPU seconds of the process tree, and the ratio
grader/pytest per round. Then one timed run of each with the phases of
bench/feedback_phases.py: where the time goes.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import KIT_ROOT, interleave, machine, median, save, say

PY = str(KIT_ROOT / ".venv" / "bin" / "python")
MUTANT = "add_assigns"  # `=` for `+=` in add: fails the accumulation tests


def environment():
    """A normal student environment: byte code is cached (a stale .pyc would
    otherwise be recompiled on every run)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def submissions(folder):
    sys.path.insert(0, str(KIT_ROOT / "tests"))
    from mutants import MUTANTS, mutant_source

    mutant = next(m for m in MUTANTS if m.id == MUTANT)
    buggy = Path(folder) / "mutant" / "tiny_autograd.py"
    buggy.parent.mkdir()
    buggy.write_text(mutant_source(mutant), encoding="utf-8")
    return {"reference": str(KIT_ROOT / "reference" / "tiny_autograd.py"), "mutant": str(buggy)}


def commands(submission, suite, folder):
    return {
        "pytest": [PY, "-m", "pytest", f"grader/suites/{suite}", "-c", "grader/suites/pytest.ini",
                   "--rootdir", "grader/suites", "-q", "-p", "bench.inprocess_plugin",
                   "--inprocess-submission", submission],
        "grader": [PY, "-m", "grader", "grade", submission, "--suite", suite, "--out", f"{folder}/results.json"],
        "make": ["make", "-s", "grade", f"SUBMISSION={submission}", f"SUITE={suite}",
                 f"OUT={folder}/make-results.json", f"HTML={folder}/report.html"],
    }


def run(command):
    """(wall seconds, CPU seconds of the whole process tree)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=KIT_ROOT, env=environment(), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{command} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu}


def phases(mode, submission, suite, folder):
    out = Path(folder) / f"phases-{mode}.json"
    spawned = time.monotonic()
    subprocess.run([PY, "-m", "bench.feedback_phases", mode, submission, suite, str(out), repr(spawned)],
                   cwd=KIT_ROOT, env=environment(), stdout=subprocess.DEVNULL, check=False)
    ended = time.monotonic()
    data = json.loads(out.read_text(encoding="utf-8"))
    marks = data["marks"]

    def spent(label, before=None, after=None):
        """Seconds and calls of one phase, optionally only the calls begun in a window."""
        calls = [seconds for at, seconds in data["phases"].get(label, ())
                 if (before is None or at < before) and (after is None or at >= after)]
        return sum(calls), len(calls)

    rows = [
        ("interpreter start-up", marks["started"] - spawned),
        ("import pytest", marks["pytest_imported"] - marks["started"]),
        ("import the grader", marks["imported"] - marks["pytest_imported"]),
    ]
    if mode == "grader":
        set_up = [(label, spent(label, before=marks["pytest_main"])[0])
                  for label in ("isolation detection", "reading the submission", "worker start")]
        rows += set_up
        rows.append(("other set-up (temporary folder, oracle)",
                     marks["pytest_main"] - marks["imported"] - sum(seconds for _, seconds in set_up)))
    rows += [
        ("pytest start-up (config, plugins, conftest: Hypothesis)", marks["collection_start"] - marks["pytest_main"]),
        ("pytest collection", marks["collection_end"] - marks["collection_start"]),
    ]
    loop = marks["tests_end"] - marks["tests_start"]
    inner = []
    for label in ("programs on the worker", "programs on the reference", "comparison",
                  "worker start", "feedback: probes", "feedback: shrinking"):
        seconds, calls = spent(label, after=marks["tests_start"])
        if calls:
            name = "feedback worker start" if label == "worker start" else label
            inner.append((f"tests: {name} ({calls} calls)", seconds))
    rows += inner
    rows.append(("tests: pytest, Hypothesis, test bodies", loop - sum(seconds for _, seconds in inner)))
    rows.append(("reports (results, summary) and pytest's end", marks["done"] - marks["tests_end"]))
    rows.append(("exit (atexit, interpreter teardown)", ended - marks["done"]))
    return {"total": ended - spawned, "rows": [[name, round(seconds, 4)] for name, seconds in rows]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--suite", default="hidden")
    parser.add_argument("--candidates", default="pytest,grader,make")
    args = parser.parse_args(argv)
    record = {"machine": machine(), "rounds": args.rounds, "suite": args.suite, "submissions": {}}
    with tempfile.TemporaryDirectory(prefix="bench-feedback-") as folder:
        for name, submission in submissions(folder).items():
            cmds = {k: v for k, v in commands(submission, args.suite, folder).items()
                    if k in args.candidates.split(",")}
            for command in cmds.values():  # warm-up: byte code caches, page cache
                run(command)
            samples = interleave(
                cmds, args.rounds, lambda k: run(cmds[k]),
                on_sample=lambda n, k, s: say(f"  {name} round {n + 1} {k:7} {s['wall']:.3f} s wall, {s['cpu']:.3f} s CPU"),
            )
            figures = {k: {"wall_s": median([s["wall"] for s in v]), "cpu_s": median([s["cpu"] for s in v]),
                           "walls": [round(s["wall"], 3) for s in v]} for k, v in samples.items()}
            for k in cmds:
                if k != "pytest":
                    per_round = [a["wall"] / b["wall"] for a, b in zip(samples[k], samples["pytest"])]
                    figures[k]["ratio_wall"] = median(per_round)
                    figures[k]["ratio_cpu"] = median([a["cpu"] / b["cpu"] for a, b in zip(samples[k], samples["pytest"])])
            figures["phases"] = {mode: phases(mode, submission, args.suite, folder) for mode in ("inprocess", "grader")}
            record["submissions"][name] = figures
            say(f"{name}: " + ", ".join(
                f"{k} {v['wall_s']:.2f} s (CPU {v['cpu_s']:.2f} s"
                + (f", x{v['ratio_wall']:.2f} wall, x{v['ratio_cpu']:.2f} CPU)" if "ratio_wall" in v else ")")
                for k, v in figures.items() if k in cmds))
            for mode, info in figures["phases"].items():
                say(f"  phases of {mode} ({info['total']:.2f} s):")
                for label, seconds in info["rows"]:
                    say(f"    {seconds:7.3f} s  {label}")
    path = save("feedback", record)
    say(f"figures: {path.relative_to(KIT_ROOT)}")
    return record


if __name__ == "__main__":
    main()
