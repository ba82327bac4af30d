"""Shared helpers of the benchmarks: side-by-side timing on a noisy machine.

The machine is shared and has 2 cores, so absolute times drift by tens of
percent from one minute to the next. Every benchmark therefore runs its
candidates interleaved (A, B, A, B, ...) in rounds, takes the median of each,
and reports ratios measured in the same run.
"""

import datetime
import json
import os
import platform
import statistics
import sys
from pathlib import Path

KIT_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = KIT_ROOT / "results" / "bench"


def median(values):
    return statistics.median(values) if values else float("nan")


def interleave(candidates, rounds, run, on_sample=None):
    """Run `run(candidate)` (returns seconds or a dict of measurements) for each
    candidate, one after the other, `rounds` times. Returns {name: [samples]}.
    The order alternates between rounds so that neither candidate always runs
    first (a warm cache, a neighbour's burst of load)."""
    samples = {name: [] for name in candidates}
    names = list(candidates)
    for number in range(rounds):
        order = names if number % 2 == 0 else list(reversed(names))
        for name in order:
            sample = run(name)
            samples[name].append(sample)
            if on_sample:
                on_sample(number, name, sample)
    return samples


def machine():
    """What the figures were measured on, for the record."""
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {
        "date": datetime.date.today().isoformat(),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": [round(x, 2) for x in load] if load else None,
        "platform": platform.platform(),
    }


def save(name, data):
    """Write a benchmark's figures to results/bench/NAME.json and return the path."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def say(*parts):
    print(*parts, file=sys.stderr, flush=True)
