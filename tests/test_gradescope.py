"""The Gradescope autograder (`make gradescope`): a zip that follows Gradescope's
specification, unpacked here into a folder laid out like /autograder.

Gradescope unpacks the zip into /autograder/source, runs setup.sh once when it
builds the image, copies run_autograder to /autograder/run_autograder, puts the
submission in /autograder/submission and reads /autograder/results/results.json.
AUTOGRADER_ROOT stands in for /autograder and AUTOGRADER_PYTHON for the venv
that setup.sh builds. The base images are emulated by their `python3` first on
PATH (Ubuntu 22.04: 3.10, 24.04: 3.12) with apt-get skipped.
"""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import jsonschema
import pytest

from authoring import dist
from mutants import BY_ID as MUTANTS_BY_ID, mutant_source
from test_dist import reporter_points, run_workflow_grading

pytestmark = pytest.mark.slow  # `make test-fast` leaves it out: it grades many submissions or builds environments

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "grader" / "schemas" / "gradescope.schema.json").read_text(encoding="utf-8"))
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
    env.update(AUTOGRADER_ROOT=str(root), FEEDBACK_LANG="en")
    if python:
        env["AUTOGRADER_PYTHON"] = python
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
    assert "grader/suites/hidden/examples.json" in infos and "grader_failed_results.json" in infos
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


def test_a_grader_that_cannot_run_still_leaves_valid_marked_results(autograder_zip, tmp_path):
    """0 out of the real maximum, valid against the kit's schema, marked for the instructor,
    and a message that claims nothing the kit does not do."""
    root = unpack(autograder_zip, tmp_path)
    results = run_autograder(root, {"tiny_autograd.py": "x = 1\n"}, python="/bin/false")
    jsonschema.Draft202012Validator(SCHEMA).validate(results)
    assert results["score"] == 0 and results["extra_data"]["grader_error"] is True
    assert results["extra_data"]["max_score"] == results["tests"][0]["max_score"] == 100
    assert "autograder itself failed" in results["output"] and "not a grade" in results["output"]
    assert "has been told" not in results["output"] and "自动评分器" in results["output"]


def test_top_level_output_shows_only_the_visible_tests(autograder_zip, tmp_path):
    """Before publication a student sees the visible tests: the top-level output names
    no hidden test and counts no hidden points; the rest shows after publication."""
    root = unpack(autograder_zip, tmp_path)
    buggy = mutant_source(MUTANTS_BY_ID["dual_mul_missing_cross_term"])
    results = run_autograder(root, {"tiny_autograd.py": buggy})
    assert results["output_format"] == "md" and results["test_output_format"] == "text"
    hidden = [t for t in results["tests"] if t["visibility"] == "after_published"]
    visible = [t for t in results["tests"] if t["visibility"] == "visible"]
    assert hidden and visible and any(t["status"] == "failed" for t in hidden)
    output = results["output"]
    visible_score = sum(t["score"] for t in visible)
    visible_max = sum(t["max_score"] for t in visible)
    assert output.startswith(f"**Score {visible_score:g}/{visible_max:g} ")
    assert f"/{results['extra_data']['max_score']:g}" not in output
    assert not [t["name"] for t in hidden if t["name"].split(":")[0] in output]
    assert "publishes the grades" in output


def test_what_a_submission_prints_stays_text(autograder_zip, tmp_path):
    root = unpack(autograder_zip, tmp_path)
    loud = REFERENCE.read_text(encoding="utf-8") + '\nprint("<b>bold</b> ```")\n'
    results = run_autograder(root, {"tiny_autograd.py": loud})
    output = results["output"]
    fence_start = output.index("````text")  # a fence longer than any backtick run printed
    assert "<b>bold</b>" in output[fence_start:] and "<b>" not in output[:fence_start]


def test_a_submission_with_both_files_grades_the_py_and_says_so(autograder_zip, tmp_path):
    """What a Classroom repository or the student bundle holds: the .py and the notebook."""
    root = unpack(autograder_zip, tmp_path)
    results = run_autograder(root, {"tiny_autograd.py": REFERENCE.read_text(encoding="utf-8"),
                                    "tiny_autograd.ipynb": (ROOT / "student_template" / "tiny_autograd.ipynb")
                                    .read_text(encoding="utf-8")})
    assert results["score"] == results["extra_data"]["max_score"] > 0
    assert "ignored tiny\\_autograd.ipynb" in results["output"]


def test_a_zip_built_for_the_notebook_grades_the_notebook(tmp_path):
    archive = dist.build_gradescope(tmp_path / "nb", log=lambda *a: None, submission="tiny_autograd.ipynb")
    root = unpack(archive, tmp_path)
    results = run_autograder(root, {"tiny_autograd.py": REFERENCE.read_text(encoding="utf-8"),
                                    "tiny_autograd.ipynb": (ROOT / "student_template" / "tiny_autograd.ipynb")
                                    .read_text(encoding="utf-8")})
    assert results["score"] == 0, "the unfilled notebook is what is graded"
    assert "ignored tiny\\_autograd.py" in results["output"]


