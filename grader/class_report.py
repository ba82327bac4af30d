"""The class report: `grades.html` beside `grades.csv`, one self-contained page.

What changed since the last gradebook, the score distribution (an inline SVG
histogram), each category's average, the most common problems with how many
students have them, the smallest program that shows each and who has it, and
every student with a link to their own report. Offline: no script, and no
stylesheet, font or image from anywhere; Chinese and English with the
student report's CSS-only switch.

Everything shown comes from the gradebook's rows (grader/batch.py), each
student's results document (through grader/problems.py) and the changes
(grader/gradebook_changes.py). Student names and everything read from a
document are text: escaped with `esc`, never markup; a link's target is only
ever a file name of the results folder that batch chose (`results_names`).
"""

import json
import os
import stat
from pathlib import Path
from urllib.parse import quote

from grader import histogram
from grader.files import read_own, write_private
from grader.gradebook_changes import REASONS
from grader.html_report import both, esc
from grader.exercise import categories, category_name
from grader.i18n import LANGUAGES, bilingual, language, pick
from grader.points import exact_sum, points_text
from grader.problems import program_size, problems_of
from grader.text import one_line

NAME_LIMIT = 60  # characters of a name shown; the whole name is its title

WORDS = {
    "title": bilingual("Class report", "班级报告"),
    "suite": bilingual("Suite {s}", "测试集 {s}"),
    "contents": bilingual("Contents:", "目录："),
    "students": bilingual("Students", "学生"),
    "summary": bilingual("{n} students: {g} graded, {p} could not be loaded, {e} grader errors",
                "共 {n} 名学生：{g} 名已评分，{p} 份提交无法加载，{e} 份遇到评分器错误"),
    "average": bilingual("Average score {a} / {m}, median {d}", "平均分 {a} / {m}，中位数 {d}"),
    "changes": bilingual("Since the last gradebook", "与上次成绩单相比"),
    "first": bilingual("There was no earlier gradebook here: every student is new.", "这里之前没有成绩单：所有学生都是新的。"),
    "new": bilingual("New", "新增"),
    "regraded": bilingual("Regraded", "重新评分"),
    "unchanged": bilingual("Unchanged", "未变"),
    "removed": bilingual("Removed", "已移除"),
    "more": bilingual("and {n} more", "还有 {n} 名"),
    "distribution": bilingual("Score distribution", "分数分布"),
    "axis": bilingual("Students per score band (percent of the maximum); green: full marks. "
             "Grader errors are left out.", "各分数段（占满分的百分比）的学生人数；绿色为满分。不含评分器出错的提交。"),
    "categories": bilingual("Average per category", "各类别平均分"),
    "category": bilingual("Category", "类别"),
    "mean": bilingual("Average", "平均"),
    "full": bilingual("Full marks", "满分人数"),
    "problems": bilingual("Most common problems", "最常见的问题"),
    "no_problems": bilingual("Nobody lost a point.", "没有人失分。"),
    "nobody": bilingual("No graded submissions.", "没有已评分的提交。"),
    "no_students": bilingual("No students.", "没有学生。"),
    "problem": bilingual("Problem", "问题"),
    "their_problems": bilingual("Problems", "问题"),
    "op": bilingual("Where", "位置"),
    "count": bilingual("Students", "人数"),
    "share": bilingual("Share", "占比"),
    "lost": bilingual("Points lost (average)", "平均失分"),
    "smallest": bilingual("Smallest program that shows it:", "能重现它的最小程序："),
    "no_program": bilingual("No program was recorded for this problem.", "这个问题没有记录程序。"),
    "who": bilingual("Students who have it:", "有这个问题的学生："),
    "student": bilingual("Student", "学生"),
    "total": bilingual("Total / {m}", "总分 / {m}"),
    "total_only": bilingual("Total", "总分"),
    "status": bilingual("Status", "状态"),
    "change": bilingual("Change", "变化"),
    "graded": bilingual("graded", "已评分"),
    "problem_status": bilingual("not loaded", "无法加载"),
    "error": bilingual("grader error", "评分器错误"),
    "links": bilingual("Each name links to that student's own report in the results folder (its results JSON where "
              "no report was written); the points per category are in the CSV gradebook. Reports show hidden "
              "tests: do not hand them out before you publish the grades.",
              "每个名字链接到结果文件夹里该学生自己的报告（没有报告时链接到结果 JSON）；各类别的分数见 CSV 成绩单。"
              "报告包含隐藏测试：公布成绩之前不要发给学生。"),
}
SECTIONS = (("changes", "changes"), ("distribution", "distribution"), ("categories", "categories"),
            ("problems", "problems"), ("students", "students"))
