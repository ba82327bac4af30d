"""`python -m authoring [--check]`: write (or check) the student files."""

import argparse
import sys
from pathlib import Path

from authoring.markers import strip_solutions
from authoring.notebook import notebook_text

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference" / "tiny_autograd.py"
TEMPLATE_DIR = ROOT / "student_template"


def generated_files():
    """{path: text} for every generated student file."""
    template = strip_solutions(REFERENCE.read_text(encoding="utf-8"))
    return {
        TEMPLATE_DIR / "tiny_autograd.py": template,
        TEMPLATE_DIR / "tiny_autograd.ipynb": notebook_text(template),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m authoring", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the committed files are stale")
    args = parser.parse_args(argv)
    stale = []
    for path, text in generated_files().items():
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.relative_to(ROOT))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("stale (run `make template`):", *stale, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
