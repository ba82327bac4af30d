"""Show a notebook check's Report (grader/notebook_check.py) inline, in Chinese and English.

HTML through IPython.display where it is there (Jupyter, Colab), with a plain
text version beside it; plain text printed otherwise. The graph drawings are
the HTML report's own (grader/html_report.py: GraphData, Drawer). Only inline
styles: a notebook page holds many outputs, and a style sheet in one would
restyle the others. Everything the student's code produced (messages,
printed text) is escaped.
"""

from grader.html_report import MAX_DRAWN_NODES, WORDS, Drawer, GraphData, esc
from grader.i18n import LANGUAGES, bilingual, both, pick
from grader.program import render_python

GREEN, RED, GREY = "#2e7d32", "#c62828", "#666666"

LOCAL = {
    "en": "Local check: the public tests, run in your own kernel. This is not an official grade: official "
          "grades come from the course's grader after you submit (GitHub Classroom, Gradescope or your "
          "instructor's grading), which also runs hidden tests.",
    "zh": "本地检查：在你自己的 kernel 里运行公开测试。这不是正式成绩：正式成绩在你提交之后由课程的评分器给出"
          "（GitHub Classroom、Gradescope 或老师的批量评分），其中还有隐藏测试。",
}
SUBMIT = {
    "en": "How to submit: save the notebook and follow README.md, \u201cHow submission works\u201d. On GitHub "
          "Classroom, commit and `git push` (if the graded file is tiny_autograd.py, copy your code into it "
          "first); on Gradescope, upload the file your instructor asks for. In a terminal, `make grade` "
          "grades your work with the same public tests.",
    "zh": "怎样提交：保存 notebook，然后按 README.md 的「怎样提交」操作。GitHub Classroom：commit 之后 `git push`"
          "（如果评分的是 tiny_autograd.py，先把代码复制过去）；Gradescope：上传老师要求的文件。在终端里运行"
          " `make grade` 会用同样的公开测试给你打分。",
}
LABELS = {
    "tests": bilingual("Tests that show it", "出现这个问题的测试"),
    "symptom": bilingual("What happened", "发生了什么"),
    "cause": bilingual("Cause", "原因"),
    "rule": bilingual("Rule", "规则"),
    "hint": bilingual("Hint", "提示"),
    "smallest": bilingual("Smallest program that shows it", "能重现这个问题的最小程序"),
    "program": bilingual("A program that shows it", "能重现这个问题的程序"),
    "printed": bilingual("What your code printed during the check", "检查期间你的代码打印的内容"),
    "missing": bilingual("Not defined in this kernel yet: {names}. Run the cells above first (from the top).",
                "这个 kernel 里还没有定义 {names}：请先（从上往下）运行上面的单元格。"),
}


def show(report):
    html, text = render_html(report), render_text(report)
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        print(text)
        return
    if get_ipython() is None:
        print(text)
        return
    display({"text/html": html, "text/plain": text}, raw=True)


# ------------------------------------------------------------------ words


def _label(key, **values):
    return {lang: pick(LABELS[key], lang, **values) for lang in LANGUAGES}


def headline(report):
    """{"en", "zh"}: the first line of a check's output."""
    if report.stopped and not report.parts:
        return report.stopped
    passed = sum(r.passed for r in report.parts if not r.missing)
    total = sum(len(r.tests) for r in report.parts)
    if len(report.parts) == 1:
        title = report.parts[0].part.title
        what_en, what_zh = f"{report.parts[0].part.name} ({title['en']})", f"{report.parts[0].part.name}（{title['zh']}）"
    else:
        what_en, what_zh = "the whole public suite", "全部公开测试"
    mark = "\u2713" if report.ok else "\u2717"
    return {"en": f"{mark} Local check of {what_en}: {passed} of {total} public tests pass.",
            "zh": f"{mark} 本地检查 {what_zh}：{total} 个公开测试通过了 {passed} 个。"}


def part_lines(report):
    """{"en", "zh"} per part, for the whole-suite check."""
    lines = []
    for result in report.parts:
        mark = "\u2713" if not result.failed and not result.missing else "\u2717"
        lines.append({"en": f"{mark} {result.part.name}: {result.passed if not result.missing else 0} of "
                            f"{len(result.tests)} ({result.part.title['en']})",
                      "zh": f"{mark} {result.part.name}：{len(result.tests)} 个测试通过了 "
                            f"{result.passed if not result.missing else 0} 个（{result.part.title['zh']}）"})
    return lines


def missing_notes(report):
    names = sorted({name for result in report.parts for name in result.missing})
    return [_label("missing", names=", ".join(f"`{n}`" for n in names))] if names else []


def _test_names(problem, report):
    docs = {t.nodeid: t for r in report.parts for t in r.tests}
    return [f"{nodeid.rpartition('::')[2]}: {both(docs[nodeid].doc)}" if nodeid in docs and docs[nodeid].doc
            else nodeid.rpartition("::")[2] for nodeid in problem["tests"]]


def _shown_program(finding):
    """(label key, finding dict to draw, code) of what a problem shows."""
    shrunk = finding.get("shrunk")
    if shrunk and shrunk.get("steps"):
        return "smallest", shrunk, _in_kernel(shrunk.get("code") or render_python(shrunk["steps"]))
    return "program", finding, _in_kernel(finding.get("code") or finding.get("program") or "")


