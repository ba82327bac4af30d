"""Which modules a submission imports that the grader does not offer (read from its source, never run).

The worker gives such modules a placeholder that fails only when used
(grader/worker/placeholders.py); this side names them in a note, so a student
knows why `numpy` seems to be there and what happens if it is used.
"""

import ast

from grader.worker.placeholders import is_standard


def unavailable_imports(source, allowed=()):
    """Top-level names of the modules `source` imports that are neither standard nor allowed."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.partition(".")[0])
    return sorted(n for n in names if n not in allowed and n != "tiny_autograd" and not is_standard(n))


def placeholder_note(names):
    if not names:
        return None
    shown = ", ".join(f"`{name}`" for name in names)
    return {
        "en": f"{shown}: the grader runs your code with the Python standard library only, so this import gets "
              "a placeholder. It costs nothing as long as the graded code does not use it; a test that uses it "
              "fails and says so.",
        "zh": f"{shown}：评分器只用 Python 标准库运行你的代码，所以这个 import 得到的是一个占位模块。只要被评分的代码"
              "不用它，就不扣分；用到它的测试会失败并说明原因。",
    }
