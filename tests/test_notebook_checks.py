"""The notebook's check cells (grader/notebook_check.py), in a real kernel and in the student bundle.

* Executed with nbclient and ipykernel, the generated notebook runs top to
  bottom without an error: untouched, every check cell says what is not written
  yet; with the reference's solutions every check passes; with one `_backward`
  mistake the check of that part names the op, with its smallest program and
  graph. The same in a built student bundle, which has no reference and no
  model of the exercise: there the same problems are named (with the failing
  test's own program, as there is nothing to shrink it against).
* A check never hangs on an infinite loop and never raises into the cell; it
  says that it is local feedback, not a grade, in Chinese and English.
* The check cells are inert when the notebook itself is graded.
"""

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from authoring import __main__ as authoring_main
from authoring import dist
from authoring.notebook import CHECK_TAG, EXERCISE_TAG, TRY_IT_TAG, build_notebook, code_body, split_code
from grader.kernel_runner import Interrupted, KernelRunner
from grader.notebook_check import PART_NAMES, PARTS, PRINTED_CAP, check, part_of, problems, run_parts
from grader.notebook_view import render_html, render_text
from grader.plans import load_plan
from mutants import BY_ID as MUTANTS_BY_ID, mutant_source

pytestmark = pytest.mark.slow  # `make test-fast` leaves it out: it grades many submissions or builds environments

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference" / "tiny_autograd.py"
TEMPLATE = ROOT / "student_template" / "tiny_autograd.py"
NOTEBOOK = ROOT / "student_template" / "tiny_autograd.ipynb"
CHINESE = re.compile(r"[\u4e00-\u9fff]")
KERNEL_SECONDS = 120
LOOPING = ("        node, inputs_done = stack.pop()", "        node, inputs_done = stack[-1]")
PUBLIC_TESTS = len(load_plan().tests)


def reference_source():
    return REFERENCE.read_text(encoding="utf-8")


def looping_source():
    """The reference with a topological sort that never ends."""
    source = reference_source()
    assert source.count(LOOPING[0]) == 1
    return source.replace(*LOOPING)


def namespace_of(source):
    namespace = {"__name__": "__main__"}
    exec(compile(source, "cell", "exec"), namespace)
    return namespace


# ------------------------------------------------------------- kernels


def with_code(notebook, source):
    """The notebook with its exercise cells holding `source` (split as the generator splits it)."""
    notebook = nbformat.from_dict(json.loads(json.dumps(notebook)))
    chunks = [code for _, code in split_code(source)]
    exercise = [cell for cell in notebook.cells if EXERCISE_TAG in cell.metadata.get("tags", [])]
    assert len(exercise) == len(chunks)
    for cell, code in zip(exercise, chunks):
        cell.source = code
    return notebook


