"""Build the notebook version of the exercise from the generated template.

The notebook holds exactly the template's code, split into one cell per
top-level class or function, with explanation cells between them, a few
"try it" cells that catch NotImplementedError so the notebook runs top to
bottom before the student has written anything, and check cells: after each
part of the exercise, `%check PART` runs that part's public tests in the
student's kernel (grader/notebook_check.py), and `%check_all` at the end runs
them all. Check cells are IPython magics, which the grader never runs when it
grades the notebook.
"""

import ast

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.exercise import EXERCISE
from grader.notebook_check import PARTS

EXERCISE_TAG = "exercise"
TRY_IT_TAG = "try-it"
CHECK_TAG = "check"
PREVIEW_TAG = "preview"
# Where the course's repository (the bundle, with its grader) is not known yet.
REPOSITORY_PLACEHOLDER = "https://github.com/YOUR-COURSE/YOUR-REPOSITORY"

INTRO = """\
# 动手写一个自动微分引擎 / Build a tiny autograd engine

`loss.backward()` 不是魔法。在这个练习里，你要补全一个标量自动微分引擎：

- `Value`：每个基本运算 (`@PRIMITIVES@`) 的 `_backward` 闭包，
  也就是它的**局部求导规则** (local derivative rule)；
- `Value.backward()`：拓扑排序 + 倒序调用 `_backward`，并返回拓扑序；
- `zero_grad(values)`：把梯度清零；
- `Dual`：前向模式的对偶数，补全每个运算的导数部分。

*English:* fill in every `raise NotImplementedError(...)`. Each stub's message
names the rule to implement. Forward values and the derived ops (`- / radd ...`)
are already written: they are built from the primitives, so they need no rule of
their own.

**怎样检查 / how to check:** 每完成一部分，运行它后面的检查单元格（`%check ...`）：
它在你自己的 kernel 里运行这部分的公开测试，直接显示哪里不对、能重现问题的最小程序和计算图。
这是本地反馈，不是正式成绩。先运行一次下面的「本地检查」单元格。
*After each part, run the check cell below it (`%check ...`): it runs that part's public
tests in your own kernel and shows what is wrong, the smallest program that shows it, and
its graph. This is local feedback, not an official grade. Run the "local checks" cell below
once first.* 在终端里也可以运行 `make grade SUBMISSION=tiny_autograd.ipynb` / or, in a terminal,
run `make grade SUBMISSION=tiny_autograd.ipynb`. 评分器只读取代码单元；以 `!` 或 `%` 开头的行
（包括检查单元格）会被忽略。 The grader reads code cells only; lines starting with `!` or `%`
(the check cells too) are ignored.

**在 Colab 里 / in Colab:** 检查要用到课程仓库里的评分器（`grader/` 文件夹）。在最上面插入一个代码
单元格，先运行它 / the checks need the grader (the folder `grader/`) of the course repository:
insert a code cell at the very top and run it first:

```python
!git clone --depth 1 -q @REPOSITORY@ /content/course
import sys; sys.path.insert(0, "/content/course")
```

@REPOSITORY_NOTE@

**评分只用 Python 标准库 / the standard library only:** 画图、做实验时可以 import
numpy、graphviz 等，但被评分的代码不能用到它们（评分时它们只是占位模块）。
Import numpy, graphviz and the like for your own plots if you wish; the graded code
must not use them (while grading they are placeholders).
"""

