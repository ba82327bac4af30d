"""Build the notebook version of the exercise from the generated template.

The notebook holds exactly the template's code, split into one cell per
top-level class or function, with explanation cells between them and a few
"try it" cells that catch NotImplementedError so the notebook runs top to
bottom before the student has written anything.
"""

import ast

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

EXERCISE_TAG = "exercise"
TRY_IT_TAG = "try-it"

INTRO = """\
# 动手写一个自动微分引擎 / Build a tiny autograd engine

`loss.backward()` 不是魔法。在这个练习里，你要补全一个标量自动微分引擎：

- `Value`：每个基本运算 (`+ * ** exp log tanh relu`) 的 `_backward` 闭包，
  也就是它的**局部求导规则** (local derivative rule)；
- `Value.backward()`：拓扑排序 + 倒序调用 `_backward`，并返回拓扑序；
- `zero_grad(values)`：把梯度清零；
- `Dual`：前向模式的对偶数，补全每个运算的导数部分。

*English:* fill in every `raise NotImplementedError(...)`. Each stub's message
names the rule to implement. Forward values and the derived ops (`- / radd ...`)
are already written: they are built from the primitives, so they need no rule of
their own.

**怎样检查 / how to check:** 在终端运行 `make grade SUBMISSION=tiny_autograd.ipynb`
(run it in a terminal). 评分器只读取代码单元；以 `!` 或 `%` 开头的行会被忽略。
The grader reads code cells only; lines starting with `!` or `%` are ignored.

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
            # Comments above a definition (even after a blank line) introduce it.
            while start > 0 and (not lines[start - 1].strip() or lines[start - 1].lstrip().startswith("#")):
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


def build_notebook(template_source):
    cells = [new_markdown_cell(INTRO)]
    for name, code in split_code(template_source):
        if name in CELL_TEXT:
            cells.append(new_markdown_cell(CELL_TEXT[name]))
        cells.append(new_code_cell(code, metadata={"tags": [EXERCISE_TAG]}))
        if name in TRY_AFTER:
            cells.append(new_code_cell(TRY_AFTER[name].rstrip("\n"), metadata={"tags": [TRY_IT_TAG]}))
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


def notebook_text(template_source):
    return nbformat.writes(build_notebook(template_source)) + "\n"
