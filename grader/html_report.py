"""The HTML report: one self-contained page, readable offline, in Chinese and English.

Score per category, then every failed test with its explanation (what is wrong,
the culprit, the rule, the hint) and a drawing of the failing graph: each node
with its op, data, and grad (yours and the expected one), the culprit in red.
The drawing is made by Graphviz (`dot -Tsvg`, inlined) when it is installed,
else by a small layered layout of our own in inline SVG; either way the page
has no script, no stylesheet, font or image from anywhere else. Both languages
are in the page; a CSS-only switch shows one.

All data comes from the result model (grader/results.py): each failed test's
`finding` is the plain dict of grader.feedback.finding.Finding.as_dict().
"""

import html
import re
import shutil
import subprocess
from pathlib import Path

from grader.files import write_private
from grader.points import points_text
from grader.program import render_step
from grader.exercise import EXERCISE

MAX_DRAWN_NODES = 60  # larger graphs are described, not drawn
MAX_DOT_GRAPHS = 60  # beyond this, the (instant) fallback drawing is used
DOT_SECONDS = 5
NODE_KINDS = EXERCISE.node_kinds

WORDS = {
    "title": ("Grading report", "评分报告"),
    "score": ("Score", "得分"),
    "category": ("Category", "类别"),
    "points": ("Points", "分数"),
    "failed": ("Failed tests", "未通过的测试"),
    "passed": ("Passed tests", "通过的测试"),
    "none_failed": ("Every test passed.", "所有测试都通过了。"),
    "cause": ("Cause", "原因"),
    "rule": ("Rule", "规则"),
    "hint": ("Hint", "提示"),
    "calls": ("Calls that show it", "能看出问题的调用"),
    "smallest": ("Smallest program that fails the same way", "以同样方式出错的最小程序"),
    "program": ("A program that shows it", "能重现问题的程序"),
    "graph_small": ("The smallest failing graph", "最小的出错计算图"),
    "graph_test": ("The test's graph", "测试用的计算图"),
    "too_big": ("The graph has {n} nodes: too many to draw; see the program.",
                "这个图有 {n} 个节点，太大了，不画出来；请看程序。"),
    "legend": ("Each box is a node: its op, its data, and its grad. \u201cgrad 2 \u2260 3\u201d means your grad "
               "is 2 and the expected one is 3. Red: the culprit, the node whose _backward sent a wrong value. "
               "Orange: a node with a wrong value.",
               "每个方框是一个节点：它的运算、data 和 grad。\u201cgrad 2 \u2260 3\u201d 表示你的 grad 是 2，"
               "应为 3。红色：出错的源头，即它的 _backward 传出了错误的值。橙色：值不对的节点。"),
    "lost": ("lost {p} points", "失去 {p} 分"),
    "isolation": ("Isolation", "隔离级别"),
    "submission": ("Submission", "提交"),
    "printed": ("What your code printed (capped)", "你的代码打印的内容（已截断）"),
}


def esc(text):
    """Escape for HTML text and attributes; also '/', ':' and '=' (which display the
    same), so that nothing a submission printed can form a URL or an attribute."""
    return html.escape(str(text), quote=True).replace("/", "&#47;").replace(":", "&#58;").replace("=", "&#61;")


def both(en, zh, tag="span"):
    return f'<{tag} class="en" lang="en">{esc(en)}</{tag}><{tag} class="zh" lang="zh">{esc(zh)}</{tag}>'


def word(key, **values):
    en, zh = WORDS[key]
    return both(en.format(**values), zh.format(**values))


def number(value):
    if isinstance(value, dict):
        return value.get("nonfinite") or value.get("not_a_number", "?")
    if isinstance(value, (int, float)):
        return f"{value:.6g}"
    return "?"


# ------------------------------------------------------------------ graphs


