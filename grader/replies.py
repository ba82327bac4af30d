"""What a worker says, checked and rebuilt before anything else reads it.

A reply is untrusted: the submission may write its own. It must have exactly
the shape the interpreter produces for the program that was sent, and it is
then rebuilt from its known fields only: numbers as floats, node numbers in
range, every string clipped and made printable (grader/text.py), so that no
reply can flood, garble or break the results, the HTML or the terminal.
"""

import json
import re

from grader.text import clip
from grader.exercise import EXERCISE

MAX_MESSAGE = 400  # an error message from the worker, in characters
MAX_NAME = 80  # a type or function name from the worker
KNOWN_NAMES = ("Value", "zero_grad", "Dual")  # what a load report may say is missing
NODE_KINDS = EXERCISE.node_kinds
FUNCTION_NAME = re.compile(r"(Value|Dual)\.[A-Za-z_][A-Za-z0-9_]{0,60}|zero_grad")


def parse(line):
    """A JSON object from one reply line, or None (no NaN, no Infinity, no other JSON)."""
    try:
        message = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


def _reject_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


# ---------------------------------------------------------------- load report


def missing_names(message):
    """The required names the load report says are missing (only names that exist), or None."""
    names = message.get("missing")
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return None
    return [name for name in KNOWN_NAMES if name in names]


def definitions(message):
    """{"Value.tanh": line, ...} from a load report: short names, positive lines, at most 80."""
    found = message.get("defined")
    if not isinstance(found, dict):
        return {}
    return {clip(name, MAX_NAME): line for name, line in list(found.items())[:80]
            if isinstance(name, str) and isinstance(line, int) and not isinstance(line, bool) and line > 0}


def _function_name(name):
    """An exercise function's name as the worker reports it ("Value.__mul__", "zero_grad"), else None."""
    return name if isinstance(name, str) and FUNCTION_NAME.fullmatch(name) else None


def limit_names(message):
    names = message.get("limits")
    return [clip(n, MAX_NAME) for n in names if isinstance(n, str)][:20] if isinstance(names, list) else []


def load_error(error):
    def text(value, limit):
        return clip(value, limit) if isinstance(value, str) else ""

    line = error.get("line")
    return {
        "type": text(error.get("type"), MAX_NAME),
        "message": text(error.get("message"), MAX_MESSAGE),
        "line": line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None,
    }


# -------------------------------------------------------------------- outcomes


def _is_number_or_marker(value):
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    return isinstance(value, dict) and (
        value.get("nonfinite") in ("nan", "inf", "-inf")
        or (isinstance(value.get("not_a_number"), str) and isinstance(value.get("repr"), str))
    )


def valid_outcome(outcome, steps):
    """The outcome has exactly the shape the interpreter produces for `steps`."""
    if not isinstance(outcome, dict) or not isinstance(outcome.get("ok"), bool):
        return False
    snapshots, orders = outcome.get("snapshots"), outcome.get("orders")
    if not isinstance(snapshots, list) or not isinstance(orders, list):
        return False
    node_steps = sum(1 for step in steps if step[0] in NODE_KINDS)
    for snapshot in snapshots:
        if not isinstance(snapshot, list) or len(snapshot) > node_steps:
            return False
        for pair in snapshot:
            if not (isinstance(pair, list) and len(pair) == 2 and all(map(_is_number_or_marker, pair))):
                return False
    for order in orders:
        if isinstance(order, dict):
            if not isinstance(order.get("not_a_list"), str):
                return False
        elif not (isinstance(order, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in order)):
            return False
    if outcome["ok"]:
        return len(snapshots) == sum(1 for s in steps if s[0] == "read") and len(orders) == sum(
            1 for s in steps if s[0] == "backward"
        )
    step, error = outcome.get("step"), outcome.get("error")
    return (
        isinstance(step, int)
        and not isinstance(step, bool)
        and 0 <= step < len(steps)
        and isinstance(error, dict)
        and isinstance(error.get("type"), str)
        and isinstance(error.get("message"), str)
    )


def _clean_value(value):
    if isinstance(value, dict):
        if "nonfinite" in value:
            return {"nonfinite": value["nonfinite"]}
        return {"not_a_number": clip(value["not_a_number"], MAX_NAME), "repr": clip(value["repr"], 120)}
    try:
        return float(value)
    except OverflowError:  # an int no float can hold (the interpreter never sends one)
        return {"not_a_number": "int", "repr": "an integer too large for a float"}


def clean_outcome(outcome, steps):
    """A validated outcome rebuilt from its known fields (see the module docstring)."""
    nodes = sum(1 for step in steps if step[0] in NODE_KINDS)
    clean = {
        "ok": outcome["ok"],
        "snapshots": [[[_clean_value(v) for v in pair] for pair in snapshot] for snapshot in outcome["snapshots"]],
        "orders": [
            {"not_a_list": clip(order["not_a_list"], MAX_NAME)} if isinstance(order, dict)
            else [i if -1 <= i < nodes else -1 for i in order]
            for order in outcome["orders"]
        ],
    }
    if not outcome["ok"]:
        error = outcome["error"]
        where = error.get("where")
        clean["step"] = outcome["step"]
        clean["error"] = {"type": clip(error["type"], MAX_NAME), "message": clip(error["message"], MAX_MESSAGE)}
        if isinstance(where, dict) and isinstance(where.get("line"), int) and not isinstance(where["line"], bool):
            clean["error"]["where"] = {
                "file": clip(str(where.get("file", "")), 200),
                "line": where["line"],
                "function": clip(str(where.get("function", "")), MAX_NAME),
                "within": _function_name(where.get("within")),
            }
        else:
            clean["error"]["where"] = None
    return clean

