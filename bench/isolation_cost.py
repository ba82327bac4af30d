"""What each isolation level costs: worker start-up, one request, and stop.

    .venv/bin/python -m bench.isolation_cost [--rounds 15] [--calls 300] [--grades 3]

For every level that works on this machine (bubblewrap, unprivileged, process),
interleaved in the same run (see bench/common.py). The process level runs the
grader's own interpreter (often a venv or pyenv build), the others the system's
/usr/bin/python3, whose start-up differs; so "process/usr" (the process level
with /usr/bin/python3, when the grader's is another) is measured too, and the
cost of a layer is the difference between neighbouring rows:

    process/usr -> unprivileged   setpriv to another uid
    unprivileged -> bubblewrap    namespaces and the mount view (no sweep on stop)
    bubblewrap-confine -> bubblewrap   the worker's Landlock and seccomp
    bubblewrap-cgroup -> bubblewrap    a control group per submission

and "bare python" (spawning `python -I -c pass` and waiting for it, with each
interpreter) is the floor.

    start  Worker.start() on the reference: from spawning the worker (and its
           sandbox) to its "ready" line, i.e. interpreter start-up, rlimits and
           loading the submission.
           (With a control group: making it is part of start, removing it of stop.)
    call   one round trip of a small graph program (x * y, backward, read):
           request out, JSON reply back, validated and rebuilt; median of --calls.
    stop   Worker.stop(): kill the process group (bubblewrap: the namespace dies
           with it; the other levels also sweep for processes left behind).
    grade  (with --grades N) a whole `grade(reference, suite="public")`: the
           cost of isolation next to everything else a grading run does.

Prints a table with absolute medians and ratios to the process level, and
writes results/bench/isolation_cost.json.
"""

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import KIT_ROOT, interleave, machine, median, save, say
from grader import sandbox
from grader.grading import close_box, grade, open_box
from grader.worker_client import Limits, Worker

REFERENCE = KIT_ROOT / "reference" / "tiny_autograd.py"
PROGRAM = [["value", 2.0], ["value", -3.0], ["op", "*", "n0", "n1"], ["backward", "n2"], ["read"]]


def available_levels():
    levels = {}
    for level in sandbox.LEVELS:
        try:
            levels[level] = sandbox.detect(level)
        except sandbox.IsolationUnavailable as error:
            say(f"skipping {level}: {error}")
    process = levels["process"]
    if os.path.exists(sandbox.SYSTEM_PYTHON) and os.path.realpath(process.python) != os.path.realpath(sandbox.SYSTEM_PYTHON):
        levels["process/usr"] = dataclasses.replace(process, python=sandbox.SYSTEM_PYTHON)
    strongest = levels.get("bubblewrap")
    if strongest is not None and strongest.confined:
        levels["bubblewrap-confine"] = dataclasses.replace(strongest, confined=())
    if strongest is not None and strongest.cgroups:
        levels["bubblewrap-cgroup"] = dataclasses.replace(strongest, cgroups=False)
    return levels


def bare_python(python):
    before = time.perf_counter()
    subprocess.run([python, "-I", "-c", "pass"], check=True, env=sandbox.SAFE_ENVIRONMENT)
    return time.perf_counter() - before


def staged_reference():
    """The reference laid out the way grading lays out a submission."""
    folder = Path(tempfile.mkdtemp(prefix="grader-bench-"))
    target = folder / "tiny_autograd.py"
    shutil.copyfile(REFERENCE, target)
    os.chmod(folder, 0o755)
    os.chmod(target, 0o644)
    return folder, target


def measure_worker(isolation, submission, calls):
    limits = Limits()
    started = time.perf_counter()
    box = open_box(isolation, limits)  # as grade() does: part of starting and stopping
    worker = Worker(submission, limits, isolation, box=box)
    report = worker.start()
    start = time.perf_counter() - started
    assert report.ok, report
    times = []
    for _ in range(calls):
        before = time.perf_counter()
        reply = worker.run(PROGRAM)
        times.append(time.perf_counter() - before)
        assert reply.outcome and reply.outcome["ok"], reply
    before = time.perf_counter()
    worker.stop()
    close_box(box)
    return {"start": start, "call": median(times), "stop": time.perf_counter() - before}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--grades", type=int, default=3, help="rounds of a whole public-suite grading (0: skip)")
    args = parser.parse_args(argv)

    levels = available_levels()
    folder, submission = staged_reference()
    try:
        for isolation in levels.values():  # warm up: probes, staging, page cache
            measure_worker(isolation, submission, 10)
        say(f"{args.rounds} rounds of start + {args.calls} calls + stop at {', '.join(levels)}")
        samples = interleave(levels, args.rounds, lambda name: measure_worker(levels[name], submission, args.calls))
        pythons = {"bare python (grader's)": levels["process"].python}
        if "process/usr" in levels or levels["process"].python == sandbox.SYSTEM_PYTHON:
            pythons["bare python (system)"] = sandbox.SYSTEM_PYTHON
        bare = interleave(pythons, args.rounds * 4, lambda name: bare_python(pythons[name]))
        grades = {}
        if args.grades:
            say(f"{args.grades} rounds of grade(reference, suite='public')")
            grades = interleave(levels, args.grades, lambda name: _timed_grade(levels[name]))
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    figures = {}
    for name in levels:
        figures[name] = {
            "start_ms": 1000 * median([s["start"] for s in samples[name]]),
            "call_us": 1e6 * median([s["call"] for s in samples[name]]),
            "stop_ms": 1000 * median([s["stop"] for s in samples[name]]),
        }
        if grades:
            figures[name]["grade_s"] = median(grades[name])
    for name in pythons:
        figures[name] = {"start_ms": 1000 * median(bare[name])}
    base = figures.get("process")
    width = max(len(name) for name in figures) + 2
    print(f"{'':<{width}}{'start ms':>10}{'x':>7}{'call us':>10}{'x':>7}{'stop ms':>10}{'x':>7}"
          + (f"{'grade s':>10}{'x':>7}" if grades else ""))
    for name, row in figures.items():
        line = f"{name:<{width}}"
        for key in ("start_ms", "call_us", "stop_ms") + (("grade_s",) if grades else ()):
            if key not in row:
                continue
            ratio = row[key] / base[key] if base and base.get(key) else float("nan")
            line += f"{row[key]:>10.2f}{ratio:>7.2f}" if key == "grade_s" else f"{row[key]:>10.1f}{ratio:>7.2f}"
        print(line)
    print("x: ratio to the process level, measured in the same run")
    path = save("isolation_cost", {
        "machine": machine(),
        "command": " ".join(["python -m bench.isolation_cost", *(sys.argv[1:] if argv is None else argv)]),
        "rounds": args.rounds,
        "calls": args.calls,
        "grades": args.grades,
        "levels": {name: f"{isolation.describe()} [python: {isolation.python}]" for name, isolation in levels.items()},
        "medians": figures,
    })
    say(f"saved {path}")


def _timed_grade(isolation):
    before = time.perf_counter()
    result = grade(REFERENCE, suite="public", isolation=isolation)
    assert result.score == result.max_score, result.first_line("en")
    return time.perf_counter() - before


if __name__ == "__main__":
    main()
