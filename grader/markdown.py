"""Markdown views of a result: Gradescope's top-level output and the GitHub step summary.

Everything a submission controls (its file name, what it printed, messages of
its exceptions) is escaped, or shown inside a code fence longer than any run
of backticks in it, so a `print("<b>")` stays text.

`gradescope_output` shows only what a student may see now: the visible tests.
`summary` (written to $GITHUB_STEP_SUMMARY by the Classroom workflow: what a
student reads first on the Actions page) shows the kit's score per category and
every distinct problem found, each with the tests it failed and its smallest
program.
"""

import re

from grader.exercise import category_label
from grader.i18n import bilingual, both_in, pick
from grader.points import points_text, score_line

SPECIAL = re.compile(r"([\\`*_\[\]#|~!])")

WORDS = {
    "score": bilingual("Score", "得分"),
    "category": bilingual("Category", "类别"),
    "points": bilingual("Points", "分数"),
    "visible": bilingual("the tests you can see now", "现在能看到的测试"),
    "later": bilingual("More tests are graded; they and your total are shown when your instructor publishes "
                       "the grades.", "还有更多测试计入成绩；老师发布成绩后，你会看到它们和总分。"),
    "printed": bilingual("What your code printed (capped)", "你的代码打印的内容（已截断）"),
    "problems": bilingual("What to fix", "需要改的地方"),
    "none": bilingual("Every test passed.", "所有测试都通过了。"),
    "tests": bilingual("Tests", "测试"),
    "lost": bilingual("points lost", "失分"),
    "smallest": bilingual("Smallest program that shows it", "能重现这个问题的最小程序"),
    "program": bilingual("A program that shows it", "能重现这个问题的程序"),
    "isolation": bilingual("Isolation", "隔离级别"),
    "hint": bilingual("Hint", "提示"),
    "where": bilingual("Where", "位置"),
    "failed": bilingual("{n} of {total} tests failed, {k} distinct problem(s):",
                        "{total} 个测试中有 {n} 个未通过，共 {k} 个不同的问题："),
}
COLON = bilingual(": ", "：")


CODE_SPAN = re.compile(r"(`[^`\n]+`)")


def escape(text):
    """Text that Markdown shows as it is (no markup, no HTML), except that `code`
    stays a code span (whose content Markdown never interprets)."""
    parts = CODE_SPAN.split(str(text))
    return "".join(part if index % 2 else _plain(part) for index, part in enumerate(parts))


def _plain(text):
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return SPECIAL.sub(r"\\\1", text)


def fence(text, info=""):
    """A fenced code block that `text` cannot close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{info}\n{text.rstrip()}\n{marks}"


def _word(key, lang, **values):
    return pick(WORDS[key], lang, **values)


def _both(pair, lang):
    return both_in({code: escape(text) for code, text in pair.items()}, lang, "  \n")


def _category_table(categories, lang):
    rows = [f"| {_word('category', lang)} | {_word('points', lang)} |", "| --- | --- |"]
    rows += [f"| {escape(category_label(c, lang))} | {points_text(e)} / {points_text(p)} |"
             for c, (e, p) in categories.items()]
    return "\n".join(rows)


def _printed(result, lang):
    if not result.printed.strip():
        return []
    return [f"**{escape(_word('printed', lang))}**", fence(result.printed, "text")]


def _notes(result, lang):
    return [escape(pick(note, lang)) for note in result.notes]


def gradescope_output(result, lang="en"):
    """Gradescope's top-level output (output_format "md"): the visible tests only, kept
    short (each test's own output says what to fix)."""
    visible = [t for t in result.tests if not t.hidden]
    blocks = []
    if result.problem:
        blocks.append("**" + _both(result.problem, lang) + "**")
    else:
        line = score_line(visible, result.categories(visible), lang, name=category_label)
        if len(visible) < len(result.tests):
            line += f" · {_word('visible', lang)}"
        blocks.append(f"**{escape(line)}**")
    if len(visible) < len(result.tests):
        blocks.append(escape(_word("later", lang)))
    blocks += _notes(result, lang) + _printed(result, lang)
    return "\n\n".join(blocks) + "\n"


def summary(result, lang="en"):
    """The whole result as a Markdown page: score, categories, every problem (one per mistake)."""
    blocks = [f"## {escape(_word('score', lang))} {points_text(result.score)} / {points_text(result.max_score)}"]
    if result.problem:
        blocks.append("**" + _both(result.problem, lang) + "**")
    blocks.append(_category_table(result.categories(), lang))
    blocks += _notes(result, lang)
    failed = [t for t in result.tests if not t.passed]
    if not failed:
        blocks.append(escape(_word("none", lang)))
    elif not result.problem:
        diagnoses = result.diagnoses()
        blocks.append(f"### {escape(_word('problems', lang))}")
        blocks.append(escape(_word("failed", lang, n=len(failed), total=len(result.tests), k=len(diagnoses))))
        for number, diagnosis in enumerate(diagnoses, start=1):
            blocks += _problem(number, diagnosis, lang)
    blocks += _printed(result, lang)
    level = result.isolation.partition(": ")[0]
    if level:
        blocks.append(f"{escape(_word('isolation', lang))}{pick(COLON, lang)}{escape(level)}")
    return "\n\n".join(blocks) + "\n"


def _problem(number, diagnosis, lang):
    """One problem: what is wrong, where, what the numbers show, a nudge, the tests and points, the program."""
    colon = pick(COLON, lang)
    lines = [f"**{number}. {escape(pick(diagnosis.summary, lang))}**"]
    if diagnosis.where:
        lines.append(f"{escape(_word('where', lang))}{colon}{escape(pick(diagnosis.where, lang))}")
    lines.append(escape(pick(diagnosis.symptom, lang)))
    if diagnosis.nudge:
        lines.append(f"{escape(_word('hint', lang))}{colon}{escape(pick(diagnosis.nudge, lang))}")
    names = ", ".join(f"`{t.name}`" for t in diagnosis.tests)
    lines.append(f"{escape(_word('tests', lang))} ({len(diagnosis.tests)}, {points_text(diagnosis.points)} "
                 f"{escape(_word('lost', lang))}){colon}{names}")
    if diagnosis.program:
        lines.append(escape(_word("smallest" if diagnosis.smallest else "program", lang)) + colon.strip())
        lines.append(fence(diagnosis.program, "python"))
    return lines
