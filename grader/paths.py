"""Where the kit keeps its parts (one place, so that a bundle can leave some out)."""

from pathlib import Path

GRADER_DIR = Path(__file__).resolve().parent
KIT_ROOT = GRADER_DIR.parent
REFERENCE_FILE = KIT_ROOT / "reference" / "tiny_autograd.py"
SUITES_DIR = GRADER_DIR / "suites"
RUBRIC_FILE = GRADER_DIR / "rubric.toml"
EXPECTED_DIR = GRADER_DIR / "expected"  # the student bundle's recorded outcomes
