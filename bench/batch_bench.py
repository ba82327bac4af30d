"""Target 4: grading a class, `python -m grader batch` against one pytest per student.

    .venv/bin/python -m bench.batch_bench [--students 200] [--rounds 2] [--naive-sample 20]
    .venv/bin/python -m bench.batch_bench --class mutants [--students 100] [--other ../kit-before]

A class of 200 generated submissions (half the reference solution, four in ten
one realistic mistake from tests/mutants.py, the rest the unfilled template and
a syntax error; each file made distinct by a comment). Candidates, all with
the isolation `detect()` picks here (bubblewrap when available):

    replay-1  python -m grader batch CLASS --out grades.csv --jobs 1 --engine replay
    replay-2  the same with --jobs 2 (replay is the default engine)
    pytest-1  python -m grader batch CLASS --out grades.csv --jobs 1 --engine pytest
    pytest-2  the same with --jobs 2
    naive     one `python -m pytest grader/suites/public -c grader/suites/pytest.ini
              --submission FILE -q` per submission, one after the other
    naive-2   the same, two processes at a time (the machine's 2 cores)

`--class mutants` is a class where most submissions fail something, graded
with the hidden tests and the feedback (the batch default, `--suite all`):
every mutant of tests/mutants.py in turn for 80 % of the class, then the
reference (10 %), the unfilled template and a syntax error (5 % each). Its
naive way is the per-submission command with the same suite and feedback,
one after the other:

    naive     python -m grader grade FILE --suite all --out TMP/results.json --quiet

and its candidates are replay-1 and replay-2 (`--jobs`), plus, with `--other
CHECKOUT` (another checkout of the kit, e.g. the commit before a change, run
with this checkout's .venv), `other-1` and `other-2`: the same batch commands
of that checkout, interleaved in the same rounds.

The naive way costs about one full pytest start-up per student, so by default
it runs on an evenly spaced sample (--naive-sample) and its figure is seconds
per submission; pass --naive-sample 200 to run it on the whole class.
Rounds alternate the order of the candidates. Figures: median seconds per
submission, submissions per second, the ratios, and for scale the time to
start and stop one worker (the floor of any per-submission isolation).
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import KIT_ROOT, machine, median, save, say

PY = str(KIT_ROOT / ".venv" / "bin" / "python")


def environment():
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _sources():
    """(reference, template, syntax error, mutant(i)) sources of a generated class."""
    sys.path.insert(0, str(KIT_ROOT / "tests"))
    from mutants import MUTANTS, mutant_source

    reference = (KIT_ROOT / "reference" / "tiny_autograd.py").read_text(encoding="utf-8")
    template = (KIT_ROOT / "student_template" / "tiny_autograd.py").read_text(encoding="utf-8")
    broken = reference.replace("def backward(self):", "def backward(self)", 1)
    return reference, template, broken, lambda i: mutant_source(MUTANTS[i % len(MUTANTS)])


def _write_class(folder, sources):
    paths = []
    for number, source in enumerate(sources):
        path = Path(folder) / f"student{number:03d}.py"
        path.write_text(f"# student {number}\n" + source, encoding="utf-8")
        paths.append(path)
    return paths


def make_class(folder, count):
    """`count` submissions in `folder`, half of them correct; returns their paths in order."""
    reference, template, broken, mutant = _sources()

    def source(number):
        kind = number % 10
        if kind < 5:
            return reference
        if kind < 9:
            return mutant(number // 10 * 4 + kind - 5)
        return template if number % 20 == 9 else broken

    return _write_class(folder, map(source, range(count)))


def make_mutant_class(folder, count):
    """`count` submissions, most of them failing something; returns their paths in order."""
    reference, template, broken, mutant = _sources()

    def source(number):
        kind = number % 20
        if kind < 16:
            return mutant(number // 20 * 16 + kind)
        if kind < 18:
            return reference
        return template if kind == 18 else broken

    return _write_class(folder, map(source, range(count)))


def run(command, cwd=KIT_ROOT):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{command} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def batch(folder, engine, jobs, out_dir, kit=KIT_ROOT, name=None):
    out = Path(out_dir) / f"grades-{name or engine}-{jobs}.csv"
    shutil.rmtree(out.with_name(out.stem + "-results"), ignore_errors=True)  # no reuse of earlier results
    out.unlink(missing_ok=True)
    result = run([PY, "-m", "grader", "batch", str(folder), "--out", str(out), "--jobs", str(jobs), "--engine", engine],
                 cwd=kit)
    rows = out.read_text(encoding="utf-8").splitlines()[1:]
    errors = [row for row in rows if ",error," in row]
    if len(rows) != len(list(Path(folder).iterdir())) or errors:
        raise RuntimeError(f"batch did not grade every submission: {errors[:3]}")
    return result


def worker_start_seconds(count=15):
    """Median seconds to start a worker on the reference (load it, report ready) and stop it."""
    from grader import sandbox
    from grader.worker_client import Worker

    folder = Path(tempfile.mkdtemp(prefix="bench-worker-"))
    module = folder / "tiny_autograd.py"
    shutil.copyfile(KIT_ROOT / "reference" / "tiny_autograd.py", module)
    os.chmod(folder, 0o755)
    os.chmod(module, 0o644)
    isolation = sandbox.detect()
    times = []
    for _ in range(count):
        worker = Worker(module, isolation=isolation)
        started = time.perf_counter()
        assert worker.start().ok
        worker.stop()
        times.append(time.perf_counter() - started)
    shutil.rmtree(folder, ignore_errors=True)
    return median(times), isolation.level


def naive_command(path, graded=False):
    if graded:  # the per-submission command with batch's suite and feedback
        out = Path(path).parent.parent / "naive" / Path(path).stem / "results.json"  # outside the class
        return [PY, "-m", "grader", "grade", str(path), "--suite", "all", "--out", str(out), "--quiet"]
    return [PY, "-m", "pytest", "grader/suites/public", "-c", "grader/suites/pytest.ini",
            "-p", "no:cacheprovider", "--submission", str(path), "-q"]


def naive(paths, width=1, graded=False):
    """(wall, CPU) seconds for one pytest process per submission, `width` at a time."""
    if width == 1:
        wall = cpu = 0.0
        for path in paths:
            w, c = run(naive_command(path, graded))
            wall, cpu = wall + w, cpu + c
        return wall, cpu
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    pending, running = list(paths), []
    while pending or running:
        while pending and len(running) < width:
            running.append(subprocess.Popen(naive_command(pending.pop(), graded), cwd=KIT_ROOT, env=environment(),
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        running[0].wait()
        running = [p for p in running if p.poll() is None]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - started, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--class", dest="kind", choices=("mixed", "mutants"), default="mixed",
                        help="mixed: half correct (the default); mutants: most submissions fail something")
    parser.add_argument("--other", default=None, help="another checkout of the kit: its batch runs too (other-N)")
    parser.add_argument("--students", type=int, default=None, help="default: 200 (mixed), 100 (mutants)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--naive-sample", type=int, default=20)
    parser.add_argument("--jobs", default="1,2")
    parser.add_argument("--engines", default=None, help="batch --engine values to compare "
                        "(default: replay,pytest; replay for the mutant class)")
    args = parser.parse_args(argv)
    mutants = args.kind == "mutants"
    args.students = args.students or (100 if mutants else 200)
    args.engines = args.engines or ("replay" if mutants else "replay,pytest")
    other = Path(args.other).resolve() if args.other else None
    record = {"machine": machine(), "class": args.kind, "students": args.students, "rounds": args.rounds,
              "naive_sample": args.naive_sample, "other": str(other) if other else None, "per_submission": {}}
    with tempfile.TemporaryDirectory(prefix="bench-class-") as tmp:
        folder = Path(tmp) / "class"
        folder.mkdir()
        paths = (make_mutant_class if mutants else make_class)(folder, args.students)
        step = max(1, len(paths) // max(1, args.naive_sample))
        sample = paths[::step][: args.naive_sample]
        candidates = [f"{engine}-{jobs}" for engine in args.engines.split(",")
                      for jobs in args.jobs.split(",")]
        if other:
            candidates += [f"other-{jobs}" for jobs in args.jobs.split(",")]
        candidates += ["naive", "naive-2"]
        samples = {name: [] for name in candidates}
        for number in range(args.rounds):
            for name in (candidates if number % 2 == 0 else list(reversed(candidates))):
                if name.startswith("naive"):
                    wall, cpu = naive(sample, width=2 if name == "naive-2" else 1, graded=mutants)
                    count = len(sample)
                elif name.startswith("other-"):
                    wall, cpu = batch(folder, "replay", int(name.split("-")[1]), tmp, kit=other, name="other")
                    count = len(paths)
                else:
                    engine, jobs = name.split("-")
                    wall, cpu = batch(folder, engine, int(jobs), tmp)
                    count = len(paths)
                samples[name].append((wall / count, cpu / count))
                say(f"round {number + 1} {name:8} {wall:7.1f} s for {count} submissions: "
                    f"{wall / count:.3f} s each, {count / wall:.2f} submissions/s")
        for name, values in samples.items():
            per = median([w for w, _ in values])
            record["per_submission"][name] = {
                # CPU seconds are those of the process tree the benchmark waited for: right for
                # the naive way, not for batch (its grading processes belong to a forkserver).
                "wall_s": per, "cpu_s": median([c for _, c in values]), "submissions_per_s": 1.0 / per,
                "samples_wall_s": [round(w, 4) for w, _ in values],
            }
        naive_per = record["per_submission"]["naive"]["wall_s"]
        naive_2_per = record["per_submission"]["naive-2"]["wall_s"]
        for name in [c for c in candidates if not c.startswith("naive")]:
            figures = record["per_submission"][name]
            figures["speedup_vs_naive"] = naive_per / figures["wall_s"]
            figures["speedup_vs_naive_same_width"] = (naive_per if name.endswith("-1") else naive_2_per) / figures["wall_s"]
            figures["class_of_200_s"] = figures["wall_s"] * 200
            if other and not name.startswith("other-"):
                before = record["per_submission"][f"other-{name.split('-')[1]}"]["wall_s"]
                figures["speedup_vs_other"] = before / figures["wall_s"]
        record["per_submission"]["naive"]["class_of_200_s"] = naive_per * 200
        record["per_submission"]["naive-2"]["class_of_200_s"] = naive_2_per * 200
        say("; ".join(f"{name}: {v['wall_s']:.3f} s/submission, {v['submissions_per_s']:.2f}/s"
                      + (f", {v['speedup_vs_naive']:.1f}x naive" if "speedup_vs_naive" in v else "")
                      + (f", {v['speedup_vs_other']:.2f}x other" if "speedup_vs_other" in v else "")
                      for name, v in record["per_submission"].items()))
        seconds, level = worker_start_seconds()
        record["worker_start_s"], record["isolation"] = seconds, level
        say(f"one worker start and stop ({level}): {seconds:.3f} s")
    path = save("batch-mutants" if mutants else "batch", record)
    say(f"figures: {path.relative_to(KIT_ROOT)}")
    return record


if __name__ == "__main__":
    main()
