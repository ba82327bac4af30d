"""Text that is safe to store and show, whoever wrote it.

Strings from a worker, from a submission's file names and from the submission
itself may hold anything: terminal escapes, bidirectional overrides that make
text display other than it reads, lone surrogates (which no UTF-8 writer can
encode), bytes of another encoding. Everything the grader stores or prints
passes through `printable` (or `one_line`) first; names read from the disk
through `file_name`.
"""

import os
import re

# Control characters other than tab and newline, the bidirectional overrides and
# isolates, and lone surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_LINE_BREAKS = re.compile("[\n\t\u2028\u2029\x85]")
REPLACEMENT = "\N{REPLACEMENT CHARACTER}"


def printable(text):
    """`text` with line endings normalized and every unsafe character replaced."""
    text = str(text).replace("\r\n", "\n").replace("\r", "\n")
    return _UNSAFE.sub(REPLACEMENT, text)


def one_line(text, limit=200):
    """Printable text on a single line (a name in a progress line or a CSV cell)."""
    text = _LINE_BREAKS.sub(" ", printable(text))
    return text if len(text) <= limit else text[:limit] + "…"


def clip(text, limit):
    """Printable text of at most `limit` characters, saying how much was cut."""
    text = str(text)
    if len(text) > limit:
        text = text[:limit] + f"... [{len(text) - limit} more characters]"
    return printable(text)


def file_name(name):
    """A name from the disk as a person would read it: UTF-8 when it is UTF-8,
    else GB18030 (what zips from Chinese Windows machines hold), else with
    replacement characters. `name` is a str from os functions or raw bytes."""
    raw = os.fsencode(name) if isinstance(name, str) else bytes(name)
    for encoding in ("utf-8", "gb18030"):
        try:
            return printable(raw.decode(encoding))
        except UnicodeDecodeError:
            continue
    return printable(raw.decode("utf-8", errors="replace"))


def encodable(text):
    """`text` as UTF-8 bytes, whatever it holds (a last line of defence for writers)."""
    return str(text).encode("utf-8", errors="replace")