CELL_TEXT = {
    "header": """\
## 准备 / Setup

只用到标准库的 `math`。`_leaf_backward` 是叶子节点的 `_backward`：叶子没有输入，
什么也不用做。 *A leaf has no inputs, so its backward step does nothing.*""",
    "Value": """\
## `Value`：反向模式 / reverse mode

每个运算先算出结果 `out`，再定义 `out._backward`：已知 `out.grad = ∂L/∂out`，
把 `∂L/∂out × ∂out/∂input` **加到** (`+=`) 每个输入的 `grad` 上。
为什么是 `+=`？同一个数可能被用了好几次 (比如 `x * x`)，每条路径的梯度都要加起来。

*Each `_backward` adds (`+=`, never `=`) the upstream gradient times the local
derivative to every input. Watch the special cases: `relu` at exactly 0 passes
no gradient; `tanh'` is written with the output `t`: `1 - t²`.*

`backward()` 的规则 / rules of `backward()`:
1. 拓扑排序，输入在前，自己在最后 / topological order, inputs first, root last;
2. 中间节点 (有输入的) 的 grad 清零，叶子节点保留 (所以叶子会累加) /
   reset non-leaf grads, keep leaf grads (leaves accumulate);
3. 根节点 grad 设为 1.0 / root grad = 1.0;
4. 倒序调用 `_backward`，最后返回拓扑序 / call `_backward` in reverse order, return the order.""",
    "_topological_order": """\
## 拓扑排序 / Topological order

`backward()` 可以调用这个辅助函数，也可以自己写。用显式栈而不是递归，
百万层的计算图也不会超过 Python 的递归深度。注意：判断"访问过"要看对象本身，
不能看数值——两个 data 相同的节点仍然是两个节点。

*Mark visited nodes by identity, not by value: two nodes with equal data are
still two nodes.*""",
    "zero_grad": """\
## `zero_grad`

把给定的每个 `Value` 的 `grad` 设为 `0.0`。
*Set `.grad = 0.0` on each value given.*""",
    "Dual": """\
## `Dual`：前向模式 / forward mode

对偶数 `a + bε`，`ε² = 0`。把输入换成 `Dual(x, v)`，结果的 `der` 就是方向导数 `∇f·v`。
普通数字会被提升为导数为 0 的常数。
*Fill in the ε part of each op. A plain number is lifted to `Dual(c, 0.0)`.*""",
}

TRY_REVERSE = """\
# 试一试反向模式 / try reverse mode
try:
    x, y = Value(2.0), Value(3.0)
    z = x * y + x.tanh()
    order = z.backward()
    print("z =", z.data, " dz/dx =", x.grad, " dz/dy =", y.grad, " nodes:", len(order))
except NotImplementedError as todo:
    print("还没写完 / not done yet:", todo)
"""

TRY_FORWARD = """\
# 前向模式和反向模式应该给出同一个方向导数 / both modes must agree
try:
    a, b = Dual(2.0, 1.0), Dual(3.0, 0.5)  # 方向 / direction v = (1.0, 0.5)
    f = a * b + a.tanh()
    print("forward:  ∇f·v =", f.der)
    x, y = Value(2.0), Value(3.0)
    (x * y + x.tanh()).backward()
    print("reverse:  ∇f·v =", x.grad * 1.0 + y.grad * 0.5)
except NotImplementedError as todo:
    print("还没写完 / not done yet:", todo)
"""

TRY_AFTER = {"zero_grad": TRY_REVERSE, "Dual": TRY_FORWARD}

REPOSITORY_NOTE = {
    False: "把地址换成老师给的课程仓库 / put the address of your course repository (your instructor "
           "gives it) in place of the one above.",
    True: "（这是课程仓库的地址 / this is the course repository.）",
}

SETUP_CHECKS = """\
# 本地检查：运行一次 / local checks: run this cell once (不是正式成绩 / not an official grade)
try:
    %load_ext grader.notebook_check
except ImportError:
    print("找不到评分器（grader/ 文件夹）：请从课程仓库的文件夹里打开这个 notebook；在 Colab 里先运行介绍里的单元格。")
    print("The grader (the folder grader/) was not found: open this notebook from the course repository's "
          "folder; in Colab, first run the cell given in the introduction.")
"""

# The parts checked after each exercise cell (grader/notebook_check.py: PARTS).
# Reverse mode needs the ops and backward() with its topological order: both are
# checked once the topological order cell is written.
CHECKS_AFTER = {"_topological_order": ("ops", "backward"), "zero_grad": ("zero_grad",), "Dual": ("Dual",)}

