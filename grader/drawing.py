"""Drawings of graph programs: each node with its op, data and grad (yours and the
expected one), the culprit in red, as inline SVG.

Made by Graphviz (`dot -Tsvg`, inlined and cleaned) when it is installed, else by
a small layered layout of our own; either way the SVG references nothing outside
itself. A drawing reads a finding dict (grader/feedback/finding.py) or its `shrunk`.
"""

import html
import re
import shutil
import subprocess

from grader.compare import matches
from grader.exercise import EXERCISE
from grader.program import render_step
from grader.text import printable

MAX_DOT_GRAPHS = 60  # beyond this, the (instant) fallback drawing is used
DOT_SECONDS = 5
NODE_KINDS = EXERCISE.node_kinds


def number(value):
    if isinstance(value, dict):
        return value.get("nonfinite") or value.get("not_a_number", "?")
    if isinstance(value, (int, float)):
        return f"{value:.6g}"
    return "?"


def esc(text):
    """Escape for HTML text and attributes; also '/', ':' and '=' (which display the
    same), so that nothing a submission printed can form a URL or an attribute."""
    return html.escape(printable(text), quote=True).replace("/", "&#47;").replace(":", "&#58;").replace("=", "&#61;")


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
    """The comparison's own tolerance (a marker matches only itself)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return a == b
    return matches(a, b)


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


