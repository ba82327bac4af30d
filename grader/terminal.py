"""The summary printed after `make grade`: fits 80 columns, colour only on a TTY.

Per category the points earned and possible, then the first few failed tests
with what is wrong, the localized cause, the hint when the numbers match a
known misconception, and (for the first one) the smallest program that shows
it; last, where the full report is. Chinese text is wrapped by display width
(a CJK character takes two columns).
"""

import os
import re
import sys
import unicodedata

from grader.points import points_text

NO_LINE_START = set("，。；：！？、）」』》,.;:!?)")
WIDTH = 80
SHOWN_FAILURES = 3
CODE_LINES = 12
BAR = 20
TOKENS = re.compile(r"\s+|[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]|[^\s\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]+")

TEXT = {
    "en": {"score": "Score", "failed": "{n} of {total} tests failed; the first {shown}:",
           "all_failed_shown": "{n} of {total} tests failed:", "passed": "All {total} tests passed.",
           "cause": "Cause: ", "hint": "Hint: ", "smallest": "Smallest program that shows it:",
           "program": "A program that shows it:", "report": "Full report: ", "results": "Results file: ",
           "isolation": "Isolation: ", "more": "... ({n} more lines)"},
    "zh": {"score": "得分", "failed": "{total} 个测试中有 {n} 个未通过，前 {shown} 个：",
           "all_failed_shown": "{total} 个测试中有 {n} 个未通过：", "passed": "全部 {total} 个测试通过。",
           "cause": "原因：", "hint": "提示：", "smallest": "能重现这个问题的最小程序：",
           "program": "能重现这个问题的程序：", "report": "完整报告：", "results": "结果文件：",
           "isolation": "隔离级别：", "more": "……（还有 {n} 行）"},
}


def width(text):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap(text, limit=WIDTH, indent="", subsequent=None):
    """Greedy wrapping by display width: breaks at spaces, or between CJK characters;
    closing punctuation never starts a line (the word before it moves down with it)."""
    subsequent = indent if subsequent is None else subsequent
    lines, words = [], []  # words: the tokens of the current line

    def room(prefix):
        return limit - width(prefix + "".join(words))

    prefix = indent
    for token in TOKENS.findall(" ".join(text.split())):
        if token.isspace():
            if words:
                words.append(" ")
            continue
        while width(token) > limit - width(subsequent):  # a token longer than a line: cut it
            if words:
                lines.append((prefix + "".join(words)).rstrip())
                prefix, words = subsequent, []
            head = _cut(token, room(prefix))
            lines.append(prefix + head)
            token = token[len(head):]
            prefix = subsequent
        if width(token) > room(prefix) and words:
            carried = []
            if token in NO_LINE_START and len([w for w in words if not w.isspace()]) > 1:
                carried = [words.pop()]
            lines.append((prefix + "".join(words)).rstrip())
            prefix, words = subsequent, carried
        words.append(token)
    if words:
        lines.append((prefix + "".join(words)).rstrip())
    return lines


def _cut(token, room):
    taken = ""
    for char in token:
        if width(taken + char) > room:
            break
        taken += char
    return taken or token[0]


class Painter:
    def __init__(self, stream):
        self.on = bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")

    def __call__(self, text, code):
        return f"\033[{code}m{text}\033[0m" if self.on and text else text


def summary(result, lang, results_path, stream=None, html_path=None):
    stream = stream or sys.stdout
    text = "\n".join(summary_lines(result, lang, results_path, Painter(stream), html_path))
    encoding = getattr(stream, "encoding", None) or "utf-8"
    # A terminal that cannot show some character (an ASCII locale) gets a replacement, never an error.
    print(text.encode(encoding, errors="replace").decode(encoding, errors="replace"), file=stream)


def summary_lines(result, lang, results_path, paint=None, html_path=None):
    paint = paint or (lambda text, code: text)
    zh = lang == "zh"
    text = TEXT["zh" if zh else "en"]
    lines = []
    if result.problem:
        for line in wrap(result.first_line(lang)):
            lines.append(paint(line, "31;1"))
    else:
        colour = "32;1" if result.score >= result.max_score else "33;1"
        lines.append(paint(f"{text['score']} {points_text(result.score)} / {points_text(result.max_score)}", colour))
    lines.append("")
    for category, (earned, possible) in result.categories().items():
        filled = round(BAR * earned / possible) if possible else 0
        bar = paint("#" * filled, "32") + paint("." * (BAR - filled), "2")
        lines.append(f"  {category:<14}{points_text(earned):>7} / {points_text(possible):<6} {bar}")
    failures = [t for t in result.tests if not t.passed]
    if not result.problem:
        lines.append("")
        if not failures:
            lines.append(paint(text["passed"].format(total=len(result.tests)), "32"))
        else:
            shown = min(SHOWN_FAILURES, len(failures))
            key = "failed" if shown < len(failures) else "all_failed_shown"
            lines.append(text[key].format(n=len(failures), total=len(result.tests), shown=shown))
            for index, test in enumerate(failures[:shown]):
                lines.append("")
                lines += _failure(test, lang, text, paint, with_code=index == 0)
    for note in result.notes:
        lines.append("")
        lines += wrap(note["zh" if zh else "en"])
    lines.append("")
    if html_path:
        lines += wrap(text["report"] + str(html_path), subsequent="  ")
        lines += wrap(text["results"] + str(results_path), subsequent="  ")
    else:
        lines += wrap(text["report"] + str(results_path), subsequent="  ")
    # The level and why, not every layer: those are in the results' extra_data.
    level, _, layers = result.isolation.partition(": ")
    reason = layers[layers.rfind(" (") :] if layers.endswith(")") else ""
    lines += [paint(line, "2") for line in wrap(text["isolation"] + level + reason, subsequent="  ")]
    return lines


def _failure(test, lang, text, paint, with_code):
    name = test.nodeid.partition("::")[2] or test.name
    lines = [paint(f"x {name}", "31;1") + f"  [{test.category}]"]
    finding = test.finding or {}
    headline, cause, hint = finding.get("headline"), finding.get("cause"), finding.get("hint")
    if not headline:
        message = test.message(lang).split("\n")[0]
        return lines + wrap(message, indent="    ")
    lines += wrap(headline[lang], indent="    ")
    if cause:
        lines += wrap(text["cause"] + _first_sentences(cause[lang]), indent="    ")
    if hint:
        hint_lines = wrap(text["hint"] + hint[lang], indent="    ")
        lines += [paint(line, "36") for line in hint_lines]
    if with_code:
        shrunk = finding.get("shrunk") or {}
        code = shrunk.get("code") or finding.get("code")
        if code:
            lines.append("    " + (text["smallest"] if shrunk else text["program"]))
            code_lines = code.splitlines()
            for line in code_lines[:CODE_LINES]:
                lines.append(paint("        " + line[: WIDTH - 8], "2" if not line.startswith("print") else "0"))
            if len(code_lines) > CODE_LINES:
                lines.append("        " + text["more"].format(n=len(code_lines) - CODE_LINES))
    return lines


def _first_sentences(cause):
    """The cause without the trailing rule, which the report shows in full."""
    for marker in (" The rule: ", "正确的规则："):
        if marker in cause:
            return cause.split(marker)[0]
    return cause