def test_two_candidate_files_ask_for_a_rename_not_a_path(autograder_zip, tmp_path):
    root = unpack(autograder_zip, tmp_path)
    source = REFERENCE.read_text(encoding="utf-8")
    results = run_autograder(root, {"mine.py": source, "helper.py": "x = 1\n"})
    assert results["score"] == 0
    first_line = results["output"].splitlines()[0]
    assert "rename" in first_line and "tiny\\_autograd.py" in first_line and "path" not in first_line


def image_python(version):
    """The interpreter standing in for an Ubuntu image's python3, or skip."""
    found = shutil.which("pyenv")
    if found:
        done = subprocess.run([found, "prefix", version], capture_output=True, text=True)
        candidate = Path(done.stdout.strip()) / "bin" / "python3"
        if done.returncode == 0 and candidate.is_file():
            return candidate
    pytest.skip(f"no Python {version} here to stand in for the image's python3 (pyenv prefix {version})")


def run_setup_with_own_tmp(root, env, leftover):
    """setup.sh, with a /tmp of its own where the machine allows it (a mount namespace,
    as root): what it leaves there is copied to `leftover`. Elsewhere, what it adds
    to the shared /tmp (other programs may add some too)."""
    leftover.mkdir()
    command = ["bash", str(root / "source" / "setup.sh")]
    if shutil.which("unshare") and os.geteuid() == 0:
        script = ('mount -t tmpfs tmpfs /tmp && "$@"; status=$?; cp -a /tmp/. "$LEFTOVER"/; exit $status')
        command = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", *command]
        done = subprocess.run(command, cwd=root, env={**env, "LEFTOVER": str(leftover)}, capture_output=True,
                              text=True, timeout=900)
        if "mount" not in done.stderr[:200]:
            return done, leftover
    before = set(os.listdir("/tmp"))
    done = subprocess.run(["bash", str(root / "source" / "setup.sh")], cwd=root, env=env, capture_output=True,
                          text=True, timeout=900)
    for name in set(os.listdir("/tmp")) - before:
        if os.path.isfile(os.path.join("/tmp", name)):
            shutil.copy(os.path.join("/tmp", name), leftover / name)
    return done, leftover


def _hidden_names_in(folder, entries):
    """Files among `entries` of `folder` (searched through) that name a hidden test."""
    names = [line.split("def ", 1)[1].split("(")[0] for path in HIDDEN_TESTS
             for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("def test_")]
    found = []
    for entry in entries:
        for path in [folder / entry, *((folder / entry).rglob("*") if (folder / entry).is_dir() else ())]:
            try:
                text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
            except OSError:
                continue
            if any(name in text for name in names):
                found.append(path)
    return found


@pytest.fixture
def outside_tmp():
    """A folder outside /tmp (setup.sh gets a /tmp of its own, which would hide tmp_path)."""
    folder = Path(tempfile.mkdtemp(prefix="autograder-test-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("image,version", [("ubuntu-22.04", "3.10"), ("ubuntu-24.04", "3.12"),
                                           ("oldest", "3.9"), ("newest", "3.13")])
def test_setup_builds_the_autograder_with_the_images_python(autograder_zip, outside_tmp, image, version):
    """setup.sh with the image's python3 first on PATH (apt-get skipped): it installs the
    pinned requirements, checks the reference, and leaves nothing of that check behind
    (in its folder or in /tmp); then run_autograder grades with the venv it made."""
    tmp_path = outside_tmp
    python3 = image_python(version)
    root = unpack(autograder_zip, tmp_path)
    shims = tmp_path / "image-bin"
    shims.mkdir()
    (shims / "python3").symlink_to(python3)
    env = {"PATH": f"{shims}:/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"),
           "AUTOGRADER_ROOT": str(root), "AUTOGRADER_SKIP_APT": "1"}
    done, leftover = run_setup_with_own_tmp(root, env, tmp_path / "leftover")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert not _hidden_names_in(leftover, os.listdir(leftover)), \
        "the build left the hidden tests' names in /tmp, where a later submission could read them"
    assert f"Python {version}" in done.stdout and "the autograder is ready" in done.stdout
    venv_version = subprocess.run([str(root / "venv" / "bin" / "python"), "-c",
                                   "import sys; print('%d.%d' % sys.version_info[:2])"],
                                  capture_output=True, text=True, check=True).stdout.strip()
    assert venv_version == version
    assert sorted(p.name for p in root.iterdir()) == ["results", "run_autograder", "source", "submission", "venv"]
    assert not list((root / "results").iterdir()), "the build's check wrote nothing Gradescope would read"
    assert stat.S_IMODE((root / "source").stat().st_mode) & 0o077 == 0
    results = run_autograder(root, {"tiny_autograd.py": REFERENCE.read_text(encoding="utf-8")}, python=None)
    assert results["score"] == results["extra_data"]["max_score"] > 0


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
    assert total == gradescope["score"], "the reporter's double sum is exactly the score"
    assert maximum == round(gradescope["extra_data"]["max_score"])
    # The names are in each platform's feedback language; the test functions are the same.
    assert {t["name"].split(":")[0]: t["status"] == "pass" for t in classroom["tests"]} == {
        t["name"].split(":")[0]: t["status"] == "passed" for t in gradescope["tests"]}
    assert not (student / ".hidden-tests").exists()  # the workflow removed the fetched copy
