"""Placeholders for modules the grader does not offer (standard library only; runs in the worker).

Students' own copies often import what their machine has: `from graphviz import
Digraph` (micrograd's drawing code), `import numpy`. The grader runs the
standard library only, so such an import would fail the whole submission even
when nothing graded uses it. Instead each such module is a placeholder: importing
it (and taking names from it) works; using anything from it raises an error that
says why, which fails only the tests that used it.

Which modules are real: the standard library, and the packages the instructor
allowed in the rubric where this interpreter can import them. The trusted side
passes the allowed ones in the worker's settings.
"""

import importlib.machinery
import os
import sys
import types

if not hasattr(sys, "stdlib_module_names"):  # Python 3.9: is_standard needs it, imported before install()
    import sysconfig

# Not importlib.abc: in Python 3.11 importing it takes importlib.resources, tempfile, pathlib and shutil
# with it, which was a third of every worker's start-up. A finder and a loader need only their methods.


def install(allowed=()):
    """Put the placeholder finder first on sys.meta_path (before the submission loads);
    `allowed`: the top-level names of packages that are real where they are installed."""
    sys.meta_path.insert(0, PlaceholderFinder(frozenset(name for name in allowed if isinstance(name, str))))


def is_standard(name):
    top = name.partition(".")[0]
    if top in sys.builtin_module_names or top in getattr(sys, "stdlib_module_names", ()):
        return True
    if hasattr(sys, "stdlib_module_names"):
        return False
    # Python 3.9 has no list: a module found in the standard library's own folders.
    paths = {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")}
    folders = [p for p in paths if p] + [os.path.join(p, "lib-dynload") for p in paths if p]
    return importlib.machinery.PathFinder.find_spec(top, folders) is not None


class PlaceholderFinder:
    """A meta path finder and the loader of the placeholders it finds."""

    def __init__(self, allowed):
        self.allowed = allowed

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in sys.modules and not isinstance(sys.modules[top], Placeholder):
            return None  # a real package's submodule
        if is_standard(name) or top == "tiny_autograd":
            return None
        if top in self.allowed and self._really_there(name, path, target):
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def _really_there(self, name, path, target):
        others = [finder for finder in sys.meta_path if finder is not self]
        return any(getattr(f, "find_spec", lambda *a: None)(name, path, target) is not None for f in others)

    def create_module(self, spec):
        return Placeholder(spec.name)

    def exec_module(self, module):
        pass


def _unavailable(name):
    top = name.partition(".")[0]
    return ModuleNotFoundError(
        f"`{name}` is not available while grading: the grader runs your code with the Python standard "
        f"library only, so `{top}` is a placeholder that only lets the import pass. Do not use it in the "
        f"graded code. / 评分时没有 `{name}`：评分器只用 Python 标准库运行你的代码，`{top}` 只是一个占位模块，"
        "只让 import 不报错。请不要在被评分的代码里用它。",
        name=top,
    )


class Placeholder(types.ModuleType):
    """A module of which every name is an Unavailable stand-in."""

    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []

    def __getattr__(self, attribute):
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        return Unavailable(f"{self.__name__}.{attribute}")


class Unavailable:
    """What `from numpy import array` gives: fails as soon as it is used."""

    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def _fail(self, *args, **kwargs):
        raise _unavailable(object.__getattribute__(self, "_name"))

    def __getattr__(self, attribute):
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        self._fail()

    __call__ = __getitem__ = __setattr__ = __iter__ = __len__ = __bool__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _fail
    __pow__ = __rpow__ = __neg__ = __float__ = __int__ = __index__ = __mro_entries__ = _fail

    def __repr__(self):
        return f"<not available while grading: {object.__getattribute__(self, '_name')}>"
