"""`python -m authoring [--check] [--preview OUT.ipynb]`: write (or check) the generated files.

The student files (student_template/: the template and its notebook, from the
reference), the frozen examples of the suites' @generated tests
(grader/suites/*/examples.json, drawn by Hypothesis: authoring/freeze.py) and
the public suite's plan, which the notebook's checks run
(grader/suites/public/plan.json, grader/plans.py).

`--preview OUT.ipynb` writes only an instructor's preview: the notebook with
the reference's solutions filled in (never part of a student bundle).
"""

import argparse
import sys
from pathlib import Path

from authoring import freeze
from authoring.markers import strip_solutions
from authoring.notebook import notebook_text

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference" / "tiny_autograd.py"
TEMPLATE_DIR = ROOT / "student_template"


def student_files():
    """{path: text} for every generated student file."""
    template = strip_solutions(REFERENCE.read_text(encoding="utf-8"))
    return {
        TEMPLATE_DIR / "tiny_autograd.py": template,
        TEMPLATE_DIR / "tiny_autograd.ipynb": notebook_text(template),
    }


def suites_root():
    return ROOT / "grader" / "suites"


def plan_files():
    """{path: text} of the public suite's plan, recorded by running the suite (over
    its committed examples) on nothing."""
    from grader.plans import PLAN_FILE, plan_text
    from grader.replay import record_plan

    folder = suites_root() / "public"
    return {folder / PLAN_FILE: plan_text(record_plan("public"))} if folder.is_dir() else {}


def preview_text():
    """The instructor's preview: the notebook of the reference itself."""
    return notebook_text(REFERENCE.read_text(encoding="utf-8"), preview=True)


def generated_files():
    """{path: text} for every generated file but the plan: the student files and the frozen examples."""
    return {**student_files(), **freeze.files(suites_root())}


def stale_examples_headers():
    """Suites whose @generated tests do not match their examples.json in count or
    strategies (checkable without Hypothesis)."""
    from grader.generated import EXAMPLES_FILE, load_examples

    stale = []
    for folder in freeze.suite_dirs(suites_root()):
        entries = load_examples(folder / EXAMPLES_FILE)
        tests = freeze.generated_tests(folder)
        wanted = {info.key: info.header() for info in tests}
        got = {key: {k: entry.get(k) for k in ("count", "specs")} for key, entry in entries.items()}
        if wanted != got:
            stale.append(folder / EXAMPLES_FILE)
    return stale


def check():
    import hypothesis

    stale, unchecked = [], []
    files = dict(student_files())
    examples = [folder / "examples.json" for folder in freeze.suite_dirs(suites_root())]
    comparable = all(freeze.made_with(path) in (None, hypothesis.__version__) for path in examples)
    files.update(plan_files())
    if comparable:
        files.update(freeze.files(suites_root()))
    else:
        stale += stale_examples_headers()
        unchecked = [p for p in examples if p not in stale]
    for path, text in files.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(path)
    for path in unchecked:
        print(f"note: {path.relative_to(ROOT)} was made with Hypothesis {freeze.made_with(path)}, this is "
              f"{hypothesis.__version__}: only its tests, counts and strategies were checked", file=sys.stderr)
    return stale


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m authoring", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the committed files are stale")
    parser.add_argument("--preview", metavar="OUT.ipynb", help="write only the notebook with the reference's "
                        "solutions filled in (an instructor's preview; never hand it out)")
    args = parser.parse_args(argv)
    if args.preview:
        path = Path(args.preview)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(preview_text(), encoding="utf-8")
        print(f"wrote {path} (the reference's solutions filled in: do not hand it out)")
        return 0
    if args.check:
        stale = check()
        if stale:
            print("stale (run `make template`):", *(p.relative_to(ROOT) for p in stale), file=sys.stderr)
            return 1
        return 0
    # The plan is recorded from the examples on disk: write them first.
    for files in (generated_files, plan_files):
        for path, text in files().items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
