"""The summary printed after `make grade`: fits 80 columns, colour only on a TTY.

Per category the points earned and possible, then "N problems found" and one
short block per problem (grader/feedback/diagnose.py): what is wrong, where to
look in the student's file, what the numbers show, a nudge toward the concept,
the smallest program that shows it, and which tests and how many points it
costs; last, where the full report is. Every problem is there, however many.
Chinese text is wrapped by display width (a CJK character takes two columns).
"""

import os
import re
import sys
import unicodedata

from grader.i18n import bilingual, pick
from grader.points import points_text
from grader.exercise import category_name

NO_LINE_START = set("，。；：！？、）」』》,.;:!?)")
WIDTH = 80
CODE_LINES = 12
BAR = 20
TOKENS = re.compile(r"\s+|[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]|[^\s\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]+")

LABELS = {
    "score": bilingual("Score", "得分"),
    "passed": bilingual("All {total} tests passed.", "全部 {total} 个测试通过。"),
    "problems": bilingual("{n} problems found ({failed} of {total} tests failed):",
                          "发现 {n} 个问题（{total} 个测试中有 {failed} 个未通过）："),
    "problem": bilingual("1 problem found ({failed} of {total} tests failed):",
                         "发现 1 个问题（{total} 个测试中有 {failed} 个未通过）："),
    "where": bilingual("Where: ", "位置："),
    "hint": bilingual("Hint: ", "提示："),
    "smallest": bilingual("Smallest program that shows it:", "能重现这个问题的最小程序："),
    "program": bilingual("A program that shows it:", "能重现这个问题的程序："),
    "costs": bilingual("Costs {points} points ({categories}): {count} tests ({names}).",
                       "失去 {points} 分（{categories}）：{count} 个测试（{names}）。"),
    "costs_one": bilingual("Costs {points} points ({categories}): the test {names}.",
                           "失去 {points} 分（{categories}）：测试 {names}。"),
    "and_more": bilingual("and {n} more", "另有 {n} 个"),
    "report": bilingual("Full report: ", "完整报告："),
    "results": bilingual("Results file: ", "结果文件："),
    "isolation": bilingual("Isolation: ", "隔离级别："),
    "more": bilingual("... ({n} more lines)", "……（还有 {n} 行）"),
}
NAMED_TESTS = 2


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
    lines = []
    if result.problem:
        lines += [paint(line, "31;1") for line in wrap(pick(result.problem, lang))]
    else:
        colour = "32;1" if result.score >= result.max_score else "33;1"
        lines.append(paint(f"{pick(LABELS['score'], lang)} {points_text(result.score)} / "
                           f"{points_text(result.max_score)}", colour))
    lines.append("")
    for category, (earned, possible) in result.categories().items():
        filled = round(BAR * earned / possible) if possible else 0
        bar = paint("#" * filled, "32") + paint("." * (BAR - filled), "2")
        name = pick(category_name(category), lang)
        lines.append(f"  {name:<{14 - (width(name) - len(name))}}{points_text(earned):>7} / "
                     f"{points_text(possible):<6} {bar}")
    failed = [t for t in result.tests if not t.passed]
    if not result.problem:
        lines.append("")
        if not failed:
            lines.append(paint(pick(LABELS["passed"], lang, total=len(result.tests)), "32"))
        else:
            diagnoses = result.diagnoses()
            key = "problem" if len(diagnoses) == 1 else "problems"
            lines.append(pick(LABELS[key], lang, n=len(diagnoses), failed=len(failed), total=len(result.tests)))
            for number, diagnosis in enumerate(diagnoses, start=1):
                lines.append("")
                lines += _problem(number, diagnosis, lang, paint)
    for note in result.notes:
        lines.append("")
        lines += wrap(pick(note, lang))
    lines.append("")
    if html_path:
        lines += wrap(pick(LABELS["report"], lang) + str(html_path), subsequent="  ")
        lines += wrap(pick(LABELS["results"], lang) + str(results_path), subsequent="  ")
    else:
        lines += wrap(pick(LABELS["report"], lang) + str(results_path), subsequent="  ")
    # The level and why, not every layer: those are in the results' extra_data.
    level, _, layers = result.isolation.partition(": ")
    reason = layers[layers.rfind(" (") :] if layers.endswith(")") else ""
    lines += [paint(line, "2") for line in wrap(pick(LABELS["isolation"], lang) + level + reason, subsequent="  ")]
    return lines


def _problem(number, diagnosis, lang, paint):
    """One problem: what is wrong, where, the symptom, a nudge, the smallest program, what it costs."""
    lines = [paint(line, "31;1") for line in wrap(f"{number}. {pick(diagnosis.summary, lang)}", subsequent="   ")]
    if diagnosis.where:
        lines += wrap(pick(LABELS["where"], lang) + pick(diagnosis.where, lang), indent="   ")
    lines += wrap(pick(diagnosis.symptom, lang), indent="   ")
    if diagnosis.nudge:
        lines += [paint(line, "36") for line in wrap(pick(LABELS["hint"], lang) + pick(diagnosis.nudge, lang),
                                                     indent="   ")]
    if diagnosis.program:
        lines.append("   " + pick(LABELS["smallest" if diagnosis.smallest else "program"], lang))
        code_lines = diagnosis.program.splitlines()
        for line in code_lines[:CODE_LINES]:
            lines.append(paint("       " + line[: WIDTH - 7], "2" if not line.startswith("print") else "0"))
        if len(code_lines) > CODE_LINES:
            lines.append("       " + pick(LABELS["more"], lang, n=len(code_lines) - CODE_LINES))
    names = [t.nodeid.partition("::")[2] or t.name for t in diagnosis.tests]
    shown = ", ".join(names[:NAMED_TESTS])
    if len(names) > NAMED_TESTS:
        shown += ", " + pick(LABELS["and_more"], lang, n=len(names) - NAMED_TESTS)
    key = "costs" if len(names) > 1 else "costs_one"
    where = ", ".join(f"{pick(category_name(c), lang)} {points_text(p)}" for c, p in diagnosis.lost.items())
    lines += wrap(pick(LABELS[key], lang, points=points_text(diagnosis.points), categories=where,
                       count=len(names), names=shown), indent="   ")
    return lines