CHECK_ALL_TEXT = """\
## 全部检查，然后提交 / Check everything, then submit

下面的单元格运行全部公开测试，并说明怎样提交。正式成绩由课程的评分器在你提交后给出，还包括隐藏测试。
*The cell below runs the whole public suite and says how to submit. Your official grade comes
from the course's grader after you submit, and includes hidden tests.*"""

PREVIEW_TEXT = """\
**教师预览 / instructor preview:** 这份 notebook 已经填入参考答案，不要发给学生。
*This notebook has the reference solutions filled in: do not hand it out.*"""


def check_cell_source(part_name):
    part = next(p for p in PARTS if p.name == part_name)
    title = part.title["en"] if part.title["zh"] == part.title["en"] else f"{part.title['zh']} / {part.title['en']}"
    return f"# 检查 / check: {title}\n%check {part.name}"


def split_code(source):
    """(name, code) pairs: the module body after the docstring, one per top-level
    class or function, comment banners kept with the definition they introduce."""
    tree = ast.parse(source)
    lines = source.splitlines()
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the module docstring becomes the intro text instead
    starts, names = [], []
    for node in body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name != "_leaf_backward":
            start = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            # Comments above a definition (even after a blank line) introduce it; an indented
            # one (the reference's `# END SOLUTION`) ends the body before it.
            while start > 0 and (not lines[start - 1].strip() or lines[start - 1].startswith("#")):
                start -= 1
            while not lines[start].strip():
                start += 1
            starts.append(start)
            names.append(node.name)
    first = body[0].lineno - 1
    chunks = [("header", lines[first : starts[0]])]
    for index, name in enumerate(names):
        end = starts[index + 1] if index + 1 < len(names) else len(lines)
        chunks.append((name, lines[starts[index] : end]))
    return [(name, "\n".join(chunk).strip("\n")) for name, chunk in chunks]


def code_body(source):
    """What the notebook must hold: the template without its docstring."""
    return "\n\n\n".join(code for _, code in split_code(source))


def intro(repository=None):
    return (INTRO.replace("@REPOSITORY@", repository or REPOSITORY_PLACEHOLDER)
            .replace("@PRIMITIVES@", " ".join(EXERCISE.primitives()))
            .replace("@REPOSITORY_NOTE@", REPOSITORY_NOTE[bool(repository)]))


def build_notebook(source, repository=None, submit_note=None, preview=False):
    """The notebook of `source` (the template; the reference for an instructor's
    preview). `repository`: the course repository's address for Colab;
    `submit_note`: {"en", "zh"}, which file is graded, shown before the last check."""
    cells = [new_markdown_cell(intro(repository))]
    if preview:
        cells.append(new_markdown_cell(PREVIEW_TEXT, metadata={"tags": [PREVIEW_TAG]}))
    cells.append(new_code_cell(SETUP_CHECKS.rstrip("\n"), metadata={"tags": [CHECK_TAG]}))
    for name, code in split_code(source):
        if name in CELL_TEXT:
            cells.append(new_markdown_cell(CELL_TEXT[name]))
        cells.append(new_code_cell(code, metadata={"tags": [EXERCISE_TAG]}))
        if name in TRY_AFTER:
            cells.append(new_code_cell(TRY_AFTER[name].rstrip("\n"), metadata={"tags": [TRY_IT_TAG]}))
        for part in CHECKS_AFTER.get(name, ()):
            cells.append(new_code_cell(check_cell_source(part), metadata={"tags": [CHECK_TAG]}))
    text = CHECK_ALL_TEXT
    if submit_note:
        text += f"\n\n{submit_note['zh']}\n*{submit_note['en']}*"
    cells.append(new_markdown_cell(text))
    cells.append(new_code_cell("# 全部公开测试 / the whole public suite\n%check_all", metadata={"tags": [CHECK_TAG]}))
    notebook = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
    )
    # Stable cell ids make the generated file reproducible byte for byte.
    for number, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{number:02d}"
    nbformat.validate(notebook)
    return notebook


def notebook_text(source, **options):
    return nbformat.writes(build_notebook(source, **options)) + "\n"
