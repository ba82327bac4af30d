"""Solution markers: the one convention that separates solution from exercise.

A graded body sits between two comment lines, indented like the code it holds:

    # BEGIN SOLUTION: <hint shown to the student>
    ...solution lines...
    # END SOLUTION

`strip_solutions` replaces each block with `raise NotImplementedError(<hint>)`.
"""

import re
from dataclasses import dataclass

BEGIN = re.compile(r"^(?P<indent>[ \t]*)# BEGIN SOLUTION(?::\s*(?P<hint>.*?))?\s*$")
END = re.compile(r"^[ \t]*# END SOLUTION\s*$")
HINT_PREFIX = "TODO: "


class MarkerError(ValueError):
    """The reference's markers are unbalanced or misplaced."""


@dataclass(frozen=True)
class SolutionBlock:
    hint: str
    indent: str
    begin_line: int  # 1-based line of the BEGIN marker
    end_line: int  # 1-based line of the END marker
    body: str  # the solution lines, without the markers


def find_blocks(source):
    """Every solution block of `source`, in order; raises MarkerError when unbalanced."""
    blocks, open_block = [], None
    lines = source.splitlines()
    for number, line in enumerate(lines, start=1):
        begin, end = BEGIN.match(line), END.match(line)
        if begin:
            if open_block:
                raise MarkerError(f"line {number}: BEGIN SOLUTION inside another block")
            open_block = (number, begin.group("indent"), begin.group("hint") or "")
        elif end:
            if not open_block:
                raise MarkerError(f"line {number}: END SOLUTION without BEGIN")
            start, indent, hint = open_block
            body = "\n".join(lines[start : number - 1])
            blocks.append(SolutionBlock(hint, indent, start, number, body))
            open_block = None
    if open_block:
        raise MarkerError(f"line {open_block[0]}: BEGIN SOLUTION is never closed")
    return blocks


def stub_line(block):
    return f"{block.indent}raise NotImplementedError({HINT_PREFIX + block.hint!r})"


def strip_solutions(source):
    """The exercise: `source` with every solution block replaced by a stub."""
    lines = source.splitlines()
    out, cursor = [], 0
    for block in find_blocks(source):
        out.extend(lines[cursor : block.begin_line - 1])
        out.append(stub_line(block))
        cursor = block.end_line
    out.extend(lines[cursor:])
    return "\n".join(out) + "\n"
