"""The HTML report: one self-contained page, readable offline, in Chinese and English.

Score per category, then one card per problem (grader/feedback/diagnose.py):
what is wrong and where, what the numbers show, a nudge, a drawing of the
smallest failing graph (grader/drawing.py) and the program that builds it, the
rule spelled out (folded), and the tests it explains (folded). The page has no
script, no stylesheet, font or image from anywhere else. Both languages are in
the page; a CSS-only switch shows one.
"""


from grader.drawing import Drawer, GraphData, esc
from grader.files import write_private
from grader.i18n import bilingual, language, pick
from grader.points import points_text
from grader.exercise import category_name

MAX_DRAWN_NODES = 24  # a larger graph is not drawn (the smallest failing program is shown instead)

WORDS = {
    "title": bilingual("Grading report", "评分报告"),
    "score": bilingual("Score", "得分"),
    "category": bilingual("Category", "类别"),
    "points": bilingual("Points", "分数"),
    "problems": bilingual("Problems found", "发现的问题"),
    "passed": bilingual("Passed tests", "通过的测试"),
    "none_failed": bilingual("Every test passed.", "所有测试都通过了。"),
    "where": bilingual("Where", "位置"),
    "hint": bilingual("Hint", "提示"),
    "rule": bilingual("The rule", "规则"),
    "smallest": bilingual("Smallest program that shows it", "能重现这个问题的最小程序"),
    "program": bilingual("A program that shows it", "能重现这个问题的程序"),
    "graph": bilingual("The smallest failing graph", "最小的出错计算图"),
    "too_big": bilingual("This graph has {n} nodes, too many to draw; the program shows it.",
                         "这个计算图有 {n} 个节点，太大了，不画出来；请看程序。"),
    "legend": bilingual("Each box is a node: its op, its data, and its grad. \u201cgrad 2 \u2260 3\u201d means your grad "
                        "is 2 and the expected one is 3. Red: the culprit, the node whose _backward sent a wrong value. "
                        "Orange: a node with a wrong value.",
                        "每个方框是一个节点：它的运算、data 和 grad。\u201cgrad 2 \u2260 3\u201d 表示你的 grad 是 2，"
                        "应为 3。红色：出错的源头，即它的 _backward 传出了错误的值。橙色：值不对的节点。"),
    "costs": bilingual("costs {p} points", "失去 {p} 分"),
    "tests": bilingual("Tests that show it ({n})", "体现这个问题的测试（{n} 个）"),
    "isolation": bilingual("Isolation", "隔离级别"),
    "submission": bilingual("Submission", "提交"),
    "printed": bilingual("What your code printed (capped)", "你的代码打印的内容（已截断）"),
}


def both(text, tag="span"):
    """A bilingual text as two elements, one per language (the switch shows one)."""
    return f'<{tag} class="en" lang="en">{esc(text["en"])}</{tag}><{tag} class="zh" lang="zh">{esc(text["zh"])}</{tag}>'


def word(key, **values):
    text = WORDS[key]
    return both({lang: pick(text, lang, **values) for lang in ("en", "zh")})


STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI","PingFang SC","Microsoft YaHei",sans-serif;margin:0;
color:#1d1d1f;background:#fafafa;line-height:1.5}
main{max-width:1100px;margin:0 auto;padding:16px 20px 48px}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin:.2em 0}
.switch{position:sticky;top:0;background:#fafafa;padding:6px 20px;border-bottom:1px solid #e5e5e5;z-index:1}
.switch label{cursor:pointer;padding:2px 10px;border:1px solid #bbb;border-radius:12px;margin-right:6px}
#lang-en:checked~.switch label[for=lang-en],#lang-zh:checked~.switch label[for=lang-zh]{background:#1d1d1f;color:#fff}
input[name=lang]{position:absolute;opacity:0}
#lang-en:checked~main .zh,#lang-zh:checked~main .en,#lang-en:checked~.switch .zh,#lang-zh:checked~.switch .en{display:none}
.score{font-size:2em;font-weight:700}
table.categories{border-collapse:collapse;margin:8px 0}
table.categories td,table.categories th{padding:4px 12px;text-align:left}
.bar{width:220px;height:10px;background:#e6e6e6;border-radius:5px;overflow:hidden}
.bar div{height:10px;background:#43a047}
section.problem{background:#fff;border:1px solid #e2e2e2;border-left:5px solid #c62828;border-radius:6px;
padding:10px 16px;margin:14px 0}
.meta{color:#666;font-size:.9em}
.hint{background:#e8f4fd;border-left:4px solid #1e88e5;padding:6px 10px;margin:8px 0}
.rule{background:#f6f6f6;padding:6px 10px;margin:8px 0}
.problem-load{background:#fde4e4;padding:8px 12px;border-radius:6px}
pre{background:#272822;color:#f8f8f2;padding:10px;border-radius:6px;overflow-x:auto;font-size:.9em}
.drawing{overflow-x:auto;background:#fff;border:1px solid #eee;border-radius:6px;padding:6px;margin:8px 0}
.drawing svg{max-width:none;height:auto}
svg.graph text{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px}
details{margin:8px 0}summary{cursor:pointer;color:#444}
ul.passed{columns:2;font-size:.9em;color:#2e7d32}
.legend{font-size:.85em;color:#555}
"""


def render(result, lang="en", use_dot=True):
    """The report page for a GradeResult, as a string."""
    drawer = Drawer(use_dot)
    out = []
    checked_en = " checked" if lang != "zh" else ""
    checked_zh = " checked" if lang == "zh" else ""
    out.append("<!DOCTYPE html>")
    out.append(f'<html lang="{language(lang)}"><head><meta charset="utf-8">')
    out.append('<meta name="viewport" content="width=device-width, initial-scale=1">')
    out.append(f"<title>{esc(pick(WORDS['title'], lang))}</title><style>{STYLE}</style></head><body>")
    out.append(f'<input type="radio" name="lang" id="lang-zh"{checked_zh}>'
               f'<input type="radio" name="lang" id="lang-en"{checked_en}>')
    out.append('<div class="switch"><label for="lang-zh">中文</label><label for="lang-en">English</label></div>')
    out.append("<main>")
    out.append(f"<h1>{word('title')}</h1>")
    out.append(f'<p class="meta">{word("submission")}: {esc(result.submission)} · suite {esc(result.suite)}</p>')
    if result.problem:
        out.append(f'<p class="problem-load">{both(result.problem)}</p>')
    out.append(f'<p><span class="score">{esc(points_text(result.score))} / {esc(points_text(result.max_score))}</span></p>')
    out.append(_categories(result))
    for note in result.notes:
        out.append(f"<p>{both(note)}</p>")
    failures = [t for t in result.tests if not t.passed]
    diagnoses = result.diagnoses() if failures else []
    out.append(f"<h2>{word('problems')} ({len(diagnoses)})</h2>")
    if not failures:
        out.append(f"<p>{word('none_failed')}</p>")
    elif any(d.program for d in diagnoses):
        out.append(f'<p class="legend">{word("legend")}</p>')
    for number, diagnosis in enumerate(diagnoses, start=1):
        out.append(_problem_section(number, diagnosis, drawer))
    passed = [t for t in result.tests if t.passed]
    if passed:
        out.append(f"<h2>{word('passed')} ({len(passed)})</h2><details><summary>{word('passed')}</summary>"
                   '<ul class="passed">')
        out += [f"<li>{_test_title(t)}</li>" for t in passed]
        out.append("</ul></details>")
    if result.printed.strip():
        out.append(f"<h2>{word('printed')}</h2><pre>{esc(result.printed)}</pre>")
    out.append(f'<p class="meta">{word("isolation")}: {esc(result.isolation)}</p>')
    out.append("</main></body></html>")
    return "\n".join(out)


def write(result, path, lang="en", use_dot=True):
    return write_private(path, render(result, lang, use_dot))


def _categories(result):
    rows = [f"<tr><th>{word('category')}</th><th>{word('points')}</th><th></th></tr>"]
    for category, (earned, possible) in result.categories().items():
        percent = 100 * earned / possible if possible else 0
        rows.append(f"<tr><td>{both(category_name(category))}</td>"
                    f"<td>{esc(points_text(earned))} / {esc(points_text(possible))}</td>"
                    f'<td><div class="bar"><div style="width:{percent:.0f}%"></div></div></td></tr>')
    return '<table class="categories">' + "".join(rows) + "</table>"


def _problem_section(number, diagnosis, drawer):
    parts = [f'<section class="problem" id="problem-{number}">',
             f"<h3>{number}. {both(diagnosis.summary)}</h3>"]
    meta = [word("costs", p=points_text(diagnosis.points))]
    if diagnosis.where:
        meta.insert(0, f"{word('where')}: {both(diagnosis.where)}")
    parts.append(f'<p class="meta">{" · ".join(meta)}</p>')
    parts.append(f"<p>{both(diagnosis.symptom)}</p>")
    if diagnosis.nudge:
        parts.append(f'<div class="hint"><b>{word("hint")}:</b> {both(diagnosis.nudge)}</div>')
    graph = _graph_of(diagnosis)
    if graph is not None:
        parts.append(f"<p><b>{word('graph')}</b></p>")
        parts.append(_drawing(graph, drawer))
    if diagnosis.program:
        label = "smallest" if diagnosis.smallest else "program"
        parts.append(f"<p><b>{word(label)}:</b></p><pre>{esc(diagnosis.program)}</pre>")
    if diagnosis.explanation:
        parts.append(f'<details><summary>{word("rule")}</summary><div class="rule">{both(diagnosis.explanation)}'
                     "</div></details>")
    items = "".join(f"<li>{_test_title(t)} "
                    f'<span class="meta">{both(category_name(t.category))} · {esc(points_text(t.max_score))}</span></li>'
                    for t in diagnosis.tests)
    parts.append(f"<details><summary>{word('tests', n=len(diagnosis.tests))}</summary><ul>{items}</ul></details>")
    parts.append("</section>")
    return "\n".join(parts)


def _test_title(test):
    """The test's name, and what it checks in each language."""
    if not test.doc:
        return esc(test.name)
    return f"<code>{esc(test.name)}</code>: {both(test.doc)}"


def _graph_of(diagnosis):
    """The smallest failing graph of a problem: its shrunk program's, else the test's own."""
    finding = diagnosis.finding or {}
    shrunk = finding.get("shrunk") or {}
    source = shrunk if shrunk.get("steps") else finding
    return GraphData(source) if source.get("steps") else None


def _drawing(graph, drawer):
    if len(graph) > MAX_DRAWN_NODES:
        return f"<p>{word('too_big', n=len(graph))}</p>"
    if not len(graph):
        return ""
    return f'<div class="drawing">{drawer.draw(graph)}</div>'