class GraphData:
    """What a drawing needs, read from a finding dict (or its `shrunk`)."""

    def __init__(self, finding):
        self.steps = finding.get("steps") or []
        self.node_steps = [s for s in self.steps if s[0] in NODE_KINDS]
        self.expected = finding.get("expected") or []
        self.got = finding.get("got")
        self.culprits = set(finding.get("culprits") or [])
        self.wrong = set(finding.get("wrong_nodes") or [])
        self.blamed_edges = {(b.get("input"), b.get("node")) for b in finding.get("blame") or [] if b.get("input") is not None}
        self.duals = set()
        for number_, step in enumerate(self.node_steps):
            if step[0] == "dual" or (step[0] == "op" and any(isinstance(a, str) and int(a[1:]) in self.duals
                                                             for a in step[2:])):
                self.duals.add(number_)

    def __len__(self):
        return len(self.node_steps)

    def inputs(self, n):
        step = self.node_steps[n]
        return [int(a[1:]) for a in step[2:] if isinstance(a, str)] if step[0] == "op" else []

    def lines(self, n):
        """Label lines: [(text, state)], state in "", "ok", "bad"."""
        step = self.node_steps[n]
        code = render_step(step)
        lines = [(f"n{n} = {code}", "title")]
        first, second = ("val", "der") if n in self.duals else ("data", "grad")
        if n < len(self.expected):
            want = self.expected[n]
            have = self.got[n] if self.got and n < len(self.got) else None
            for index, name in ((0, first), (1, second)):
                if have is None:
                    lines.append((f"{name} {number(want[index])}", ""))
                elif _same(want[index], have[index]):
                    lines.append((f"{name} {number(have[index])} \u2713", "ok"))
                else:
                    lines.append((f"{name} {number(have[index])} \u2260 {number(want[index])}", "bad"))
        return lines

    def state(self, n):
        if n in self.culprits:
            return "culprit"
        if n in self.wrong or any(s == "bad" for _, s in self.lines(n)):
            return "wrong"
        return "ok"


def _same(a, b):
    if isinstance(a, dict) or isinstance(b, dict):
        return a == b
    return abs(a - b) <= 1e-9 + 1e-6 * abs(a)


COLOURS = {  # fill, border
    "ok": ("#f3f8f3", "#8aa58a"),
    "wrong": ("#fff1e0", "#e08a1e"),
    "culprit": ("#fde4e4", "#c62828"),
}


def dot_source(graph):
    lines = ["digraph G {", '  rankdir=LR; bgcolor="transparent"; nodesep=0.25; ranksep=0.45;',
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, margin="0.08,0.04"];',
             '  edge [color="#777777", arrowsize=0.6];']
    for n in range(len(graph)):
        state = graph.state(n)
        fill, border = COLOURS[state]
        rows = []
        for text, kind in graph.lines(n):
            cell = html.escape(text)
            if kind == "title":
                cell = f"<B>{cell}</B>"
            elif kind == "bad":
                cell = f'<FONT COLOR="#b71c1c">{cell}</FONT>'
            rows.append(f'<TR><TD ALIGN="LEFT">{cell}</TD></TR>')
        label = '<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="1">' + "".join(rows) + "</TABLE>"
        width = 2.5 if state == "culprit" else 1
        lines.append(f'  n{n} [label=<{label}>, fillcolor="{fill}", color="{border}", penwidth={width}];')
    for n in range(len(graph)):
        for parent in graph.inputs(n):
            if (parent, n) in graph.blamed_edges:
                lines.append(f'  n{parent} -> n{n} [color="#c62828", penwidth=2.2, dir=back, arrowtail=normal];')
            else:
                lines.append(f"  n{parent} -> n{n};")
    lines.append("}")
    return "\n".join(lines)


class Drawer:
    """Makes inline SVG drawings, with Graphviz while it is there and allowed."""

    def __init__(self, use_dot=True):
        self.dot = shutil.which("dot") if use_dot else None
        self.dot_graphs = 0
        self.cache = {}

    def draw(self, graph):
        if self.dot and self.dot_graphs < MAX_DOT_GRAPHS:
            source = dot_source(graph)
            if source not in self.cache:
                self.dot_graphs += 1
                self.cache[source] = self._run_dot(source)
            if self.cache[source]:
                return self.cache[source]
        return fallback_svg(graph)

    def _run_dot(self, source):
        try:
            done = subprocess.run([self.dot, "-Tsvg"], input=source.encode("utf-8"), capture_output=True,
                                  timeout=DOT_SECONDS, check=False)
        except (OSError, subprocess.SubprocessError):
            self.dot = None
            return None
        if done.returncode != 0:
            return None
        return clean_svg(done.stdout.decode("utf-8", errors="replace"))


def clean_svg(svg):
    """Graphviz's SVG as an inline element: no prolog, doctype, comments or namespace URLs."""
    start = svg.find("<svg")
    if start < 0:
        return None
    svg = svg[start:]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = re.sub(r'\s+xlink:\w+="[^"]*"', "", svg)
    svg = re.sub(r"<title>[^<]*</title>", "", svg)
    if re.search(r"https?:|//|\bsrc=|\bhref=|url\((?!#)", svg):
        return None
    return svg.strip()