def execute(notebook, folder, extra_cells=()):
    """Run every cell in a fresh kernel started in `folder`; any cell's error fails the test."""
    notebook = nbformat.from_dict(json.loads(json.dumps(notebook)))
    notebook.cells += [nbformat.v4.new_code_cell(code) for code in extra_cells]
    NotebookClient(notebook, kernel_name="python3", timeout=KERNEL_SECONDS,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return notebook


def check_outputs(notebook):
    """[(cell source, text/plain, text/html)] of the check cells that run a check, in order."""
    found = []
    for cell in notebook.cells:
        if CHECK_TAG in cell.metadata.get("tags", []) and "%check" in cell.source:
            assert [o.output_type for o in cell.outputs] == ["display_data"], cell.outputs
            data = cell.outputs[0]["data"]
            found.append((cell.source, data["text/plain"], data["text/html"]))
    return found


def printed(notebook, index):
    return "".join(o.get("text", "") for o in notebook.cells[index].outputs if o.output_type == "stream")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """A student bundle, copied away from the kit (as a student has it)."""
    built = dist.build_student(tmp_path_factory.mktemp("dist") / "student", verify=False, log=lambda *a: None)
    clone = tmp_path_factory.mktemp("clone") / "repository"
    shutil.copytree(built, clone)
    return clone


@pytest.fixture(scope="module")
def kit_mutant_run():
    notebook = with_code(nbformat.read(NOTEBOOK, as_version=4), mutant_source(MUTANTS_BY_ID["mul_not_crossing"]))
    return execute(notebook, NOTEBOOK.parent)


def assert_local_feedback_note(text):
    assert "not an official grade" in text and "不是正式成绩" in text


def test_untouched_notebook_says_what_is_missing_in_every_check_cell():
    executed = execute(nbformat.read(NOTEBOOK, as_version=4), NOTEBOOK.parent)
    outputs = check_outputs(executed)
    assert [source.split()[-1] for source, _, _ in outputs] == [*PART_NAMES, "%check_all"]
    for source, text, html in outputs:
        assert "is still to be written (NotImplementedError)" in text and "还没有写" in text, source
        assert re.search(r": 0 of \d+ public tests pass", text), text
        assert_local_feedback_note(text)
        assert "not an official grade" in html
    assert "How to submit" in outputs[-1][1] and "怎样提交" in outputs[-1][1]


def test_notebook_with_the_reference_passes_every_check():
    executed = execute(build_notebook(reference_source()), NOTEBOOK.parent)
    outputs = check_outputs(executed)
    assert len(outputs) == len(PARTS) + 1
    for source, text, _ in outputs:
        total = re.search(r"(\d+) of (\d+) public tests pass", text)
        assert text.startswith("\u2713") and total and total.group(1) == total.group(2) != "0", text
        assert "still to be written" not in text
    assert f"{PUBLIC_TESTS} of {PUBLIC_TESTS}" in outputs[-1][1]


def test_one_backward_mistake_is_named_by_the_check_of_its_part(kit_mutant_run):
    """`*` sends each input its own value: the ops check blames `*`, shows the
    smallest program and draws its graph."""
    source, text, html = check_outputs(kit_mutant_run)[0]
    assert source.endswith("%check ops")
    passing, total = map(int, re.search(r"(\d+) of (\d+) public tests pass", text).groups())
    assert passing < total
    problems_shown = re.findall(r"^\d+\. (.*)$", text, flags=re.M)
    assert problems_shown[0].startswith("`*`") and problems_shown[1].startswith("`*`"), text
    assert "Smallest program that shows it" in text and "能重现这个问题的最小程序" in text
    assert "n1 = n0 * 0.5" in text and "from tiny_autograd" not in text
    assert "<svg" in html and "&#96;" not in html


def test_a_check_stops_an_infinite_loop_and_the_notebook_goes_on():
    """(The try-it cells call backward() directly, so they would hang: they are left out.)"""
    notebook = build_notebook(looping_source())
    notebook.cells = [c for c in notebook.cells if TRY_IT_TAG not in c.metadata.get("tags", [])]
    started = time.monotonic()
    executed = execute(notebook, NOTEBOOK.parent)
    assert time.monotonic() - started < KERNEL_SECONDS
    outputs = check_outputs(executed)
    assert all("timed out after 2 s in `Value.backward()`" in text for _, text, _ in outputs[:3])
    assert "2 秒后超时（卡在 `Value.backward()`）" in outputs[0][1]


def test_without_the_grader_the_setup_cell_says_how_to_get_it():
    """Only the setup cell runs (with no grader importable): it prints where to
    get the grader instead of raising."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    setup = next(i for i, c in enumerate(notebook.cells) if CHECK_TAG in c.metadata.get("tags", []))
    notebook.cells = [nbformat.v4.new_code_cell("import sys\nsys.modules['grader'] = None")] + notebook.cells[:setup + 1]
    executed = execute(notebook, NOTEBOOK.parent)
    text = printed(executed, len(executed.cells) - 1)
    assert "The grader (the folder grader/) was not found" in text and "找不到评分器" in text


# ------------------------------------------------------------- bundle


def bundle_notebook(bundle, source=None):
    notebook = nbformat.read(bundle / "tiny_autograd.ipynb", as_version=4)
    return with_code(notebook, source) if source is not None else notebook


def test_bundle_notebook_untouched_and_with_the_reference(bundle):
    """In the bundle (no reference, recorded outcomes), from its own grader folder."""
    untouched = execute(bundle_notebook(bundle), bundle, ["import grader; print(grader.__file__)"])
    assert Path(printed(untouched, len(untouched.cells) - 1).strip()).is_relative_to(bundle)
    for source, text, _ in check_outputs(untouched):
        assert "is still to be written" in text and "还没有写" in text, source
    solved = execute(bundle_notebook(bundle, reference_source()), bundle)
    for source, text, _ in check_outputs(solved):
        assert text.startswith("\u2713") and "not in this copy of the grader" not in text, text


def test_bundle_notebook_names_the_mistake_exactly_as_the_kit_does(bundle, kit_mutant_run):
    """The same problems, in the same order, with the same hints."""
    executed = execute(bundle_notebook(bundle, mutant_source(MUTANTS_BY_ID["mul_not_crossing"])), bundle)

    def named(outputs):
        return [re.findall(r"^(?:\d+\. .*|   (?:提示|Hint)[:：].*)$", text, flags=re.M) for _, text, _ in outputs]

    assert named(check_outputs(executed)) == named(check_outputs(kit_mutant_run))
    assert any(named(check_outputs(executed)))


def test_bundle_ships_a_plan_its_recording_covers(bundle):
    plan = load_plan(bundle / "grader" / "suites" / "public" / "plan.json")
    assert plan.tests and (bundle / "grader" / "expected" / "public.json").is_file()
    assert (bundle / "grader" / "suites" / "public" / "plan.json").read_text(encoding="utf-8") == \
        (ROOT / "grader" / "suites" / "public" / "plan.json").read_text(encoding="utf-8")


def test_bundle_notebook_and_readme_hold_the_colab_cell_with_the_repository(tmp_path):
    url = "https://github.com/some-course/tiny-autograd-2025"
    built = dist.build_student(tmp_path / "student", verify=False, log=lambda *a: None, repository=url)
    intro = nbformat.read(built / "tiny_autograd.ipynb", as_version=4).cells[0].source
    readme = (built / "README.md").read_text(encoding="utf-8")
    for text in (intro, readme):
        assert f"!git clone --depth 1 -q {url} /content/course" in text
        assert 'sys.path.insert(0, "/content/course")' in text


# ------------------------------------------------------------- in this process


def test_every_public_test_is_in_exactly_one_part_and_every_part_has_tests():
    plan = load_plan()
    assert {part_of(test) for test in plan.tests} == set(PART_NAMES)
    assert None not in {part_of(test) for test in plan.tests}
    named = [name for part in PARTS for name in part.tests]
    assert set(named) <= {test.name for test in plan.tests}, "a part names a test the public suite lacks"


def test_the_generated_notebook_checks_every_part_after_its_cells_in_order():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    checks = [c.source.split()[-1] for c in notebook.cells
              if CHECK_TAG in c.metadata.get("tags", []) and "%check" in c.source]
    assert checks == [*PART_NAMES, "%check_all"]
    assert notebook.cells[-1].source.endswith("%check_all")


def test_a_failure_is_never_raised_into_the_cell(capsys):
    """Nothing defined, a constructor that raises something odd, an unknown part:
    each is a message."""
    check("ops", namespace={"__name__": "__main__"})
    out = capsys.readouterr().out
    assert "Not defined in this kernel yet: `Value`" in out and "还没有定义 `Value`" in out

    class Odd(BaseException):
        pass

    def broken(*args):
        raise Odd("<script>alert(1)</script>")

    namespace = namespace_of(reference_source())
    namespace["Value"] = broken
    report = run_parts(["ops"], namespace)
    assert report.parts[0].failed and not report.ok
    assert "<script>" not in render_html(report)
    check("nothing", namespace=namespace)
    assert "There is no part 'nothing'" in capsys.readouterr().out


def test_what_the_code_prints_is_kept_apart_and_capped():
    namespace = namespace_of(reference_source())
    real = namespace["zero_grad"]

    def chatty(values):
        print("zeroing " * 1000)
        real(values)

    namespace["zero_grad"] = chatty
    report = run_parts(["zero_grad"], namespace)
    assert report.ok and report.printed.startswith("zeroing zeroing") and len(report.printed) == PRINTED_CAP
    html = render_html(report)
    assert "<details>" in html and html.count("zeroing") < 1000


def test_an_error_names_the_function_and_the_line_of_its_cell():
    source = reference_source().replace("self.grad += (1.0 - t * t) * out.grad",
                                        "self.grad += (1.0 - t * t) * out.grad / 0", 1)
    (problem,) = run_parts(["ops"], namespace_of(source)).problems
    assert problem["op"] == "Value.tanh" and problem["summary"]["en"] == "`Value.tanh` raises ZeroDivisionError"
    assert "raised ZeroDivisionError" in problem["symptom"]["en"] and "(in _backward, line " in problem["symptom"]["en"]
    assert "of its cell" in problem["symptom"]["en"] and "所在单元格的第" in problem["symptom"]["zh"]


def test_check_reads_the_callers_globals(capsys):
    namespace = namespace_of(reference_source())
    namespace["check"] = check
    exec("check('zero_grad')", namespace)
    out = capsys.readouterr().out
    tests = len([t for t in load_plan().tests if part_of(t) == "zero_grad"])
    assert out.startswith("\u2713 本地检查 zero_grad") and f"{tests} of {tests} public tests pass" in out


def test_problems_are_the_mistakes_not_the_failed_tests():
    """Two mistakes in two ops are two problems, each with every test it fails; a
    missing body is a problem of its own, named by its function."""
    source = mutant_source(MUTANTS_BY_ID["tanh_uses_input"])
    source = MUTANTS_BY_ID["relu_tests_output_not_below_zero"].apply(source)
    report = run_parts(["ops"], namespace_of(source))
    assert {(p["id"], p["op"]) for p in report.problems} == {("tanh-uses-input", "tanh"),
                                                             ("relu-always-passes", "relu")}
    failed = sorted(test.nodeid for result in report.parts for test, _ in result.failed)
    assert sorted(nodeid for p in report.problems for nodeid in p["tests"]) == failed
    assert all(CHINESE.search(p["summary"]["zh"]) and p["nudge"] for p in report.problems)
    template = run_parts(["ops"], namespace_of(TEMPLATE.read_text(encoding="utf-8")))
    assert [(p["id"], p["op"]) for p in template.problems][0] == ("implemented", "Value.backward")
    assert problems([]) == []


def test_output_is_deterministic():
    namespace = namespace_of(mutant_source(MUTANTS_BY_ID["mul_not_crossing"]))
    first = run_parts(PART_NAMES, namespace, whole_suite=True)
    again = run_parts(PART_NAMES, namespace_of(mutant_source(MUTANTS_BY_ID["mul_not_crossing"])), whole_suite=True)
    assert render_html(first) == render_html(again) and render_text(first) == render_text(again)


def test_checks_need_neither_pytest_nor_nbformat_nor_ipython(tmp_path):
    """What a Colab kernel with only the bundle's grader/ folder has: the checks run
    there (the result printed as text when IPython is missing)."""
    script = (
        "import sys\n"
        "for name in ('pytest', '_pytest', 'pytest_jsonreport', 'nbformat', 'hypothesis', 'IPython'):\n"
        "    sys.modules[name] = None\n"
        "from grader.notebook_check import check_all\n"
        "namespace = {'__name__': '__main__'}\n"
        f"exec(open({str(REFERENCE)!r}, encoding='utf-8').read(), namespace)\n"
        "check_all(namespace=namespace)\n"
    )
    done = subprocess.run([sys.executable, "-X", "utf8", "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, encoding="utf-8", timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("\u2713 本地检查 全部公开测试")
    assert f"{PUBLIC_TESTS} of {PUBLIC_TESTS} public tests pass" in done.stdout


# ------------------------------------------------------------- the time limit


LOOP_STEPS = [["value", 2.0], ["op", "*", "n0", "n0"], ["backward", "n1"], ["read"]]


@pytest.mark.parametrize("by_signal", [True, False], ids=["signal", "trace"])
def test_an_infinite_loop_times_out_and_leaves_nothing_armed(by_signal):
    if by_signal and not hasattr(signal, "setitimer"):
        pytest.skip("no setitimer on this system")
    runner = KernelRunner(namespace_of(looping_source()), call_seconds=0.2)
    runner.by_signal = by_signal
    trace_before, handler_before = sys.gettrace(), signal.getsignal(signal.SIGALRM) if by_signal else None
    for _ in range(4):
        started = time.monotonic()
        reply = runner.run(LOOP_STEPS)
        assert time.monotonic() - started < 2
        assert reply.failure.startswith(("timed out after", "not run: `Value.backward()` did not return")), reply
    assert sys.gettrace() is trace_before
    if by_signal:
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        assert signal.getsignal(signal.SIGALRM) is handler_before
    ok = KernelRunner(namespace_of(reference_source()))
    ok.by_signal = by_signal
    assert ok.run(LOOP_STEPS).outcome["ok"]


def test_a_loop_that_catches_exception_still_times_out():
    source = reference_source().replace(
        "    order = []\n", "    order = []\n    while True:\n        try:\n            order.clear()\n"
        "        except Exception:\n            pass\n", 1)
    reply = KernelRunner(namespace_of(source), call_seconds=0.2).run(LOOP_STEPS)
    assert reply.failure.startswith("timed out after 0.2 s in `Value.backward()`")


def test_the_stop_button_stops_the_check_with_a_message():
    namespace = namespace_of(reference_source())

    def interrupt(*args):
        raise KeyboardInterrupt

    namespace["zero_grad"] = interrupt
    with pytest.raises(Interrupted):
        KernelRunner(namespace).run([["value", 1.0], ["zero_grad", ["n0"]], ["read"]])
    report = run_parts(["zero_grad"], namespace)
    assert report.stopped == {"en": "The check was interrupted.", "zh": "检查被中断了。"}


# ------------------------------------------------------------- grading and preview


def test_the_check_cells_are_inert_when_the_notebook_is_graded(tmp_path, grade_submission):
    """Graded, the notebook with the reference's solutions gets full marks and no
    note about an unavailable `grader`: its magics are never run."""
    path = tmp_path / "tiny_autograd.ipynb"
    path.write_text(nbformat.writes(build_notebook(reference_source())), encoding="utf-8")
    result = grade_submission(path, suite="public")
    assert result.problem is None and result.score == result.max_score > 0
    assert not [note for note in result.notes if "grader" in note["en"]]


def test_preview_writes_the_reference_notebook(tmp_path):
    out = tmp_path / "preview.ipynb"
    assert authoring_main.main(["--preview", str(out)]) == 0
    notebook = nbformat.read(out, as_version=4)
    code = "\n\n\n".join(c.source for c in notebook.cells if EXERCISE_TAG in c.metadata.get("tags", []))
    assert code == code_body(reference_source()) and "BEGIN SOLUTION" in code
    assert "do not hand it out" in notebook.cells[1].source
