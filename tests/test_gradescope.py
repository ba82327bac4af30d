"""The Gradescope autograder (`make gradescope`): a zip that follows Gradescope's
specification, unpacked here into a folder laid out like /autograder.

Gradescope unpacks the zip into /autograder/source, copies run_autograder to
/autograder/run_autograder, puts the submission in /autograder/submission and
reads /autograder/results/results.json. AUTOGRADER_ROOT stands in for
/autograder and AUTOGRADER_PYTHON for the venv that setup.sh builds.
"""

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from authoring import dist
from mutants import BY_ID as MUTANTS_BY_ID, mutant_source
from test_dist import reporter_points, run_workflow_grading

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference" / "tiny_autograd.py"
TEMPLATE = ROOT / "student_template" / "tiny_autograd.py"
HIDDEN_TESTS = sorted((ROOT / "grader" / "suites" / "hidden").glob("test_*.py"))


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory):
    return dist.build_gradescope(tmp_path_factory.mktemp("gradescope"), log=lambda *a: None)


def unpack(archive, folder):
    """An /autograder look-alike: source/ from the zip (modes kept), run_autograder
    copied to the root, an empty submission/ and results/."""
    root = folder / "autograder"
    source = root / "source"
    with zipfile.ZipFile(archive) as bundle:
        for info in bundle.infolist():
            target = source / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(bundle.read(info))
            target.chmod((info.external_attr >> 16) & 0o777 or 0o644)
    shutil.copy2(source / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    (root / "results").mkdir()
    return root


def run_autograder(root, submission_files, python=sys.executable):
    for name, text in submission_files.items():
        (root / "submission" / name).write_text(text, encoding="utf-8")
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    env.update(AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=python, FEEDBACK_LANG="en")
    done = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))


def test_zip_follows_gradescope_layout(autograder_zip, tmp_path):
    with zipfile.ZipFile(autograder_zip) as bundle:
        infos = {info.filename: info for info in bundle.infolist()}
        scripts = {name: bundle.read(name) for name in ("setup.sh", "run_autograder") if name in infos}
    for script in ("setup.sh", "run_autograder"):
        assert script in infos, "setup.sh and run_autograder must sit at the root of the zip"
        assert stat.S_IMODE(infos[script].external_attr >> 16) == 0o755
    assert "reference/tiny_autograd.py" in infos and "requirements.txt" in infos
    assert {f"grader/suites/hidden/{p.name}" for p in HIDDEN_TESTS} <= set(infos)
    assert not [name for name in infos if "__pycache__" in name or name.endswith(".pyc")]
    assert not [name for name in infos if name.startswith("grader/expected/")]  # Gradescope has the reference
    for text in scripts.values():
        subprocess.run(["bash", "-n"], input=text, check=True)  # valid shell
    again = dist.build_gradescope(tmp_path / "again", log=lambda *a: None)
    assert again.read_bytes() == autograder_zip.read_bytes()  # reproducible byte for byte


def test_reference_gets_full_marks_with_hidden_tests(autograder_zip, tmp_path):
    root = unpack(autograder_zip, tmp_path)
    results = run_autograder(root, {"tiny_autograd.py": REFERENCE.read_text(encoding="utf-8")})
    assert results["score"] == results["extra_data"]["max_score"] > 0
    assert results["extra_data"]["suite"] == "all"
    visibilities = {test["visibility"] for test in results["tests"]}
    assert visibilities == ({"visible", "after_published"} if HIDDEN_TESTS else {"visible"})


def test_template_gets_zero_and_says_what_to_fix(autograder_zip, tmp_path):
    root = unpack(autograder_zip, tmp_path)
    results = run_autograder(root, {"tiny_autograd.py": TEMPLATE.read_text(encoding="utf-8")})
    assert results["score"] == 0 and results["tests"]
    assert all(test["status"] == "failed" and "NotImplementedError" in test["output"] for test in results["tests"])


def test_broken_submission_gets_zero_and_the_reason_first(autograder_zip, tmp_path):
    root = unpack(autograder_zip, tmp_path)
    broken = REFERENCE.read_text(encoding="utf-8").replace("def zero_grad(values):", "def zero_grad(values)", 1)
    results = run_autograder(root, {"homework.py": broken})
    assert results["score"] == 0
    first_line = results["output"].splitlines()[0]
    assert "Syntax error" in first_line and "homework.py" in first_line and "line" in first_line


def test_a_grader_that_cannot_run_still_leaves_a_results_file(autograder_zip, tmp_path):
    root = unpack(autograder_zip, tmp_path)
    results = run_autograder(root, {"tiny_autograd.py": "x = 1\n"}, python="/bin/false")
    assert results["score"] == 0 and "autograder itself failed" in results["output"]


@pytest.mark.parametrize("mutant_id", ["add_assigns"])
def test_classroom_reporter_input_sums_to_the_gradescope_score(autograder_zip, tmp_path_factory, mutant_id):
    """The same buggy submission through the Classroom workflow (with the hidden tests
    fetched as an instructor configures them, answered from recordings) and through
    Gradescope (answered by the reference): the same points, test for test."""
    if not HIDDEN_TESTS:
        pytest.skip("the kit has no hidden tests yet")
    work = tmp_path_factory.mktemp("both")
    student = dist.build_student(work / "student", verify=False, log=lambda *a: None)
    hidden = dist.build_hidden(work / "hidden", log=lambda *a: None)
    buggy = mutant_source(MUTANTS_BY_ID[mutant_id])
    (student / "tiny_autograd.py").write_text(buggy, encoding="utf-8")
    runners = run_workflow_grading(student, work, hidden_source=hidden,
                                   secrets={"HIDDEN_TESTS_REPO": "course/hidden-tests", "HIDDEN_TESTS_TOKEN": "t"})
    (classroom,) = runners.values()
    gradescope = run_autograder(unpack(autograder_zip, work), {"tiny_autograd.py": buggy})

    total, maximum = reporter_points(classroom)
    assert 0 < gradescope["score"] < gradescope["extra_data"]["max_score"]
    assert round(total, 2) == gradescope["score"] and abs(total - gradescope["score"]) < 1e-9
    assert maximum == round(gradescope["extra_data"]["max_score"])
    assert {t["name"]: t["status"] == "pass" for t in classroom["tests"]} == {
        t["name"]: t["status"] == "passed" for t in gradescope["tests"]}
    assert not (student / ".hidden-tests").exists()  # the workflow removed the fetched copy