def _in_kernel(code):
    """The reproducing script without its import: in the notebook the classes are
    the kernel's own (an import would load the .py file instead)."""
    lines = code.splitlines()
    while lines and (lines[0].startswith("from tiny_autograd import") or not lines[0].strip()):
        lines.pop(0)
    return "\n".join(lines)


def _drawn(problem):
    """The finding dict whose graph a problem draws, or None (a missing body has
    nothing to draw: its program shows where it is called)."""
    if problem["id"] == "implemented":
        return None
    drawn = _shown_program(problem["finding"])[1]
    return drawn if 0 < len(GraphData(drawn)) <= MAX_DRAWN_NODES else None


def _details(problem):
    """What is shown below a problem's summary: the symptom, why, the nudge and the rule."""
    found = [("symptom", problem["symptom"]), ("cause", problem["finding"].get("cause")),
             ("hint", problem["nudge"])]
    if problem["id"] != "implemented":
        found.append(("rule", problem["explanation"]))
    return [(key, text) for key, text in found if text]


# ------------------------------------------------------------------ text


def render_text(report):
    out = []
    _text_pair(out, headline(report))
    for line in part_lines(report) if report.whole_suite else []:
        _text_pair(out, line, indent="  ")
    if report.stopped and report.parts:
        _text_pair(out, report.stopped)
    for note in missing_notes(report):
        _text_pair(out, note)
    for number, problem in enumerate(report.problems, start=1):
        out.append("")
        finding = problem["finding"]
        _text_pair(out, {lang: f"{number}. {problem['summary'][lang]}" for lang in ("en", "zh")})
        out.append(f"   {_label('tests')['zh']} / {_label('tests')['en']}:")
        out += [f"   - {name}" for name in _test_names(problem, report)]
        for key, text in _details(problem):
            out.append(f"   {LABELS[key]['zh']}：{text['zh']}")
            out.append(f"   {LABELS[key]['en']}: {text['en']}")
        key, _, code = _shown_program(finding)
        if code:
            out.append(f"   {both(LABELS[key])}:")
            out += ["      " + line for line in code.splitlines()]
    if report.printed.strip():
        out += ["", f"{both(LABELS['printed'])}:", report.printed.rstrip()]
    out.append("")
    _text_pair(out, LOCAL)
    if report.whole_suite:
        _text_pair(out, SUBMIT)
    return "\n".join(out)


def _text_pair(out, pair, indent=""):
    out.append(indent + pair["zh"])
    out.append(indent + pair["en"])


# ------------------------------------------------------------------ html


def render_html(report):
    drawer = Drawer()
    colour = GREEN if report.ok else RED
    parts = [f'<div style="border-left:5px solid {colour};padding:6px 12px;margin:4px 0;line-height:1.45">']
    parts.append(f'<div style="font-weight:bold;color:{colour}">{_pair(headline(report))}</div>')
    if report.whole_suite:
        parts.append('<ul style="margin:4px 0">' + "".join(f"<li>{_pair(line, inline=True)}</li>"
                                                           for line in part_lines(report)) + "</ul>")
    if report.stopped and report.parts:
        parts.append(f"<p>{_pair(report.stopped)}</p>")
    for note in missing_notes(report):
        parts.append(f"<p>{_pair(note)}</p>")
    if any(_drawn(p) for p in report.problems):
        parts.append(f'<p style="color:{GREY};font-size:.85em">{_pair(_legend())}</p>')
    for number, problem in enumerate(report.problems, start=1):
        parts.append(_problem_html(number, problem, report, drawer))
    if report.printed.strip():
        parts.append(f"<details><summary>{_pair(_label('printed'), inline=True)}</summary>"
                     f"<pre>{esc(report.printed)}</pre></details>")
    parts.append(f'<p style="color:{GREY};font-size:.9em">{_pair(LOCAL)}</p>')
    if report.whole_suite:
        parts.append(f"<p>{_pair(SUBMIT)}</p>")
    parts.append("</div>")
    return "\n".join(parts)


def _legend():
    return WORDS["legend"]


def _pair(pair, inline=False):
    """Chinese first, then English."""
    joiner = " / " if inline else "<br>"
    return f'{esc(pair["zh"])}{joiner}<span style="color:{GREY}">{esc(pair["en"])}</span>'


def _problem_html(number, problem, report, drawer):
    finding = problem["finding"]
    out = ['<div style="border:1px solid #e2e2e2;border-radius:6px;padding:6px 10px;margin:8px 0">']
    out.append(f'<div style="font-weight:bold">{number}. {_pair(problem["summary"])}</div>')
    names = "".join(f"<li><code>{esc(name)}</code></li>" for name in _test_names(problem, report))
    out.append(f'<div style="font-size:.9em">{_pair(_label("tests"), inline=True)}:<ul style="margin:2px 0">'
               f"{names}</ul></div>")
    for key, text in _details(problem):
        out.append(f"<p><b>{_pair(_label(key), inline=True)}:</b><br>{_pair(text)}</p>")
    key, _, code = _shown_program(finding)
    drawn = _drawn(problem)
    if drawn:
        out.append(f'<div style="overflow-x:auto">{drawer.draw(GraphData(drawn))}</div>')
    if code:
        out.append(f"<p><b>{_pair(_label(key), inline=True)}:</b></p>"
                   f'<pre style="background:#f6f6f6;padding:6px;border-radius:4px">{esc(code)}</pre>')
    out.append("</div>")
    return "\n".join(out)
