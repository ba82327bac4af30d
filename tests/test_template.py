"""The student files are generated from the reference and are what the exercise promises.

* student_template/tiny_autograd.py and .ipynb are up to date with the reference;
* the template raises NotImplementedError exactly in the graded bodies, each with
  its own hint, and everything outside the solution markers is kept verbatim;
* the notebook holds exactly the template's code and runs top to bottom, both as
  shipped (its try-it cells say "not done yet") and with the reference
  substituted (its try-it cells print two agreeing directional derivatives);
  its check cells, IPython magics, are tested in a kernel by
  tests/test_notebook_checks.py.
"""

import ast
import importlib.util
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from authoring import __main__ as authoring_main
from authoring.notebook import CHECK_TAG, EXERCISE_TAG, TRY_IT_TAG, build_notebook, code_body

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "reference" / "tiny_autograd.py"
TEMPLATE = ROOT / "student_template" / "tiny_autograd.py"
NOTEBOOK = ROOT / "student_template" / "tiny_autograd.ipynb"

# The marker convention, read here independently of authoring/markers.py.
BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN SOLUTION(?::\s*(?P<hint>.*?))?\s*$")
END = re.compile(r"^[ \t]*# END SOLUTION\s*$")
STUB = re.compile(r"^(?P<indent>[ \t]*)raise NotImplementedError\((?P<message>.*)\)\s*$")


def reference_source():
    return REFERENCE.read_text(encoding="utf-8")


def template_source():
    return TEMPLATE.read_text(encoding="utf-8")


def reference_hints():
    return [m.group("hint") or "" for line in reference_source().splitlines() if (m := BEGIN.match(line))]


