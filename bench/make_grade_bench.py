"""`make grade` of this kit against another checkout of it (e.g. the commit before a change).

    .venv/bin/python -m bench.make_grade_bench --other ../kit-before [--rounds 9]

Both run `make grade` (the student's command: the template, public suite, HTML
report) and `make grade SUITE=all` on a mutant with one mistake
(`add_assigns` of tests/mutants.py), each a fresh process, interleaved in
rounds after one warm-up each. Both use this checkout's .venv (VENV=, PY=),
which has the development extra (Hypothesis, which the other checkout may
need), so only the kit's code differs. Wall-time medians and the median of the per-round
ratios (this / other) go to results/bench/make_grade.json.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import KIT_ROOT, interleave, machine, median, save, say

sys.path.insert(0, str(KIT_ROOT / "tests"))
from mutants import BY_ID, mutant_source  # noqa: E402

CASES = {"template, public": ("student_template/tiny_autograd.py", "public"), "mutant, all": (None, "all")}


def make_grade(kit, submission, suite, scratch):
    command = ["make", "-s", "-C", str(kit), "grade", f"VENV={KIT_ROOT / '.venv'}",
               f"PY={KIT_ROOT / '.venv' / 'bin' / 'python'}",
               f"SUBMISSION={submission}", f"SUITE={suite}", f"OUT={scratch / 'results.json'}",
               f"HTML={scratch / 'report.html'}"]
    started = time.monotonic()
    subprocess.run(command, check=True, capture_output=True, timeout=600)
    return time.monotonic() - started


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--other", required=True, help="another checkout of the kit (the 'before')")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    kits = {"this": KIT_ROOT, "other": Path(args.other).resolve()}
    report = {"machine": machine(), "other": str(kits["other"]), "rounds": args.rounds, "cases": {}}
    with tempfile.TemporaryDirectory(prefix="make-grade-bench-") as folder:
        scratch = Path(folder)
        mutant = scratch / "mutant" / "tiny_autograd.py"
        mutant.parent.mkdir()
        mutant.write_text(mutant_source(BY_ID["add_assigns"]), encoding="utf-8")
        for case, (submission, suite) in CASES.items():
            path = str(mutant) if submission is None else str(KIT_ROOT / submission)

            def run(name):
                return make_grade(kits[name], path, suite, scratch)

            for name in kits:
                run(name)  # warm-up: byte code, page cache
            samples = interleave(list(kits), args.rounds, run,
                                 on_sample=lambda n, name, s: say(f"{case} round {n}: {name} {s:.3f} s"))
            ratios = [a / b for a, b in zip(samples["this"], samples["other"])]
            report["cases"][case] = {"samples": samples, "median": {k: median(v) for k, v in samples.items()},
                                     "ratio_this_over_other": median(ratios), "ratios": ratios}
            say(f"{case}: this {median(samples['this']):.3f} s, other {median(samples['other']):.3f} s, "
                f"ratio {median(ratios):.2f}")
    say(f"wrote {save('make_grade', report)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