def fallback_svg(graph):
    """A layered drawing of our own: inputs left, the nodes made from them right.
    An edge that skips columns is routed above the boxes it would cross."""
    depth = []
    for n in range(len(graph)):
        depth.append(1 + max((depth[p] for p in graph.inputs(n)), default=-1))
    columns = {}
    for n in range(len(graph)):
        columns.setdefault(depth[n], []).append(n)
    char, line_height, pad = 6.7, 15, 8
    widths = {n: pad * 2 + char * max(len(t) for t, _ in graph.lines(n)) for n in range(len(graph))}
    heights = {n: pad * 2 + line_height * len(graph.lines(n)) for n in range(len(graph))}
    column_width = {c: max(widths[n] for n in members) for c, members in columns.items()}
    edges = [(p, n) for n in range(len(graph)) for p in graph.inputs(n)]
    skips = [(p, n) for p, n in edges if depth[n] - depth[p] > 1]
    lane = 9
    top = 10 + lane * len(skips)
    gap_x, gap_y = 56, 14
    x_of, x = {}, 10
    for c in sorted(columns):
        x_of[c] = x
        x += column_width[c] + gap_x
    position, total_height = {}, 0
    for c, members in columns.items():
        y = top
        for n in members:
            position[n] = (x_of[c], y)
            y += heights[n] + gap_y
        total_height = max(total_height, y)
    total_width = x - gap_x + 10
    parts = [f'<svg class="graph" width="{total_width:.0f}" height="{total_height:.0f}" '
             f'viewBox="0 0 {total_width:.0f} {total_height:.0f}" font-family="monospace" font-size="11" role="img">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#777"></path></marker>'
             '<marker id="arrow-red" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#c62828"></path></marker></defs>']
    for parent, n in edges:
        px, py = position[parent]
        cx, cy = position[n]
        x1, y1 = px + widths[parent], py + heights[parent] / 2
        x2, y2 = cx, cy + heights[n] / 2
        if (parent, n) in skips:
            lane_y = 6 + lane * skips.index((parent, n))
            bend = 22
            path = (f"M{x1:.1f},{y1:.1f} C{x1 + bend:.1f},{y1:.1f} {x1 + bend:.1f},{lane_y:.1f} {x1 + 2 * bend:.1f},"
                    f"{lane_y:.1f} L{x2 - 2 * bend:.1f},{lane_y:.1f} C{x2 - bend:.1f},{lane_y:.1f} {x2 - bend:.1f},"
                    f"{y2:.1f} {x2:.1f},{y2:.1f}")
        else:
            middle = (x1 + x2) / 2
            path = f"M{x1:.1f},{y1:.1f} C{middle:.1f},{y1:.1f} {middle:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
        blamed = (parent, n) in graph.blamed_edges
        colour, stroke, marker = ("#c62828", 2.2, "arrow-red") if blamed else ("#777", 1, "arrow")
        ends = f'marker-start="url(#{marker})"' if blamed else f'marker-end="url(#{marker})"'
        parts.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="{stroke}" {ends}></path>')
    for n in range(len(graph)):
        x, y = position[n]
        fill, border = COLOURS[graph.state(n)]
        width = 2.5 if graph.state(n) == "culprit" else 1
        parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{widths[n]:.1f}" height="{heights[n]:.1f}" rx="6" '
                     f'fill="{fill}" stroke="{border}" stroke-width="{width}"></rect>')
        for index, (text, kind) in enumerate(graph.lines(n)):
            weight = ' font-weight="bold"' if kind == "title" else ""
            colour = ' fill="#b71c1c"' if kind == "bad" else ""
            parts.append(f'<text x="{x + pad:.1f}" y="{y + pad + line_height * (index + 0.8):.1f}"{weight}{colour}>'
                         f"{esc(text)}</text>")
    parts.append("</svg>")
    return "".join(parts)