@pytest.fixture(scope="module")
def template():
    """The committed student template, imported from its path."""
    spec = importlib.util.spec_from_file_location("student_template_tiny_autograd", TEMPLATE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference():
    spec = importlib.util.spec_from_file_location("reference_for_template_tests", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ----------------------------------------------------------------------
# (a) the committed files are what `make template` writes
# ----------------------------------------------------------------------


def test_make_check_template_passes():
    """`python -m authoring --check` exits 0: the committed student files are not stale."""
    result = subprocess.run(
        [sys.executable, "-m", "authoring", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_committed_student_files_equal_the_generated_ones_byte_for_byte():
    """(The frozen examples are compared in tests/test_frozen_examples.py.)"""
    for path, text in authoring_main.student_files().items():
        assert path.read_bytes() == text.encode("utf-8"), f"{path.relative_to(ROOT)} is stale: run `make template`"


def test_check_fails_when_a_student_file_is_stale_or_missing(tmp_path, monkeypatch, capsys):
    """--check really compares: on a copy of the kit it exits 1 and names the file once a
    generated file differs or is gone, and 0 again after regenerating."""
    (tmp_path / "reference").mkdir()
    shutil.copy(REFERENCE, tmp_path / "reference" / "tiny_autograd.py")
    shutil.copytree(ROOT / "student_template", tmp_path / "student_template")
    monkeypatch.setattr(authoring_main, "ROOT", tmp_path)
    monkeypatch.setattr(authoring_main, "REFERENCE", tmp_path / "reference" / "tiny_autograd.py")
    monkeypatch.setattr(authoring_main, "TEMPLATE_DIR", tmp_path / "student_template")
    assert authoring_main.main(["--check"]) == 0

    stale = tmp_path / "student_template" / "tiny_autograd.py"
    stale.write_text(stale.read_text(encoding="utf-8") + "# edited by hand\n", encoding="utf-8")
    (tmp_path / "student_template" / "tiny_autograd.ipynb").unlink()
    capsys.readouterr()
    assert authoring_main.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "tiny_autograd.py" in err and "tiny_autograd.ipynb" in err

    assert authoring_main.main([]) == 0
    assert authoring_main.main(["--check"]) == 0


# ----------------------------------------------------------------------
# (b) NotImplementedError exactly in the stubbed bodies
# ----------------------------------------------------------------------


def test_template_has_one_stub_per_solution_block_and_the_reference_has_none():
    """As many `raise NotImplementedError` in the template as BEGIN/END SOLUTION pairs in the reference."""
    hints = reference_hints()
    ends = [line for line in reference_source().splitlines() if END.match(line)]

    def stubs(source):
        return [
            node
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Raise)
            and isinstance(node.exc, ast.Call)
            and getattr(node.exc.func, "id", None) == "NotImplementedError"
        ]

    assert len(hints) == len(ends) > 0
    assert len(stubs(template_source())) == len(hints)
    assert stubs(reference_source()) == []


def test_template_has_no_solution_markers_left():
    assert "BEGIN SOLUTION" not in template_source()
    assert "END SOLUTION" not in template_source()


# Each call reaches exactly one stubbed body, in the order of the reference's blocks.
STUBBED_BODIES = [
    ("Value.__add__ backward", lambda t: (t.Value(1.0) + t.Value(2.0))._backward()),
    ("Value.__mul__ backward", lambda t: (t.Value(1.0) * t.Value(2.0))._backward()),
    ("Value.__pow__ backward", lambda t: (t.Value(2.0) ** 3)._backward()),
    ("Value.exp backward", lambda t: t.Value(1.0).exp()._backward()),
    ("Value.log backward", lambda t: t.Value(2.0).log()._backward()),
    ("Value.tanh backward", lambda t: t.Value(0.5).tanh()._backward()),
    ("Value.relu backward", lambda t: t.Value(0.5).relu()._backward()),
    ("Value.backward", lambda t: (t.Value(1.0) + 2.0).backward()),
    ("_topological_order", lambda t: t._topological_order(t.Value(1.0))),
    ("zero_grad", lambda t: t.zero_grad([t.Value(1.0)])),
    ("Dual.__add__", lambda t: t.Dual(1.0, 1.0) + t.Dual(2.0, 0.0)),
    ("Dual.__mul__", lambda t: t.Dual(1.0, 1.0) * t.Dual(2.0, 0.0)),
    ("Dual.exp", lambda t: t.Dual(1.0, 1.0).exp()),
    ("Dual.tanh", lambda t: t.Dual(1.0, 1.0).tanh()),
]


@pytest.mark.parametrize("index", range(len(STUBBED_BODIES)), ids=[name for name, _ in STUBBED_BODIES])
def test_each_stubbed_body_raises_not_implemented_with_its_own_hint(template, index):
    _, call = STUBBED_BODIES[index]
    with pytest.raises(NotImplementedError) as error:
        call(template)
    assert str(error.value) == "TODO: " + reference_hints()[index]


def test_every_solution_block_is_reached_by_exactly_one_stubbed_call():
    """The list above covers every block: one call per BEGIN SOLUTION, no block left untested."""
    assert len(STUBBED_BODIES) == len(reference_hints())
    assert len(set(reference_hints())) == len(reference_hints()), "two blocks share a hint"


FORWARD_OPS = {
    "x + y": lambda x, y: x + y,
    "x * y": lambda x, y: x * y,
    "x ** 2": lambda x, y: x**2,
    "x ** -1": lambda x, y: x**-1,
    "x ** 0.5": lambda x, y: x**0.5,
    "exp(x)": lambda x, y: x.exp(),
    "log(x)": lambda x, y: x.log(),
    "tanh(x)": lambda x, y: x.tanh(),
    "relu(x)": lambda x, y: x.relu(),
    "relu(-x)": lambda x, y: (-x).relu(),
    "-x": lambda x, y: -x,
    "x - y": lambda x, y: x - y,
    "x / y": lambda x, y: x / y,
    "x + 3": lambda x, y: x + 3,
    "3 + x": lambda x, y: 3 + x,
    "x * 3": lambda x, y: x * 3,
    "3 * x": lambda x, y: 3 * x,
    "x - 3": lambda x, y: x - 3,
    "3 - x": lambda x, y: 3 - x,
    "x / 3": lambda x, y: x / 3,
    "3 / x": lambda x, y: 3 / x,
    "chain": lambda x, y: ((x * y + 1.5) / (y - x) - x.tanh() ** 2).exp(),
}


@pytest.mark.parametrize("name", FORWARD_OPS)
def test_template_forward_and_derived_ops_work_and_match_the_reference(template, reference, name):
    """Forward values and derived ops are given code: they run in the template without raising."""
    op = FORWARD_OPS[name]
    out = op(template.Value(1.25), template.Value(-0.5))
    expected = op(reference.Value(1.25), reference.Value(-0.5))
    assert isinstance(out, template.Value)
    assert out.data == expected.data
    assert out.grad == 0.0


def test_template_values_and_duals_construct_without_raising(template):
    x = template.Value(3)
    assert (x.data, x.grad, x._parents) == (3.0, 0.0, ())
    assert repr(x) == "Value(data=3, grad=0)"
    d = template.Dual(2.0, 0.5)
    assert (d.val, d.der) == (2.0, 0.5)
    assert template.Dual(2.0).der == 0.0
    assert repr(d) == "Dual(val=2, der=0.5)"
    lifted = template.Dual._lift(4)
    assert (lifted.val, lifted.der) == (4.0, 0.0)


def test_template_keeps_the_clear_errors(template):
    with pytest.raises(TypeError, match="'abc'"):
        template.Value("abc")
    with pytest.raises(TypeError):
        template.Value(2.0) ** template.Value(3.0)
    with pytest.raises(ValueError, match="-1.0"):
        template.Value(-1.0).log()


# ----------------------------------------------------------------------
# (c) everything outside the markers is kept verbatim
# ----------------------------------------------------------------------


def test_template_outside_the_stubs_is_the_reference_outside_its_solutions():
    """Replace each solution block (reference) and each stub line (template) by the same
    placeholder carrying indent and hint: the two files must then be identical, line for line."""
    reference_lines, inside = [], False
    for line in reference_source().split("\n"):
        if (begin := BEGIN.match(line)) is not None:
            reference_lines.append(f"{begin.group('indent')}<solution: {begin.group('hint') or ''}>")
            inside = True
        elif END.match(line):
            inside = False
        elif not inside:
            reference_lines.append(line)

    template_lines = []
    for line in template_source().split("\n"):
        stub = STUB.match(line)
        if stub is not None:
            message = ast.literal_eval(stub.group("message"))
            assert message.startswith("TODO: ")
            line = f"{stub.group('indent')}<solution: {message[len('TODO: '):]}>"
        template_lines.append(line)

    assert template_lines == reference_lines


# ----------------------------------------------------------------------
# (d) the notebook
# ----------------------------------------------------------------------


def code_cells(notebook, tag=None):
    return [
        cell
        for cell in notebook.cells
        if cell.cell_type == "code" and (tag is None or tag in cell.metadata.get("tags", []))
    ]


def python_cells(notebook):
    """The code cells plain Python runs: all but the check cells (IPython magics)."""
    return [cell for cell in code_cells(notebook) if CHECK_TAG not in cell.metadata.get("tags", [])]


def run_cells(cells, tmp_path):
    """Run the code cells in order, in one fresh interpreter; returns (exit code, output of each cell)."""
    separator = "=== cell boundary ==="
    code = "\n\n".join(f"print({separator!r})\n{cell.source}" for cell in cells)
    result = subprocess.run(
        [sys.executable, "-X", "utf8", "-c", code], cwd=tmp_path, capture_output=True, timeout=120
    )
    stdout = result.stdout.decode("utf-8")
    outputs = stdout.split(separator + "\n")[1:]
    return result.returncode, outputs, result.stderr.decode("utf-8")


def test_notebook_is_valid_nbformat():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    assert notebook.nbformat == 4


def test_notebook_is_committed_without_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    for cell in code_cells(notebook):
        assert cell.outputs == [] and cell.execution_count is None


def test_notebook_exercise_cells_hold_exactly_the_template_code():
    """Joined, the "exercise" cells are code_body(template), and line for line (blank lines aside)
    they are the template after its module docstring: no code lost, none added."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    exercise = [cell.source for cell in code_cells(notebook, EXERCISE_TAG)]
    assert "\n\n\n".join(exercise) == code_body(template_source())

    tree = ast.parse(template_source())
    docstring_end = tree.body[0].end_lineno
    template_code = [line for line in template_source().splitlines()[docstring_end:] if line.strip()]
    notebook_code = [line for source in exercise for line in source.splitlines() if line.strip()]
    assert notebook_code == template_code


def test_notebook_code_cells_are_exercise_try_it_or_check_cells():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    for cell in code_cells(notebook):
        tags = cell.metadata.get("tags", [])
        assert [tag in tags for tag in (EXERCISE_TAG, TRY_IT_TAG, CHECK_TAG)].count(True) == 1, cell.source[:80]
    assert len(code_cells(notebook, TRY_IT_TAG)) == 2
    magics = [[line.strip() for line in cell.source.splitlines() if line.lstrip().startswith("%")]
              for cell in code_cells(notebook, CHECK_TAG)]
    assert magics == [["%load_ext grader.notebook_check"], ["%check ops"], ["%check backward"],
                      ["%check zero_grad"], ["%check Dual"], ["%check_all"]]


def test_notebook_runs_top_to_bottom_and_try_it_cells_say_not_done_yet(tmp_path):
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    cells = python_cells(notebook)
    returncode, outputs, stderr = run_cells(cells, tmp_path)
    assert returncode == 0, stderr
    assert len(outputs) == len(cells)
    for cell, output in zip(cells, outputs):
        if TRY_IT_TAG in cell.metadata.get("tags", []):
            assert "not done yet" in output and "TODO: " in output, output
        else:
            assert output == "", f"an exercise cell printed {output!r}"


# ----------------------------------------------------------------------
# (e) the same notebook, built from the reference, runs and the two modes agree
# ----------------------------------------------------------------------


@pytest.mark.parametrize("source", [template_source, reference_source], ids=["template", "reference"])
def test_no_exercise_cell_starts_indented(source):
    """IPython dedents a cell whose first line is indented (an old one dedents every
    line that starts the same way), which breaks the code below it."""
    for cell in code_cells(build_notebook(source()), EXERCISE_TAG):
        assert not cell.source[:1].isspace(), cell.source[:80]


def test_notebook_built_from_the_reference_runs_and_both_modes_agree(tmp_path):
    """With the solutions in place, the try-it cells print the gradient of
    f(x, y) = x·y + tanh(x) at (2, 3), and forward and reverse mode give the same ∇f·(1, 0.5)."""
    notebook = build_notebook(reference_source())
    cells = python_cells(notebook)
    returncode, outputs, stderr = run_cells(cells, tmp_path)
    assert returncode == 0, stderr
    printed = "".join(outputs)
    assert "not done yet" not in printed

    number = r"(-?\d+(?:\.\d+)?(?:e-?\d+)?)"
    dz_dx = 3.0 + 1.0 - math.tanh(2.0) ** 2
    reverse = re.search(rf"dz/dx = {number}\s+dz/dy = {number}\s+nodes: (\d+)", printed)
    assert reverse, printed
    assert float(reverse.group(1)) == pytest.approx(dz_dx, rel=1e-12)
    assert float(reverse.group(2)) == pytest.approx(2.0, rel=1e-12)
    assert int(reverse.group(3)) == 5  # x, y, x*y, tanh(x), the sum

    forward = re.search(rf"forward:\s+∇f·v = {number}", printed)
    backward = re.search(rf"reverse:\s+∇f·v = {number}", printed)
    assert forward and backward, printed
    expected = dz_dx * 1.0 + 2.0 * 0.5
    assert float(forward.group(1)) == pytest.approx(expected, rel=1e-12)
    assert float(backward.group(1)) == pytest.approx(float(forward.group(1)), rel=1e-12)
