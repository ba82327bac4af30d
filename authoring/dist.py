"""Build what instructors hand out: `python -m authoring.dist student|gradescope|all`.

student     dist/student/: a folder to push as the GitHub Classroom template
            repository. The exercise (.py and .ipynb), the public suite, the
            grader without the hidden suites and without the reference, the
            public suite's expected outcomes recorded from the reference (see
            grader/oracle_recorded.py) and its plan for the notebook's check
            cells (grader/plans.py), a Makefile whose `make grade` bootstraps
            its own .venv, a student README, the Classroom workflow and a
            .gitlab-ci.yml (JUnit report in the pipeline's Tests tab).
            Also dist/classroom-hidden/ when the kit has hidden tests: what an
            instructor pushes to a private repository for the workflow's
            optional hidden run (the hidden suite and its recorded outcomes).
gradescope  dist/gradescope/autograder.zip: Gradescope's autograder format
            (setup.sh and run_autograder at the root). Gradescope's side is
            trusted, so it holds the hidden suite and the reference.

`make dist` and `make gradescope` call this. Nothing here runs student code.
"""

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from authoring.markers import strip_solutions
from authoring.notebook import REPOSITORY_PLACEHOLDER, notebook_text
from grader.exercise import EXERCISE
from grader.i18n import LANGUAGES

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference" / "tiny_autograd.py"
GRADER = ROOT / "grader"
TEMPLATES = Path(__file__).resolve().parent / "dist_templates"
DIST = ROOT / "dist"
SUBMISSION_CHOICES = ("tiny_autograd.py", "tiny_autograd.ipynb")
# Everything of the grader except these goes into a bundle.
ALWAYS_LEFT_OUT = ("__pycache__", ".hypothesis", ".pytest_cache", "expected")
# The student bundle's grader answers from recordings (grader/oracle_recorded.py):
# it ships neither the simulated exercise nor the probes that run it, and its
# copies of the exercise's table and of the hint catalog leave out the rules'
# formulas (the solution in other words) and the misconceptions' models.
KIT_ONLY = ("simulate.py", "probes.py")
PRIVATE_TABLE_KEYS = ("grad", "der")
PRIVATE_CATALOG_KEYS = ("models",)
# A fixed timestamp makes the zip reproducible byte for byte.
ZIP_TIMESTAMP = (2020, 1, 1, 0, 0, 0)
PLACEHOLDER = re.compile(r"@[A-Z_]+@")

NOTEBOOK_NOTES = {
    "tiny_autograd.py": (
        "评分的是 `tiny_autograd.py`。如果你在 notebook 里写，完成后请把代码复制回 `.py` 文件"
        "（本地可以用 `make grade SUBMISSION=tiny_autograd.ipynb` 检查 notebook）。",
        "The graded file is `tiny_autograd.py`. If you work in the notebook, copy your code back "
        "into the `.py` file when you are done (check the notebook locally with "
        "`make grade SUBMISSION=tiny_autograd.ipynb`).",
    ),
    "tiny_autograd.ipynb": (
        "评分的是 notebook `tiny_autograd.ipynb`（只读取代码单元；`!` 和 `%` 开头的行会被忽略）。",
        "The graded file is the notebook `tiny_autograd.ipynb` (code cells only; lines starting "
        "with `!` or `%` are ignored).",
    ),
}


class DistError(RuntimeError):
    """The bundle could not be built correctly."""


# ----------------------------------------------------------------- helpers


def requirements_text():
    """The grader's runtime requirements, pinned as in pyproject.toml."""
    with open(ROOT / "pyproject.toml", "rb") as handle:
        project = tomllib.load(handle)["project"]
    lines = list(project["dependencies"])
    if not any(line.split(";")[0].strip().startswith("tomli") for line in lines):
        # grader/results.py reads the rubric with tomllib, which Python < 3.11 lacks.
        lines.append('tomli==2.2.1; python_version < "3.11"')
    header = "# What the grader needs (pinned). `make grade` installs these into .venv.\n"
    return header + "\n".join(lines) + "\n"


def _max_score():
    from grader.results import rubric_total

    return str(int(rubric_total()))