STATUS_WORDS = {"graded": "graded", "problem": "problem_status", "error": "error"}

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI","PingFang SC","Microsoft YaHei",sans-serif;margin:0;
color:#1d1d1f;background:#fafafa;line-height:1.5}
main{max-width:1100px;margin:0 auto;padding:16px 20px 48px}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em;margin:.2em 0;overflow-wrap:anywhere}h3 code{font-size:1em}
nav.contents{margin:.4em 0 1em;color:#555}nav.contents a{margin:0 2px}
.switch{position:sticky;top:0;background:#fafafa;padding:6px 20px;border-bottom:1px solid #e5e5e5;z-index:1}
.switch label{cursor:pointer;padding:2px 10px;border:1px solid #bbb;border-radius:12px;margin-right:6px}
#lang-en:checked~.switch label[for=lang-en],#lang-zh:checked~.switch label[for=lang-zh]{background:#1d1d1f;color:#fff}
input[name=lang]{position:absolute;opacity:0}
#lang-en:checked~main .zh,#lang-zh:checked~main .en,#lang-en:checked~.switch .zh,#lang-zh:checked~.switch .en{display:none}
.meta{color:#555}
table{border-collapse:collapse;margin:8px 0;background:#fff}
td,th{padding:4px 10px;text-align:left;border-bottom:1px solid #eee;vertical-align:top}
th{background:#f3f3f3;font-weight:600}
td.num,th.num{text-align:right;white-space:nowrap}
td.name{min-width:14em;max-width:22em;overflow-wrap:break-word}
td.ids code{white-space:nowrap}td.status{white-space:nowrap}
table.students{font-size:.92em}table.students td,table.students th{padding:4px 7px}
.bar{width:160px;height:10px;background:#e6e6e6;border-radius:5px;overflow:hidden}
.bar div{height:10px;background:#43a047}
.chart{background:#fff;border:1px solid #e2e2e2;border-radius:6px;padding:8px}
svg.histogram{width:100%;max-width:760px;height:auto;display:block}
svg.histogram text{font-size:11px;fill:#444}svg.histogram text.count{font-weight:600;fill:#1d1d1f}
section.problem{background:#fff;border:1px solid #e2e2e2;border-left:5px solid #e08a1e;border-radius:6px;
padding:10px 16px;margin:14px 0}
pre{background:#272822;color:#f8f8f2;padding:10px;border-radius:6px;overflow-x:auto;font-size:.9em}
code{overflow-wrap:anywhere}
ul.names{margin:4px 0;padding:0;list-style:none;display:flex;flex-wrap:wrap;gap:2px 14px}
ul.names li{overflow-wrap:break-word;max-width:100%}
.changes td{overflow-wrap:anywhere}.changes th{white-space:nowrap}
.reason{display:block;font-weight:400;font-size:.85em;color:#555}
.table-wrap{overflow-x:auto}
"""


def report_path(out_csv):
    """grades.csv -> grades.html (never the CSV itself)."""
    out_csv = Path(out_csv)
    path = out_csv.with_suffix(".html")
    return path if path != out_csv else out_csv.with_name(out_csv.name + ".html")


def word(key, **values):
    return both({lang: pick(WORDS[key], lang, **values) for lang in LANGUAGES})


def write(out_csv, rows, names, results_dir, changes, suite, lang="en"):
    """Read each student's results document from `results_dir` (files named by
    `names`, batch's results_names) and write the class report beside `out_csv`."""
    documents, links = {}, {}
    for row in rows:
        name = names[row.student]
        documents[row.student] = _document(Path(results_dir) / f"{name}.json", row.student)
        report = ((documents[row.student] or {}).get("extra_data") or {}).get("batch", {}).get("report")
        own = f"{name}.html" if report == f"{name}.html" and _is_file(Path(results_dir) / report) else f"{name}.json"
        links[row.student] = f"{Path(results_dir).name}/{own}"
    page = render(rows, documents, links, changes, suite, lang)
    return write_private(report_path(out_csv), page)


def _document(path, student):
    try:
        data = json.loads(read_own(path) or "")
    except ValueError:
        return None
    extra = data.get("extra_data") if isinstance(data, dict) else None
    batch = extra.get("batch") if isinstance(extra, dict) else None
    return data if isinstance(batch, dict) and batch.get("student") == student else None


def _is_file(path):
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


# ------------------------------------------------------------------ page


def render(rows, documents, links, changes, suite, lang="en"):
    """The page, as a string: the same arguments give the same bytes."""
    rows = sorted(rows, key=lambda r: r.student)
    problems = {row.student: _problems(row, documents.get(row.student)) for row in rows}
    out = ["<!DOCTYPE html>",
           f'<html lang="{language(lang)}"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{esc(pick(WORDS['title'], lang))}</title><style>{STYLE}</style></head><body>",
           f'<input type="radio" name="lang" id="lang-zh"{" checked" if lang == "zh" else ""}>'
           f'<input type="radio" name="lang" id="lang-en"{"" if lang == "zh" else " checked"}>',
           '<div class="switch"><label for="lang-zh">中文</label><label for="lang-en">English</label></div>',
           "<main>", f"<h1>{word('title')}</h1>"]
    out.append(f'<nav class="contents">{word("contents")} ' + " · ".join(
        f'<a href="#{anchor}">{word(key)}</a>' for anchor, key in SECTIONS) + "</nav>")
    out.append(_overview(rows, suite))
    out.append(_changes(changes, links))
    graded = [r for r in rows if r.status != "error"]
    out.append(f'<h2 id="distribution">{word("distribution")}</h2>')
    if graded:
        out.append(f'<div class="chart">{histogram.svg([(r.score, r.max_score) for r in graded])}</div>')
        out.append(f'<p class="meta">{word("axis")}</p>')
    else:
        out.append(f"<p>{word('nobody')}</p>")
    out.append(_categories(graded, documents))
    out.append(_common_problems(rows, problems, links))
    out.append(_students(rows, problems, links, changes))
    out.append("</main></body></html>")
    return "\n".join(out) + "\n"


def _problems(row, document):
    if document is not None:
        return problems_of(document)
    return [{"id": key, "op": None, "summary": {"en": "", "zh": ""}, "tests": [], "points": 0.0, "program": ""}
            for key in row.problems]


def _overview(rows, suite):
    count = {status: sum(1 for r in rows if r.status == status) for status in ("graded", "problem", "error")}
    parts = [f'<p class="meta">{word("suite", s=suite)} · '
             f'{word("summary", n=len(rows), g=count["graded"], p=count["problem"], e=count["error"])}</p>']
    scored = sorted(r.score for r in rows if r.status != "error")
    if scored:
        middle = len(scored) // 2
        median = scored[middle] if len(scored) % 2 else (scored[middle - 1] + scored[middle]) / 2
        top = max(r.max_score for r in rows if r.status != "error")
        mean = _round(exact_sum(scored) / len(scored))
        parts.append(f"<p>{word('average', a=mean, m=points_text(top), d=_round(median))}</p>")
    return "\n".join(parts)


def _changes(changes, links):
    parts = [f'<h2 id="changes">{word("changes")}</h2>']
    if changes.first:
        parts.append(f"<p>{word('first')}</p>")
        return "\n".join(parts)
    by_reason = {}
    for student in sorted(changes.regraded):
        by_reason.setdefault(changes.regraded[student], []).append(student)
    lines = [("new", "", word("new"), changes.new, True)]
    lines += [("regraded", reason, f'{word("regraded")}<span class="reason">{both(REASONS[reason])}</span>',
               names, True) for reason, names in sorted(by_reason.items())]
    if not by_reason:
        lines.append(("regraded", "", word("regraded"), [], True))
    lines += [("unchanged", "", word("unchanged"), changes.unchanged, False),
              ("removed", "", word("removed"), changes.removed, True)]
    table = ['<table class="changes">']
    for key, reason, label, names, shown in lines:
        why = f' data-reason="{reason}"' if reason else ""
        table.append(f'<tr data-change="{key}"{why} data-count="{len(names)}"><th>{label}</th>'
                     f'<td class="num">{len(names)}</td><td>{_some(names, links) if shown else ""}</td></tr>')
    table.append("</table>")
    return "\n".join(parts + table)


def _some(students, links, inline=20):
    """Names (linked where the student is in the gradebook); beyond `inline`, folded away."""
    shown = ", ".join(_link(s, links) for s in students[:inline])
    if len(students) <= inline:
        return shown
    rest = ", ".join(_link(s, links) for s in students[inline:])
    return f"{shown} <details><summary>{word('more', n=len(students) - inline)}</summary>{rest}</details>"


def _categories(rows, documents):
    present = [c for c in categories() if any(c in r.categories for r in rows)]
    if not rows or not present:
        return f'<h2 id="categories">{word("categories")}</h2><p>{word("nobody")}</p>'
    possible = {}
    for document in documents.values():
        for name, value in (((document or {}).get("extra_data") or {}).get("categories") or {}).items():
            if isinstance(value, dict) and isinstance(value.get("max_score"), (int, float)):
                possible[name] = max(possible.get(name, 0.0), float(value["max_score"]))
    table = [f'<h2 id="categories">{word("categories")}</h2>', '<table class="categories">',
             f"<tr><th>{word('category')}</th><th class=\"num\">{word('mean')}</th><th></th>"
             f"<th class=\"num\">{word('full')}</th></tr>"]
    for category in present:
        earned = [r.categories.get(category, 0.0) for r in rows]
        mean = exact_sum(earned) / len(earned)
        top = possible.get(category, 0.0)
        percent = 100 * mean / top if top else 0
        full = sum(1 for e in earned if top and e >= top)
        table.append(f'<tr data-category="{esc(category)}"><td>{both(category_name(category))}</td>'
                     f'<td class="num" data-average="{_round(mean)}">{_round(mean)} / {esc(points_text(top))}</td>'
                     f'<td><div class="bar"><div style="width:{percent:.0f}%"></div></div></td>'
                     f'<td class="num">{full}</td></tr>')
    table.append("</table>")
    return "\n".join(table)


def class_problems(problems):
    """{id: {"students", "ops", "points", "summary", "program"}} over every student's
    problems ({student: problems_of(...)}), most common first (then most points, then id)."""
    found = {}
    for student in sorted(problems):
        for problem in problems[student]:
            entry = found.setdefault(problem["id"], {"students": [], "ops": set(), "points": [], "instances": []})
            if student not in entry["students"]:
                entry["students"].append(student)
            if problem["op"]:
                entry["ops"].add(problem["op"])
            entry["points"].append(problem["points"])
            entry["instances"].append(problem)
    for entry in found.values():
        best = min(entry["instances"], key=lambda p: program_size(p["program"]))  # the first of equals
        entry.update(summary=best["summary"], program=best["program"], ops=sorted(entry["ops"]),
                     points=exact_sum(entry["points"]))
        del entry["instances"]
    order = sorted(found, key=lambda key: (-len(found[key]["students"]), -found[key]["points"], key))
    return {key: found[key] for key in order}


def _common_problems(rows, problems, links):
    common = class_problems(problems)
    parts = [f'<h2 id="problems">{word("problems")}</h2>']
    if not common:
        parts.append(f"<p>{word('no_problems' if rows else 'no_students')}</p>")
        return "\n".join(parts)
    table = ['<div class="table-wrap"><table class="problems">',
             f"<tr><th>{word('problem')}</th><th>{word('op')}</th><th class=\"num\">{word('count')}</th>"
             f"<th class=\"num\">{word('share')}</th><th class=\"num\">{word('lost')}</th></tr>"]
    sections = []
    for number, (key, entry) in enumerate(common.items(), start=1):
        count = len(entry["students"])
        share = _percent(count, len(rows))
        ops = ", ".join(esc(op) for op in entry["ops"])
        table.append(f'<tr data-problem="{esc(key)}" data-count="{count}"><td><a href="#problem-{number}">'
                     f"<code>{esc(key)}</code></a></td><td><code>{ops}</code></td><td class=\"num\">{count}</td>"
                     f'<td class="num">{share}</td><td class="num">{_round(entry["points"] / count)}</td></tr>')
        summary = entry["summary"]
        program = (f"<p><b>{word('smallest')}</b></p><pre>{esc(entry['program'])}</pre>" if entry["program"]
                   else f'<p class="meta">{word("no_program")}</p>')
        sections.append(f'<section class="problem" id="problem-{number}"><h3><code>{esc(key)}</code>'
                        + (f" · <code>{ops}</code>" if ops else "") + f" · {count} ({share})</h3>"
                        + (f"<p>{both({'en': summary['en'], 'zh': summary['zh'] or summary['en']})}</p>" if summary["en"] else "")
                        + program + f"<p><b>{word('who')}</b></p>" + _names(entry["students"], links)
                        + "</section>")
    table.append("</table></div>")
    return "\n".join(parts + table + sections)


def _names(students, links):
    return '<ul class="names">' + "".join(f"<li>{_link(s, links)}</li>" for s in students) + "</ul>"


def _link(student, links):
    """The student's name (shortened to NAME_LIMIT, whole in its title) linking to their report."""
    shown = esc(one_line(student, NAME_LIMIT))
    title = f' title="{esc(student)}"' if one_line(student, NAME_LIMIT) != student else ""
    target = links.get(student)
    if not target:
        return f"<span{title}>{shown}</span>"
    return f'<a href="{esc(quote(target))}"{title}>{shown}</a>'


def _students(rows, problems, links, changes):
    top = max((r.max_score for r in rows), default=0.0)
    table = [f'<h2 id="students">{word("students")} ({len(rows)})</h2>', f'<p class="meta">{word("links")}</p>',
             '<div class="table-wrap"><table class="students">',
             f"<tr><th>{word('student')}</th>"
             f"<th class=\"num\">{word('total', m=points_text(top)) if rows else word('total_only')}</th>"
             + f"<th>{word('status')}</th><th>{word('their_problems')}</th><th>{word('change')}</th></tr>"]
    for row in rows:
        ids = sorted({p["id"] for p in problems[row.student]})
        table.append(f'<tr data-student="{esc(row.student)}"><td class="name">{_link(row.student, links)}</td>'
                     f'<td class="num">{esc(points_text(row.score))}'
                     + (f" / {esc(points_text(row.max_score))}" if row.max_score != top else "") + "</td>"
                     + f"<td class=\"status\">{word(STATUS_WORDS.get(row.status, 'error'))}</td>"
                     + f"<td class=\"ids\">{' '.join(f'<code>{esc(i)}</code>' for i in ids)}</td>"
                     + f"<td>{word(changes.status(row.student))}</td></tr>")
    table.append("</table></div>")
    return "\n".join(table)


def _percent(part, whole):
    """A share for people: whole percents, one decimal under 10% (0.5%, not 0%)."""
    value = 100 * part / whole
    return f"{value:.0f}%" if value >= 10 else f"{_round(value, 1)}%"


def _round(value, digits=2):
    """A number for people: at most `digits` decimals, no trailing zeros."""
    return f"{value:.{digits}f}".rstrip("0").rstrip(".")