# ------------------------------------------------------------------ page


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
section.test{background:#fff;border:1px solid #e2e2e2;border-left:5px solid #c62828;border-radius:6px;
padding:10px 16px;margin:14px 0}
.meta{color:#666;font-size:.9em}
.hint{background:#e8f4fd;border-left:4px solid #1e88e5;padding:6px 10px;margin:8px 0}
.rule{background:#f6f6f6;padding:6px 10px;margin:8px 0}
.problem{background:#fde4e4;padding:8px 12px;border-radius:6px}
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
    out.append(f'<html lang="{"zh" if lang == "zh" else "en"}"><head><meta charset="utf-8">')
    out.append('<meta name="viewport" content="width=device-width, initial-scale=1">')
    out.append(f"<title>{esc(WORDS['title'][1 if lang == 'zh' else 0])}</title><style>{STYLE}</style></head><body>")
    out.append(f'<input type="radio" name="lang" id="lang-zh"{checked_zh}>'
               f'<input type="radio" name="lang" id="lang-en"{checked_en}>')
    out.append('<div class="switch"><label for="lang-zh">中文</label><label for="lang-en">English</label></div>')
    out.append("<main>")
    out.append(f"<h1>{word('title')}</h1>")
    out.append(f'<p class="meta">{word("submission")}: {esc(result.submission)} · suite {esc(result.suite)}</p>')
    if result.problem:
        out.append(f'<p class="problem">{both(result.problem["en"], result.problem["zh"])}</p>')
    out.append(f'<p><span class="score">{esc(points_text(result.score))} / {esc(points_text(result.max_score))}</span></p>')
    out.append(_categories(result))
    for note in result.notes:
        out.append(f"<p>{both(note['en'], note['zh'])}</p>")
    failures = [t for t in result.tests if not t.passed]
    out.append(f"<h2>{word('failed')} ({len(failures)})</h2>")
    if not failures:
        out.append(f"<p>{word('none_failed')}</p>")
    elif any((t.finding or {}).get("steps") for t in failures):
        out.append(f'<p class="legend">{word("legend")}</p>')
    for test in failures:
        out.append(_test_section(test, drawer))
    passed = [t for t in result.tests if t.passed]
    if passed:
        out.append(f"<h2>{word('passed')} ({len(passed)})</h2><details><summary>{word('passed')}</summary>"
                   '<ul class="passed">')
        out += [f"<li>{esc(t.nodeid.partition('::')[2] or t.name)}</li>" for t in passed]
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
        rows.append(f"<tr><td>{esc(category)}</td><td>{esc(points_text(earned))} / {esc(points_text(possible))}</td>"
                    f'<td><div class="bar"><div style="width:{percent:.0f}%"></div></div></td></tr>')
    return '<table class="categories">' + "".join(rows) + "</table>"


def _test_section(test, drawer):
    finding = test.finding or {}
    name = test.nodeid.partition("::")[2] or test.name
    doc = test.name.partition(": ")[2]
    lost = test.max_score - test.score
    parts = [f'<section class="test" id="{esc(_anchor(test.nodeid))}">',
             f"<h3>{esc(name)}</h3>",
             f'<p class="meta">{esc(test.category)} · {word("lost", p=points_text(lost))}'
             + (f" · {esc(doc)}" if doc else "") + "</p>"]
    headline, cause = finding.get("headline"), finding.get("cause")
    if headline:
        parts.append(f"<p>{both(headline['en'], headline['zh'])}</p>")
    else:
        parts.append(f"<p>{both(test.message('en'), test.message('zh'))}</p>")
    if cause:
        parts.append(f"<p><b>{word('cause')}:</b> {both(cause['en'], cause['zh'])}</p>")
    rule = finding.get("rule")
    if rule:
        parts.append(f'<div class="rule"><b>{word("rule")}:</b> {both(rule["en"], rule["zh"])}</div>')
    if finding.get("calls"):
        parts.append(f"<p><b>{word('calls')}:</b> <code>{esc(finding['calls'])}</code></p>")
    hint = finding.get("hint")
    if hint:
        parts.append(f'<div class="hint"><b>{word("hint")}:</b> {both(hint["en"], hint["zh"])}</div>')
    shrunk = finding.get("shrunk")
    if shrunk and shrunk.get("steps"):
        parts.append(f"<p><b>{word('graph_small')}</b></p>")
        parts.append(_drawing(GraphData(shrunk), drawer))
        parts.append(f"<p><b>{word('smallest')}:</b></p><pre>{esc(shrunk.get('code', ''))}</pre>")
        if finding.get("steps"):
            parts.append(f"<details><summary>{word('graph_test')}</summary>"
                         f"{_drawing(GraphData(finding), drawer)}</details>")
    elif finding.get("steps"):
        parts.append(f"<p><b>{word('graph_test')}</b></p>")
        parts.append(_drawing(GraphData(finding), drawer))
        if finding.get("code"):
            parts.append(f"<p><b>{word('program')}:</b></p><pre>{esc(finding['code'])}</pre>")
    parts.append("</section>")
    return "\n".join(parts)


def _drawing(graph, drawer):
    if len(graph) > MAX_DRAWN_NODES:
        return f"<p>{word('too_big', n=len(graph))}</p>"
    if not len(graph):
        return ""
    return f'<div class="drawing">{drawer.draw(graph)}</div>'


def _anchor(nodeid):
    return re.sub(r"[^A-Za-z0-9_-]+", "-", nodeid).strip("-")