def fill(template_name, **values):
    text = (TEMPLATES / template_name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    leftover = PLACEHOLDER.search(text)
    if leftover:
        raise DistError(f"{template_name}: placeholder {leftover.group()} was not filled")
    return text


def copy_grader(destination, with_hidden):
    """Copy the grader package; the hidden suite only if `with_hidden`. Without it
    (the student bundle), also without what only the kit may hold (KIT_ONLY,
    and the private keys of the exercise's table and of the catalog)."""
    hidden = (GRADER / "suites" / "hidden").resolve()
    feedback = (GRADER / "feedback").resolve()

    def ignore(folder, names):
        left_out = {name for name in names if name in ALWAYS_LEFT_OUT or name.endswith(".pyc")}
        if not with_hidden and Path(folder).resolve() == hidden.parent:
            left_out |= {name for name in names if name == "hidden"}
        if not with_hidden and Path(folder).resolve() == feedback:
            left_out |= {name for name in names if name in KIT_ONLY}
        return left_out

    shutil.copytree(GRADER, destination, ignore=ignore)
    if not with_hidden:
        for path, keys in ((destination / "exercise.toml", PRIVATE_TABLE_KEYS),
                           (destination / "feedback" / "hints.toml", PRIVATE_CATALOG_KEYS)):
            path.write_text(without_keys(path.read_text(encoding="utf-8"), keys), encoding="utf-8")


def without_keys(text, keys):
    """A TOML text without its `key = ...` entries for `keys` (a value may span lines: an
    array runs to its closing bracket); checked by parsing both: nothing else may change."""
    kept, skipping, depth = [], False, 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if not skipping and any(stripped.startswith(f"{key} =") or stripped.startswith(f"{key}=") for key in keys):
            value = stripped.split("=", 1)[1]
            depth = value.count("[") - value.count("]")
            skipping = depth > 0
            continue
        if skipping:
            depth += line.count("[") - line.count("]")
            skipping = depth > 0
            continue
        kept.append(line)
    result = "".join(kept)
    if _dropped(tomllib.loads(text), keys) != tomllib.loads(result):
        raise DistError(f"leaving out {keys} changed more than those keys")
    return result


def _dropped(data, keys):
    if isinstance(data, dict):
        return {k: _dropped(v, keys) for k, v in data.items() if k not in keys}
    if isinstance(data, list):
        return [_dropped(v, keys) for v in data]
    return data


def hidden_test_files():
    folder = GRADER / "suites" / "hidden"
    return sorted(folder.glob("test_*.py")) if folder.is_dir() else []


def record(suite, path):
    """Run `suite` on the reference with a recording oracle and save what it expected."""
    from grader.grading import grade
    from grader.oracle_recorded import RecordingOracle

    oracle = RecordingOracle()
    result = grade(REFERENCE, suite=suite, oracle=oracle)
    if result.problem or not result.tests or result.score != result.max_score:
        failed = [t.nodeid for t in result.tests if not t.passed]
        raise DistError(f"the reference does not get full marks on the {suite} suite: "
                        f"{result.score}/{result.max_score}, failed: {failed[:5]} {result.problem or ''}")
    oracle.save(path, suite)
    return len(oracle.programs), len(result.tests)


def _write(path, text, executable=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if executable:
        path.chmod(0o755)


def _fresh(folder):
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)


# ----------------------------------------------------------------- student


def build_student(out=None, submission="tiny_autograd.py", lang="zh", verify=True, log=print, repository=None):
    """Write the Classroom template repository to `out` (default dist/student).
    `repository`: its address once pushed, written into the notebook's and the
    README's Colab cell (students clone it there for the notebook's checks)."""
    if submission not in SUBMISSION_CHOICES:
        raise DistError(f"the graded file must be one of {SUBMISSION_CHOICES}, not {submission!r}")
    out = Path(out or DIST / "student")
    _fresh(out)
    template = strip_solutions(REFERENCE.read_text(encoding="utf-8"))
    note_zh, note_en = NOTEBOOK_NOTES[submission]
    _write(out / "tiny_autograd.py", template)
    _write(out / "tiny_autograd.ipynb", notebook_text(template, repository=repository,
                                                      submit_note={"en": note_en, "zh": note_zh}))
    copy_grader(out / "grader", with_hidden=False)
    programs, tests = record("public", out / "grader" / "expected" / "public.json")
    log(f"recorded {programs} expected outcomes of {tests} public tests")
    write_plan(out / "grader")
    _write(out / "README.md", fill("student/README.md", SUBMISSION=submission,
                                   NOTEBOOK_NOTE_ZH=note_zh, NOTEBOOK_NOTE_EN=note_en,
                                   REPOSITORY=repository or REPOSITORY_PLACEHOLDER,
                                   PRIMITIVES=" ".join(EXERCISE.primitives()),
                                   DUAL_OPS=" ".join(EXERCISE.names(dual=True))))
    _write(out / "Makefile", fill("student/Makefile", SUBMISSION=submission))
    _write(out / ".gitignore", fill("student/gitignore"))
    _write(out / "requirements.txt", requirements_text())
    _write(out / ".github" / "workflows" / "classroom.yml",
           fill("student/classroom.yml", SUBMISSION=submission, FEEDBACK_LANG=lang, MAX_SCORE=_max_score()))
    _write(out / ".gitlab-ci.yml", fill("student/gitlab-ci.yml", SUBMISSION=submission, FEEDBACK_LANG=lang))
    if verify:
        verify_student(out, log=log)
    log(f"wrote {out}")
    return out


def write_plan(grader_folder):
    """The public suite's plan for the notebook's checks, recorded now (not the kit's
    committed copy, which could be stale), and proof that the recorded outcomes
    cover every program it checks."""
    from grader.oracle_recorded import program_key
    from grader.plans import PLAN_FILE, plan_from_json, plan_text
    from grader.replay import record_plan

    text = plan_text(record_plan("public"))
    recorded = json.loads((grader_folder / "expected" / "public.json").read_text(encoding="utf-8"))["programs"]
    plan = plan_from_json(json.loads(text))
    uncovered = [test.nodeid for test in plan.tests for check in test.checks
                 if program_key(check.steps) not in recorded]
    if uncovered:
        raise DistError(f"the recorded outcomes miss programs of the plan: {uncovered[:5]}")
    _write(grader_folder / "suites" / "public" / PLAN_FILE, text)


def verify_student(bundle, python=None, log=print):
    """Grade the reference with the bundle's own grader, from outside the kit:
    full marks prove the recording covers the public suite as shipped."""
    python = python or sys.executable
    with tempfile.TemporaryDirectory(prefix="dist-verify-") as scratch:
        submission = Path(scratch) / "solution.py"
        shutil.copy(REFERENCE, submission)
        out = Path(scratch) / "results.json"
        command = [python, "-m", "grader", "grade", str(submission), "--out", str(out), "--quiet", "--lang", "en"]
        done = subprocess.run(command, cwd=bundle, capture_output=True, text=True, timeout=600)
        if done.returncode != 0 or not out.exists():
            raise DistError(f"the bundle's grader did not run:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        results = json.loads(out.read_text(encoding="utf-8"))
    wanted = results["extra_data"]["max_score"]
    if results["score"] != wanted or not wanted:
        failed = [t["name"] + ": " + t["output"][:200] for t in results["tests"] if t["status"] != "passed"]
        raise DistError(f"the bundle gives the reference {results['score']}/{wanted}: {failed[:3]}")
    log(f"verified: the bundle's grader gives the reference {wanted:g}/{wanted:g} without the reference")
    done = subprocess.run([python, "-c", NOTEBOOK_SELF_CHECK, str(REFERENCE)], cwd=bundle, capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        raise DistError(f"the bundle's notebook checks fail the reference:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    log("verified: the bundle's notebook checks pass the reference without the reference")


# Run in the bundle: the notebook checks (grader/notebook_check.py) on the reference's
# definitions, as a kernel would hold them; exit 1 unless every part passes.
NOTEBOOK_SELF_CHECK = """
import sys
from grader.notebook_check import PART_NAMES, run_parts
namespace = {"__name__": "__main__"}
exec(compile(open(sys.argv[1], encoding="utf-8").read(), "notebook", "exec"), namespace)
report = run_parts(PART_NAMES, namespace, whole_suite=True)
from grader.notebook_view import render_text
print(render_text(report))
sys.exit(0 if report.ok else 1)
"""


def build_hidden(out=None, log=print):
    """dist/classroom-hidden: the hidden suite and its recorded outcomes, for a private repository."""
    out = Path(out or DIST / "classroom-hidden")
    files = hidden_test_files()
    if out.exists():
        shutil.rmtree(out)
    if not files:
        log("no hidden tests: skipped dist/classroom-hidden")
        return None
    out.mkdir(parents=True)
    shutil.copytree(GRADER / "suites" / "hidden", out / "suites" / "hidden",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    programs, tests = record("hidden", out / "expected" / "hidden.json")
    _write(out / "README.md", (
        "# Hidden tests for the tiny-autograd Classroom workflow\n\n"
        "Push this folder to a **private** repository. The student workflow checks it out\n"
        "(secrets `HIDDEN_TESTS_REPO` and `HIDDEN_TESTS_TOKEN`, see docs/INSTRUCTORS.md of\n"
        "the kit), copies `suites/hidden/` and `expected/hidden.json` into its grader and\n"
        "grades with `--suite all`. Rebuild it with `make dist` whenever the tests change.\n"
    ))
    log(f"recorded {programs} expected outcomes of {tests} hidden tests into {out}")
    return out


# -------------------------------------------------------------- gradescope


def build_gradescope(out=None, lang="zh", log=print, submission="tiny_autograd.py"):
    """dist/gradescope/autograder.zip (and the unpacked folder next to it). `submission`:
    the file graded when a student hands in both tiny_autograd.py and the notebook."""
    if submission not in SUBMISSION_CHOICES:
        raise DistError(f"the graded file must be one of {SUBMISSION_CHOICES}, not {submission!r}")
    out = Path(out or DIST / "gradescope")
    _fresh(out)
    source = out / "autograder"
    source.mkdir()
    copy_grader(source / "grader", with_hidden=True)
    (source / "reference").mkdir()
    shutil.copy(REFERENCE, source / "reference" / "tiny_autograd.py")
    _write(source / "requirements.txt", requirements_text())
    _write(source / "setup.sh", fill("gradescope/setup.sh"), executable=True)
    _write(source / "run_autograder", fill("gradescope/run_autograder", FEEDBACK_LANG=lang, GRADED_FILE=submission),
           executable=True)
    from grader.results import gradescope_grader_failed

    _write(source / "grader_failed_results.json",
           json.dumps(gradescope_grader_failed(lang), ensure_ascii=False, indent=2) + "\n")
    archive = out / "autograder.zip"
    write_zip(source, archive)
    log(f"wrote {archive} ({len(hidden_test_files())} hidden test files, the reference, setup.sh, run_autograder; "
        f"grades {submission} when a submission holds both files)")
    return archive


def write_zip(folder, archive):
    """Zip the *contents* of `folder` (setup.sh at the root), sorted, with fixed
    timestamps and the executable bit kept for the scripts."""
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), date_time=ZIP_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            mode = 0o755 if path.stat().st_mode & 0o111 else 0o644
            info.external_attr = (0o100000 | mode) << 16
            bundle.writestr(info, path.read_bytes())


# -------------------------------------------------------------------- main


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m authoring.dist", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("student", "gradescope", "all"))
    parser.add_argument("--out", default=None, help="output folder (default: dist/student or dist/gradescope)")
    parser.add_argument("--submission", choices=SUBMISSION_CHOICES, default="tiny_autograd.py",
                        help="the graded file: what the Classroom and GitLab workflows grade, and what "
                             "Gradescope grades when a submission holds both (default: %(default)s)")
    parser.add_argument("--lang", choices=LANGUAGES, default="zh",
                        help="feedback language on Classroom and Gradescope (default: %(default)s)")
    parser.add_argument("--repository", metavar="URL", default=None,
                        help="the student repository's address once pushed (the template repository): written "
                             "into the Colab cell of the notebook and the README")
    parser.add_argument("--no-verify", action="store_true", help="skip grading the reference with the bundle")
    args = parser.parse_args(argv)
    try:
        if args.what in ("student", "all"):
            build_student(args.out if args.what == "student" else None, args.submission, args.lang,
                          verify=not args.no_verify, repository=args.repository)
            build_hidden()
        if args.what in ("gradescope", "all"):
            build_gradescope(args.out if args.what == "gradescope" else None, args.lang, submission=args.submission)
    except DistError as error:
        print(f"dist: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
