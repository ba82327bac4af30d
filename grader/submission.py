"""Turn what a student handed in into one Python module, without running it.

Accepts a `.py` file of any name, a `.ipynb` notebook, or a folder holding one.
In a folder, the assignment's graded file (`tiny_autograd.py` unless the bundle
was built for the notebook) wins over the other files; a second file named
`tiny_autograd` (the other format) is ignored with a note.
Problems a grader can see without executing anything (missing, empty, binary,
not UTF-8, too large, syntax error, broken notebook, ambiguous folder) become a
`Problem` with a bilingual message that says what is wrong and where.

Notebooks: code cells are joined into one module; shell (`!`) and magic (`%`)
lines become `pass` and are never run; a line map points module lines back to
(cell, line) for messages. Outputs (plots, tables) are dropped without being
looked at: the size limit applies to the code.
"""

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from grader.text import file_name

_SURROGATES = re.compile("[\ud800-\udfff]")
MAX_BYTES = 1024 * 1024  # of Python source (a notebook's code cells)
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024  # of a whole notebook file, outputs included
MAX_FOLDER_ENTRIES = 5000  # what a folder submission may hold before the rest is ignored
PREFERRED_STEM = "tiny_autograd"
GRADED_FILES = ("tiny_autograd.py", "tiny_autograd.ipynb")
SKIPPED_DIRS = {".git", ".venv", "venv", "__pycache__", ".ipynb_checkpoints", "node_modules"}


@dataclass
class Problem:
    en: str
    zh: str


@dataclass
class Prepared:
    origin: Path  # what the student handed in
    display: str  # the file name shown in messages
    source: str = ""
    cells: list = field(default_factory=list)  # module line (1-based) -> (cell number, line in cell)
    problem: Problem = None
    notes: list = field(default_factory=list)  # [Problem]: things the student should know, not errors

    def where(self, line, lang="en"):
        """A module line as the student sees it: file line, or notebook cell and line."""
        if line is None:
            return self.display
        place = ("line", line)
        if self.cells:
            if not (1 <= line <= len(self.cells)) or self.cells[line - 1] is None:
                return self.display
            place = ("cell", *self.cells[line - 1])
        if lang == "zh":
            if place[0] == "cell":
                return f"{self.display} 第 {place[1]} 个单元格第 {place[2]} 行"
            return f"{self.display} 第 {line} 行"
        if place[0] == "cell":
            return f"{self.display}, cell {place[1]}, line {place[2]}"
        return f"{self.display}, line {line}"


def prepare(path, graded_file=GRADED_FILES[0]):
    """`graded_file`: which file of a folder the assignment grades (GRADED_FILES)."""
    path = Path(path)
    if not path.exists():
        return _fail(path, f"{_shown(path)}: no such file or folder", f"{_shown(path)}：文件或文件夹不存在")
    handed_in = path if path.is_dir() else path.parent
    notes = []
    if path.is_dir():
        chosen, problem, notes = _choose_in_folder(path, graded_file)
        if problem:
            return Prepared(path, _shown(path), problem=problem)
        path = chosen
    display = file_name(path.name)
    # A symbolic link out of what was handed in (to the kit's reference, /dev/zero, ...)
    # would make the trusted side read it; only regular files are read, and only so far.
    raw = None
    limit = MAX_NOTEBOOK_BYTES if path.suffix == ".ipynb" else MAX_BYTES
    if _inside(path, handed_in):
        raw = _read_regular(path, limit + 1)
    if raw is None:
        return _fail(path, f"{display}: a link to a file outside the submission, or not a regular file; hand in the file itself.",
                     f"{display}：指向提交内容之外的链接，或不是普通文件；请提交文件本身。")
    if len(raw) > limit:
        return _fail(path, f"{display}: the file is larger than {_size(limit)}; is it the right file?",
                     f"{display}：文件超过 {_size(limit)}，交对文件了吗？")
    if not raw.strip():
        return _fail(path, f"{display}: the file is empty.", f"{display}：文件是空的。")
    if b"\x00" in raw:
        return _fail(path, f"{display}: this is a binary file, not Python source or a notebook.",
                     f"{display}：这是二进制文件，不是 Python 源码或 notebook。")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return _fail(path, f"{display}: not UTF-8 text (bad byte at offset {error.start}); save the file as UTF-8.",
                     f"{display}：不是 UTF-8 文本（第 {error.start} 个字节有误），请以 UTF-8 保存。")
    if path.suffix == ".ipynb":
        prepared = _from_notebook(path, display, text)
    else:
        prepared = Prepared(path, display, source=text)
    if prepared.problem is None:
        prepared.problem = _syntax_problem(prepared)
    prepared.notes = notes + prepared.notes
    return prepared


