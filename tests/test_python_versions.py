"""The same submission gets exactly the same results on the oldest and the newest Python.

The kit supports Python 3.9 to 3.13. Here the kit's grader (this checkout) grades
a few submissions under the oldest and the newest interpreter, each in a venv
with only the student requirements (pytest, pytest-json-report, nbformat, tomli
where needed), and the results documents and Markdown feedback must be equal
byte for byte, except the measured time. The interpreters come from pyenv
(`pyenv prefix 3.9`) or from KIT_PYTHON_3_9 / KIT_PYTHON_3_13; without them
the test is skipped and says why.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from authoring import dist
from make_env import make_environment
from mutants import BY_ID, mutant_source

pytestmark = pytest.mark.slow  # `make test-fast` leaves it out: it grades many submissions or builds environments

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference" / "tiny_autograd.py"
VERSIONS = ("3.9", "3.13")
VENVS = ROOT / ".venv" / "pythons"
MUTANTS = ("add_assigns", "relu_one_at_zero", "intermediate_grads_not_reset", "dual_mul_missing_cross_term")


def interpreter(version):
    configured = os.environ.get(f"KIT_PYTHON_{version.replace('.', '_')}")
    if configured and Path(configured).is_file():
        return configured
    pyenv = shutil.which("pyenv")
    if pyenv:
        done = subprocess.run([pyenv, "prefix", version], capture_output=True, text=True)
        candidate = Path(done.stdout.strip().splitlines()[0] if done.stdout.strip() else "") / "bin" / "python3"
        if done.returncode == 0 and candidate.is_file():
            return str(candidate)
    pytest.skip(f"no Python {version} here (pyenv prefix {version}, or set KIT_PYTHON_{version.replace('.', '_')})")


def student_venv(version):
    """A venv of that Python with the student requirements, made once per requirements."""
    requirements = dist.requirements_text()
    folder = VENVS / version
    marker = folder / f".requirements-{hashlib.sha256(requirements.encode()).hexdigest()[:12]}"
    python = folder / "bin" / "python"
    if not marker.exists():
        base = interpreter(version)
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run([base, "-m", "venv", str(folder)], check=True, timeout=300)
        wanted = folder / "requirements.txt"
        wanted.write_text(requirements, encoding="utf-8")
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                               "-r", str(wanted)], capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            pytest.fail(f"the student requirements do not install on Python {version}:\n{done.stderr[-3000:]}")
        marker.touch()
    return str(python)


@pytest.fixture(scope="module")
def submissions(tmp_path_factory):
    folder = tmp_path_factory.mktemp("versions")
    files = {"reference": REFERENCE}
    for mutant_id in MUTANTS:
        path = folder / mutant_id / "tiny_autograd.py"
        path.parent.mkdir()
        path.write_text(mutant_source(BY_ID[mutant_id]), encoding="utf-8")
        files[mutant_id] = path
    broken = folder / "broken" / "tiny_autograd.py"
    broken.parent.mkdir()
    broken.write_text(REFERENCE.read_text(encoding="utf-8").replace("def tanh(self):", "def tanh(self)", 1),
                      encoding="utf-8")
    files["broken"] = broken
    notebook = folder / "notebook" / "tiny_autograd.ipynb"
    notebook.parent.mkdir()
    shutil.copy(ROOT / "student_template" / "tiny_autograd.ipynb", notebook)
    files["notebook"] = notebook
    return files


def grade_with(python, submission, out_dir, isolation=None):
    out = out_dir / "results.json"
    summary = out_dir / "summary.md"
    env = dict(os.environ, **({"GRADER_ISOLATION": isolation} if isolation else {}))
    done = subprocess.run([python, "-m", "grader", "grade", str(submission), "--suite", "all", "--out", str(out),
                           "--markdown", str(summary), "--lang", "zh", "--quiet"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    document = json.loads(out.read_text(encoding="utf-8"))
    document.pop("execution_time")
    return document, summary.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["reference", *MUTANTS, "broken", "notebook"])
def test_oldest_and_newest_python_give_the_same_results(name, submissions, tmp_path):
    graded = {}
    for version in VERSIONS:
        python = student_venv(version)
        out_dir = tmp_path / version
        out_dir.mkdir()
        graded[version] = grade_with(python, submissions[name], out_dir)
    (old_doc, old_md), (new_doc, new_md) = graded[VERSIONS[0]], graded[VERSIONS[-1]]
    assert [t["name"] for t in old_doc["tests"]] == [t["name"] for t in new_doc["tests"]]
    for old, new in zip(old_doc["tests"], new_doc["tests"]):
        assert old == new, old["name"]
    assert old_doc == new_doc
    assert old_md == new_md
    if name in MUTANTS:
        assert 0 < old_doc["score"] < old_doc["extra_data"]["max_score"]


@pytest.mark.parametrize("version", VERSIONS)
def test_the_worker_itself_runs_on_that_python(version, submissions, tmp_path):
    """Under bubblewrap the worker runs on the system's Python; at the process level
    it runs on the grader's own, so the worker's code must load on every version."""
    document, _ = grade_with(student_venv(version), submissions["reference"], tmp_path, isolation="process")
    assert document["extra_data"]["isolation"].startswith("process:")
    assert document["score"] == document["extra_data"]["max_score"], document["output"][:500]


def test_this_python_gives_the_same_results_as_the_oldest(submissions, tmp_path):
    """The interpreter running the kit's tests (any supported version) agrees too."""
    old = grade_with(student_venv(VERSIONS[0]), submissions["add_assigns"], _folder(tmp_path / "old"))
    here = grade_with(sys.executable, submissions["add_assigns"], _folder(tmp_path / "here"))
    assert old == here


def _folder(path):
    path.mkdir()
    return path


@pytest.mark.parametrize("version", VERSIONS)
def test_the_student_bundle_grades_with_that_python(version, tmp_path):
    """A fresh copy of the bundle: `make grade PYTHON=...` makes its own .venv with that
    Python from requirements.txt and grades the template (0 points, a results file)."""
    python = interpreter(version)
    bundle = dist.build_student(tmp_path / "student", verify=False, log=lambda *a: None)
    done = subprocess.run(["make", "grade", f"PYTHON={python}"], cwd=bundle, capture_output=True, text=True,
                          timeout=900, env=make_environment())
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    venv_version = subprocess.run([str(bundle / ".venv" / "bin" / "python"), "-c",
                                   "import sys; print('%d.%d' % sys.version_info[:2])"],
                                  capture_output=True, text=True, check=True).stdout.strip()
    assert venv_version == version
    results = json.loads((bundle / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == 0 and results["extra_data"]["max_score"] == 100
