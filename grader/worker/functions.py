"""The submission's functions of the exercise, found in its namespace.

Feedback says where a mistake is: "in `Value.__mul__`, line 42". The worker knows
which function each piece of code belongs to (a `_backward` closure belongs to the
op that made it), which is the same on every Python: code objects and their
nested code, not the qualified names only newer Pythons record. Standard library
only: this runs in the worker.
"""

OWNERS = ("Value", "Dual")
MOST = 80


def exercise_functions(namespace, path):
    """{"Value.tanh": code, ..., "zero_grad": code}: the functions defined in `path`
    (a file name, or several: a notebook kernel's cells)."""
    paths = {path} if isinstance(path, str) else set(path)
    found = {}
    for owner in OWNERS:
        cls = namespace.get(owner)
        for name, member in (vars(cls).items() if isinstance(cls, type) else ()):
            code = getattr(getattr(member, "__func__", member), "__code__", None)
            if code is not None and code.co_filename in paths and len(found) < MOST:
                found[f"{owner}.{name}"] = code
    code = getattr(namespace.get("zero_grad"), "__code__", None)
    if code is not None and code.co_filename in paths:
        found["zero_grad"] = code
    return found


def definitions(functions):
    """{"Value.tanh": first line, ...}."""
    return {name: code.co_firstlineno for name, code in functions.items()}


def owners(functions):
    """{code: "Value.__mul__"} for each function's code and all the code nested in it."""
    found = {}
    for name, code in functions.items():
        pending = [code]
        while pending:
            inner = pending.pop()
            if inner not in found:
                found[inner] = name
                pending.extend(c for c in inner.co_consts if hasattr(c, "co_consts"))
    return found
