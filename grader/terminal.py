"""The summary printed after `make grade`: fits 80 columns, colour only on a TTY."""

import os
import sys
import textwrap

WIDTH = 80
SHOWN_FAILURES = 3


def _paint(text, code, stream):
    if stream.isatty() and not os.environ.get("NO_COLOR"):
        return f"\033[{code}m{text}\033[0m"
    return text


def summary(result, lang, results_path, stream=None):
    stream = stream or sys.stdout
    zh = lang == "zh"
    lines = []
    first = result.first_line(lang)
    colour = "32" if result.score >= result.max_score and not result.problem else ("31" if result.problem else "33")
    lines += textwrap.wrap(first, WIDTH) or [first]
    lines[0] = _paint(lines[0], colour, stream)
    lines.append("")
    for category, (earned, possible) in result.categories().items():
        bar = "#" * round(20 * earned / possible) if possible else ""
        lines.append(f"  {category:<13} {earned:>6g} / {possible:<6g} {bar:<20}")
    failures = [t for t in result.tests if not t.passed]
    if failures and not result.problem:
        lines.append("")
        lines.append(("未通过的测试 (前 %d 个，共 %d 个)：" if zh else "First %d of %d failed tests:")
                     % (min(SHOWN_FAILURES, len(failures)), len(failures)))
        for test in failures[:SHOWN_FAILURES]:
            lines.append(_paint(f"- {test.nodeid.partition('::')[2]} [{test.category}]", "1", stream))
            message = test.message(lang).split(" Program")[0]
            lines += textwrap.wrap(message, WIDTH, initial_indent="    ", subsequent_indent="    ")
    for note in result.notes:
        lines += textwrap.wrap(note["zh" if zh else "en"], WIDTH)
    lines.append("")
    lines.append(("隔离级别：" if zh else "Isolation: ") + result.isolation)
    lines.append(("完整报告：" if zh else "Full report: ") + str(results_path))
    print("\n".join(lines), file=stream)