def _shown(path):
    return file_name(os.fsencode(path))


def _read_regular(path, limit):
    """The first `limit` bytes of a regular file, or None (a pipe, a device, unreadable)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, left = [], limit
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _inside(path, folder):
    """A regular file inside `folder` (a link is followed only if it stays inside)."""
    try:
        return path.resolve().is_relative_to(folder.resolve()) and path.resolve().is_file()
    except (OSError, RuntimeError):
        return False


def _size(limit):
    return f"{limit // (1024 * 1024)} MiB"


def _fail(path, en, zh):
    return Prepared(path, file_name(path.name) if path.name else _shown(path), problem=Problem(en, zh))


def walk_submission(folder, limit=MAX_FOLDER_ENTRIES):
    """([(relative path, kind)], complete): what a folder holds, sorted, without
    following links (kind: "file", "link", "folder" or "special") and skipping
    caches and VCS folders; at most `limit` entries (complete is False beyond)."""
    found, stack = [], [""]
    while stack:
        relative = stack.pop()
        try:
            with os.scandir(os.path.join(folder, relative) if relative else folder) as entries:
                listed = sorted(entries, key=lambda entry: os.fsencode(entry.name))
        except OSError:
            continue
        for entry in listed:
            if len(found) >= limit:
                return sorted(found), False
            path = os.path.join(relative, entry.name) if relative else entry.name
            try:
                if entry.is_symlink():
                    kind = "link"
                elif entry.is_dir(follow_symlinks=False):
                    kind = "folder"
                elif entry.is_file(follow_symlinks=False):
                    kind = "file"
                else:
                    kind = "special"
            except OSError:
                kind = "special"
            if kind == "folder" and entry.name in SKIPPED_DIRS:
                continue
            found.append((path, kind))
            if kind == "folder":
                stack.append(path)
    return sorted(found), True


def _choose_in_folder(folder, graded_file):
    """(file, problem, notes): the file to grade in a folder handed in."""
    entries, complete = walk_submission(folder)
    candidates = sorted(
        folder / relative for relative, kind in entries
        if kind in ("file", "link") and Path(relative).suffix in (".py", ".ipynb")
        and not Path(relative).name.startswith(("test_", "conftest"))
        and _inside(folder / relative, folder)
    )
    shown = _shown(folder)
    if not candidates:
        links = [relative for relative, kind in entries if kind == "link" and Path(relative).suffix in (".py", ".ipynb")]
        if links:
            name = _shown(links[0])
            return None, Problem(
                f"{shown}: {name} is a link to a file outside the submission, or not a regular file; "
                "hand in the file itself.",
                f"{shown}：{name} 是指向提交内容之外的链接，或不是普通文件；请提交文件本身。"), []
        if not complete:
            return None, Problem(
                f"{shown}: no .py or .ipynb file among the first {MAX_FOLDER_ENTRIES} entries of this folder; "
                "hand in the folder without data or caches, or the file itself.",
                f"{shown}：这个文件夹的前 {MAX_FOLDER_ENTRIES} 项里没有 .py 或 .ipynb 文件；"
                "请提交不含数据和缓存的文件夹，或直接提交文件。"), []
        return None, Problem(f"{shown}: no .py or .ipynb file found in this folder.",
                             f"{shown}：文件夹里没有 .py 或 .ipynb 文件。"), []
    for wanted in (graded_file, *(name for name in GRADED_FILES if name != graded_file)):
        named = [p for p in candidates if p.name == wanted]
        if len(named) > 1:
            names = ", ".join(_shown(p.relative_to(folder)) for p in named[:6])
            return None, Problem(
                f"Several files are named {wanted} ({names}): keep only the one to grade, "
                f"or rename the others (for example to {PREFERRED_STEM}_old{Path(wanted).suffix}).",
                f"有多个文件都叫 {wanted}（{names}）：只保留要评分的那一个，"
                f"或把其他的改名（比如改成 {PREFERRED_STEM}_old{Path(wanted).suffix}）。"), []
        if named:
            return named[0], None, _ignored_notes(folder, named[0], candidates)
    if len(candidates) == 1:
        return candidates[0], None, []
    names = ", ".join(_shown(p.relative_to(folder)) for p in candidates[:6])
    return None, Problem(
        f"{shown}: several candidate files ({names}) and none is named {graded_file}: "
        f"rename the file to grade to {graded_file}.",
        f"{shown}：有多个候选文件（{names}），但没有一个叫 {graded_file}：请把要评分的文件改名为 {graded_file}。",
    ), []


def _ignored_notes(folder, chosen, candidates):
    """A note for the other format of the exercise, ignored because `chosen` is graded."""
    others = [p for p in candidates if p != chosen and p.stem == PREFERRED_STEM]
    if not others:
        return []
    names = ", ".join(_shown(p.relative_to(folder)) for p in others)
    chosen_name = _shown(chosen.relative_to(folder))
    return [Problem(f"Graded {chosen_name}; ignored {names} (this assignment grades {chosen.name}).",
                    f"评分的是 {chosen_name}；已忽略 {names}（这个作业评分的是 {chosen.name}）。")]


def _from_notebook(path, display, text):
    import nbformat

    try:
        notebook = nbformat.reads(json.dumps(_without_outputs(json.loads(text))), as_version=4)
        nbformat.validate(notebook)
    except json.JSONDecodeError as error:
        return _fail(path, f"{display}: not a valid notebook: broken JSON at line {error.lineno}, column {error.colno}.",
                     f"{display}：不是有效的 notebook：JSON 在第 {error.lineno} 行第 {error.colno} 列损坏。")
    except Exception as error:  # nbformat raises several kinds for schema problems
        reason = " ".join(str(error).split())[:200]
        return _fail(path, f"{display}: not a valid notebook ({reason}).", f"{display}：不是有效的 notebook（{reason}）。")
    code_bytes = sum(len(_cell_source(cell).encode("utf-8")) for cell in notebook.cells if cell.cell_type == "code")
    if code_bytes > MAX_BYTES:
        return _fail(path, f"{display}: the notebook's code cells hold more than {MAX_BYTES // 1024} KiB of code; "
                           "is it the right file?",
                     f"{display}：notebook 的代码单元格超过 {MAX_BYTES // 1024} KiB，交对文件了吗？")
    lines, cells = [], []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            continue
        cell_lines = _cell_source(cell).splitlines()
        whole_cell_magic = bool(cell_lines) and cell_lines[0].lstrip().startswith("%%")
        for line_number, line in enumerate(cell_lines, start=1):
            stripped = line.lstrip()
            if whole_cell_magic or stripped.startswith(("!", "%")):
                line = line[: len(line) - len(stripped)] + "pass  # shell/magic line removed by the grader"
            lines.append(line)
            cells.append((number, line_number))
        lines.append("")
        cells.append(None)
    # JSON may spell lone surrogates (\\ud800), which no file can hold: replace them.
    source = _SURROGATES.sub("\ufffd", "\n".join(lines) + "\n")
    return Prepared(path, display, source=source, cells=cells)


def _line_text(source, line, limit=120):
    lines = source.splitlines()
    text = lines[line - 1].strip() if line and 1 <= line <= len(lines) else ""
    return text if len(text) <= limit else text[:limit] + "..."


def _without_outputs(data):
    """The notebook's JSON with every output, execution count and attachment dropped, unread."""
    if isinstance(data, dict) and isinstance(data.get("cells"), list):
        for cell in data["cells"]:
            if isinstance(cell, dict):
                cell.pop("attachments", None)
                if cell.get("cell_type") == "code":
                    cell["outputs"], cell["execution_count"] = [], None
    return data


def _cell_source(cell):
    return cell.source if isinstance(cell.source, str) else "".join(cell.source)


def _syntax_problem(prepared):
    try:
        compile(prepared.source, prepared.display, "exec", dont_inherit=True)
    except SyntaxError as error:
        # The interpreter's own wording differs between Python versions ("invalid
        # syntax" on 3.9, "expected ':'" later): show the line instead, so that the
        # message is the same on every Python.
        code = _line_text(prepared.source, error.lineno)
        return Problem(
            f"Syntax error in {prepared.where(error.lineno)}: `{code}` is not valid Python "
            "(look for a missing colon, bracket or quote, here or just before).",
            f"语法错误：{prepared.where(error.lineno, 'zh')}：`{code}` 不是合法的 Python"
            "（检查这里或前面是否缺少冒号、括号或引号）。",
        )
    except (ValueError, RecursionError, MemoryError) as error:
        return Problem(f"{prepared.display}: cannot be compiled ({type(error).__name__}).",
                       f"{prepared.display}：无法编译（{type(error).__name__}）。")
    return None
