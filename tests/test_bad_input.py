"""Whatever a student hands in, grading ends in a valid result whose first line
says what is wrong and where (file and line; for notebooks, cell and line).

Nothing here needs the hidden tests, so most cases grade the public suite.
"""

import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader import results, sandbox
from grader.worker_client import Limits
from mutants import REFERENCE

REFERENCE_SOURCE = REFERENCE.read_text(encoding="utf-8")
REFERENCE_LINES = REFERENCE_SOURCE.count("\n")


def first_line(result, lang="en"):
    """The first line of the feedback, as text (the Gradescope output is the same, in Markdown)."""
    return (result.first_line(lang) + "\n" + "\n".join(n[lang] for n in result.notes)).splitlines()[0]


def assert_nothing_graded(result, *needles):
    """Score 0, every test failed with the problem, and the first line names it."""
    line = first_line(result)
    for needle in needles:
        assert needle in line, f"{needle!r} not in the first line: {line!r}"
    assert result.problem is not None
    assert result.tests and result.score == 0
    assert all(not t.passed for t in result.tests)
    classroom = results.classroom(result, "en")
    assert classroom["status"] == "error" and classroom["tests"]
    assert first_line(result, "zh") != line, "the problem is told in Chinese too"


def write(path, content):
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def notebook(*code_cells, intro="# 作业 / Homework"):
    """A notebook: one markdown cell, then the given code cells (cell 2, 3, ...)."""
    nb = new_notebook(cells=[new_markdown_cell(intro)] + [new_code_cell(code) for code in code_cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nbformat.writes(nb)


# ---------------------------------------------------------------- unreadable files


@pytest.mark.parametrize(
    "content, needle",
    [
        ("", "empty"),
        ("\n   \n\t\n", "empty"),
        (bytes(range(256)) * 8, "binary"),
        (b"x = 1\n# caf\xe9 au lait\n", "UTF-8"),
    ],
    ids=["empty", "blank", "binary", "latin-1"],
)
def test_unreadable_file_is_named_with_the_reason(content, needle, tmp_path, grade_submission):
    path = write(tmp_path / "my_autograd.py", content)
    assert_nothing_graded(grade_submission(path, suite="public"), "my_autograd.py", needle)


def test_missing_path_is_reported(tmp_path, grade_submission):
    assert_nothing_graded(grade_submission(tmp_path / "nowhere.py", suite="public"), "nowhere.py")


def test_syntax_error_gives_file_and_line(tmp_path, grade_submission):
    lines = REFERENCE_SOURCE.splitlines()
    line = lines.index("import math") + 2  # just below the import
    lines.insert(line - 1, "def broken(:")
    path = write(tmp_path / "homework3.py", "\n".join(lines) + "\n")
    assert_nothing_graded(grade_submission(path, suite="public"), "Syntax error", f"homework3.py, line {line}")


def test_syntax_error_in_notebook_gives_cell_and_line(tmp_path, grade_submission):
    path = write(tmp_path / "tiny_autograd.ipynb", notebook(REFERENCE_SOURCE, "x = 1\ny = 2\nif x >\n"))
    result = grade_submission(path, suite="public")
    assert_nothing_graded(result, "tiny_autograd.ipynb, cell 3, line 3")
    assert "第 3 个单元格第 3 行" in first_line(result, "zh")


# ------------------------------------------------------------- loads, but not fully


@pytest.mark.parametrize("name", ["Value", "Dual", "zero_grad"])
def test_missing_name_is_named(name, tmp_path, grade_submission):
    path = write(tmp_path / "tiny_autograd.py", REFERENCE_SOURCE + f"\ndel {name}\n")
    result = grade_submission(path, suite="public")
    output = results.gradescope(result, "en")["output"]
    assert f"`{name}`" in output
    assert result.score < result.max_score
    failed = [t for t in result.tests if not t.passed]
    assert failed and all(name in t.message("en") for t in failed)
    if name == "Dual":
        earned, possible = result.categories()["gradients"]
        assert earned == possible, "a missing Dual costs only the tests that use Dual"


def test_missing_everything_scores_zero(tmp_path, grade_submission):
    path = write(tmp_path / "tiny_autograd.py", "import math\n\nANSWER = 42\n")
    result = grade_submission(path, suite="public")
    assert result.score == 0
    output = results.gradescope(result, "en")["output"]
    assert all(f"`{name}`" in output for name in ("Value", "Dual", "zero_grad"))


# ------------------------------------------------------------- fails while loading


def test_exception_at_import_gives_message_and_line(tmp_path, grade_submission):
    source = REFERENCE_SOURCE + "\n\ndef check():\n    return 1 / 0\n\n\ncheck()\n"
    path = write(tmp_path / "tiny_autograd.py", source)
    line = REFERENCE_LINES + 4  # the line of `1 / 0`
    assert_nothing_graded(grade_submission(path, suite="public"),
                          "ZeroDivisionError", "division by zero", f"tiny_autograd.py, line {line}")


def test_exception_at_import_in_notebook_gives_cell_and_line(tmp_path, grade_submission):
    path = write(tmp_path / "hw.ipynb", notebook(REFERENCE_SOURCE, "print('hi')\nraise RuntimeError('not ready')\n"))
    assert_nothing_graded(grade_submission(path, suite="public"),
                          "RuntimeError", "not ready", "hw.ipynb, cell 3, line 2")


@pytest.mark.parametrize("code", ["import sys\nsys.exit(3)\n", "raise SystemExit('bye')\n", "import os\nos._exit(0)\n"])
def test_exit_at_import_is_a_load_failure(code, tmp_path, grade_submission):
    path = write(tmp_path / "tiny_autograd.py", REFERENCE_SOURCE + "\n" + code)
    result = grade_submission(path, suite="public")
    assert_nothing_graded(result, "tiny_autograd.py")
    assert "exit" in first_line(result).lower()


def test_infinite_loop_at_import_times_out(tmp_path, grade_submission):
    path = write(tmp_path / "tiny_autograd.py", REFERENCE_SOURCE + "\nwhile True:\n    pass\n")
    limits = Limits(load_seconds=2.0, budget_seconds=20.0)
    result = grade_submission(path, suite="public", limits=limits)
    assert_nothing_graded(result, "tiny_autograd.py", "timed out")
    # Loading is tried once, not once per test (a loose bound: no timing test).
    assert result.execution_time < 5 * limits.budget_seconds


# ---------------------------------------------------------------------- notebooks


def test_malformed_json_notebook(tmp_path, grade_submission):
    text = notebook(REFERENCE_SOURCE)
    path = write(tmp_path / "tiny_autograd.ipynb", text[: len(text) // 2])
    assert_nothing_graded(grade_submission(path, suite="public"), "tiny_autograd.ipynb", "not a valid notebook", "JSON")


def test_schema_invalid_notebook(tmp_path, grade_submission):
    data = json.loads(notebook(REFERENCE_SOURCE))
    data["cells"][1]["cell_type"] = "program"
    path = write(tmp_path / "tiny_autograd.ipynb", json.dumps(data))
    assert_nothing_graded(grade_submission(path, suite="public"), "tiny_autograd.ipynb", "not a valid notebook")


def test_notebook_shell_and_magic_lines_never_run(tmp_path, grade_submission):
    markers = [tmp_path / f"marker-{i}" for i in range(4)]
    path = write(tmp_path / "tiny_autograd.ipynb", notebook(
        f"%matplotlib inline\n!touch {markers[0]}\n" + REFERENCE_SOURCE,
        f"%%bash\ntouch {markers[1]}\n",
        f"if True:\n    !touch {markers[2]}\n    %system touch {markers[3]}\nx = Value(2.0)\n",
    ))
    # The plain process level shares this file system: a line that ran would leave its marker.
    result = grade_submission(path, suite="public", isolation=sandbox.detect("process"))
    assert result.problem is None
    assert result.score == result.max_score, [t.message("en") for t in result.tests if not t.passed]
    assert not [m.name for m in markers if m.exists()]


# ------------------------------------------------------------------------ folders


def test_folder_without_candidates(tmp_path, grade_submission):
    folder = tmp_path / "handin"
    folder.mkdir()
    write(folder / "README.md", "my homework\n")
    write(folder / "notes.txt", "Value, Dual\n")
    assert_nothing_graded(grade_submission(folder, suite="public"), "handin", "no .py or .ipynb")


def test_folder_with_several_candidates(tmp_path, grade_submission):
    folder = tmp_path / "handin"
    folder.mkdir()
    write(folder / "part1.py", REFERENCE_SOURCE)
    write(folder / "part2.py", REFERENCE_SOURCE)
    assert_nothing_graded(grade_submission(folder, suite="public"), "handin", "several", "part1.py", "part2.py")


def test_folder_with_exactly_one_candidate_is_graded(tmp_path, grade_submission):
    folder = tmp_path / "handin"
    (folder / "tests").mkdir(parents=True)
    write(folder / "my_solution.py", REFERENCE_SOURCE)
    write(folder / "README.md", "my homework\n")
    write(folder / "tests" / "test_mine.py", "def test_nothing():\n    assert False\n")
    write(folder / "conftest.py", "raise SystemExit('a conftest is never a candidate')\n")
    result = grade_submission(folder, suite="public")
    assert result.problem is None
    assert result.score == result.max_score > 0
