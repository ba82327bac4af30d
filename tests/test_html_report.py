"""The reports a student reads after `make grade`: the HTML page and the terminal summary.

A mutant with one mistake in `*` is graded on the public suite through the command
line with `--html`. The page must parse, reference nothing outside itself (no
network: no URL, no remote src, no external stylesheet, script or font), hold the
score per category and one card per problem (its summary, symptom, nudge and the
tests it explains), and draw the problem's smallest failing graph (with Graphviz
when it is installed, and with its own inline SVG when it is not), the culprit
highlighted. The terminal summary fits 80 columns, in both languages, and is
coloured only on a terminal.
"""

import io
import json
import re
import sys
from pathlib import Path

import pytest

from grader import cli, html_report, terminal
from grader.engine import Engine
from grader.grading import grade
from grader import results as results_model
from grader.exercise import category_name

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutants import MUTANTS, REFERENCE  # noqa: E402
from strict_html import parse  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MUL_NOT_CROSSING = (
    "self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
    "self.grad += self.data * out.grad\n            other.grad += other.data * out.grad",
)
CULPRIT_RED = "#c62828"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """(GradeResult, html text, results dict, folder) for the mutant, graded through the CLI."""
    folder = tmp_path_factory.mktemp("report")
    mutant = next((m for m in MUTANTS if (m.find, m.replace) == MUL_NOT_CROSSING), None)
    source = REFERENCE.read_text(encoding="utf-8")
    source = mutant.apply(source) if mutant else source.replace(*MUL_NOT_CROSSING)
    submission = folder / "tiny_autograd.py"
    submission.write_text(source, encoding="utf-8")
    out, page = folder / "results.json", folder / "report.html"
    code = cli.main(["grade", str(submission), "--suite", "public", "--out", str(out), "--html", str(page),
                     "--lang", "en", "--quiet"])
    assert code == 0
    raw = json.loads((folder / "results.pytest.json").read_text(encoding="utf-8"))
    # The result model of the very run the page was made from.
    result = results_model.GradeResult(submission=str(submission), suite="public",
                                       tests=results_model.tests_from_report(raw),
                                       isolation="(test)")
    return result, page.read_text(encoding="utf-8"), json.loads(out.read_text(encoding="utf-8")), folder


def external_references(page):
    found = re.findall(r"https?:|//|\bsrc\s*=|<link\b|<script\b|@import|@font-face|url\((?!#)", page, re.I)
    return sorted(set(found))


def failed_with_graph(result):
    return [t for t in result.tests if not t.passed and (t.finding or {}).get("steps")]


# ------------------------------------------------------------------- the page


def test_the_page_parses_and_every_element_is_closed(graded):
    _, page, _, _ = graded
    parser = parse(page)
    assert not parser.problems, parser.problems[:5]
    assert parser.stack == []
    assert page.startswith("<!DOCTYPE html>")


def test_the_page_references_nothing_outside_itself(graded):
    _, page, _, _ = graded
    assert external_references(page) == []
    tags = parse(page).tags
    assert not [t for t, attrs in tags if t in ("img", "script", "link", "iframe", "object", "embed")]
    assert not [attrs for _, attrs in tags if any(k in ("src", "href", "xlink:href") for k in attrs)]


def test_the_page_has_the_score_of_every_category(graded):
    result, page, _, _ = graded
    text = " ".join(parse(page).text)
    for category, (earned, possible) in result.categories().items():
        name = category_name(category)
        assert name["en"] in text and name["zh"] in text
        assert f"{earned:g} / {possible:g}" in text
    assert f"{result.score:g} / {result.max_score:g}" in text


def test_each_problem_has_a_card_with_its_tests_and_a_drawing(graded):
    result, page, _, _ = graded
    diagnoses = result.diagnoses()
    assert diagnoses, "the mutant should have problems"
    assert sum(len(d.tests) for d in diagnoses) == len([t for t in result.tests if not t.passed])
    text = " ".join(parse(page).text)
    assert page.count('<section class="problem"') == len(diagnoses)
    for diagnosis in diagnoses:
        for lang in ("en", "zh"):
            assert diagnosis.summary[lang] in text and diagnosis.symptom[lang] in text
        for test in diagnosis.tests:
            assert test.nodeid.partition("::")[2] in text
        for number in (diagnosis.finding.get("shrunk") or diagnosis.finding)["culprits"]:
            assert f"n{number} = " in text  # the culprit node's label is in the drawing
    assert page.count('<svg class="graph"') == len([d for d in diagnoses if d.program])
    assert CULPRIT_RED in page


def test_the_culprit_of_mul_not_crossing_is_drawn_and_named(graded):
    result, page, _, _ = graded
    findings = [t.finding for t in failed_with_graph(result)]
    assert any(f["culprit"] == "*" and (f.get("hint") or {}).get("id") == "mul-not-crossed" for f in findings)
    assert "`*` gave an input its own value" in " ".join(parse(page).text)


def test_the_page_holds_both_languages(graded):
    _, page, _, _ = graded
    assert 'class="en" lang="en"' in page and 'class="zh" lang="zh"' in page
    assert re.search(r"[\u4e00-\u9fff]", page)
    assert 'id="lang-en" checked' in page  # --lang en: English shown first


def test_without_graphviz_the_page_draws_its_own_svg(graded):
    result, _, _, _ = graded
    page = html_report.render(result, "zh", use_dot=False)
    assert not parse(page).problems and external_references(page) == []
    assert page.count('<svg class="graph"') == len(result.diagnoses())
    assert 'id="lang-zh" checked' in page
    finding = result.diagnoses()[0].finding
    graph = finding.get("shrunk") or finding
    text = " ".join(parse(page).text)
    for number in graph["culprits"]:
        assert f"n{number} = " in text


@pytest.mark.skipif(html_report.Drawer().dot is None, reason="Graphviz is not installed")
def test_with_graphviz_the_drawing_is_its_svg_inlined(graded):
    _, page, _, _ = graded
    assert 'class="node"' in page  # Graphviz's own markup
    assert "<?xml" not in page and "<!DOCTYPE svg" not in page


def test_the_html_escapes_everything_it_is_given(graded):
    result, _, _, _ = graded
    test = failed_with_graph(result)[0]
    original = test.finding["headline"]["en"]
    test.finding["headline"]["en"] = "<script>alert(1)</script> see http://example.org//x"
    try:
        page = html_report.render(result, "en", use_dot=False)
    finally:
        test.finding["headline"]["en"] = original
    assert "<script>" not in page and external_references(page) == []


def test_feedback_never_changes_outcomes_or_points(graded, monkeypatch):
    result, _, _, folder = graded
    monkeypatch.setattr(Engine, "refine", lambda self, finding: finding)
    monkeypatch.setattr(Engine, "evidence", lambda self: None)
    plain = grade(folder / "tiny_autograd.py", suite="public")
    assert [(t.nodeid, t.passed, t.score) for t in plain.tests] == [(t.nodeid, t.passed, t.score) for t in result.tests]


def test_the_makefile_writes_the_html_report_by_default():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    grade_recipe = makefile.split("\ngrade:", 1)[1].split("\n\n", 1)[0]
    assert '--html "$(HTML)"' in grade_recipe
    assert re.search(r"^HTML \?= results/report\.html$", makefile, re.M)


# --------------------------------------------------------------- the terminal


class FakeTerminal(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_summary_fits_80_columns(graded, lang):
    result, _, _, folder = graded
    stream = FakeTerminal(tty=False)
    terminal.summary(result, lang, folder / "results.json", stream=stream, html_path=folder / "report.html")
    lines = stream.getvalue().splitlines()
    assert max(terminal.width(line) for line in lines) <= 80
    text = stream.getvalue()
    assert "\033[" not in text
    assert str(folder / "report.html") in text
    for diagnosis in result.diagnoses():
        assert " ".join(diagnosis.nudge[lang].split()[:2]) in text  # every problem's nudge is shown
    for category in result.categories():
        assert category_name(category)[lang] in text


def test_the_summary_is_coloured_only_on_a_terminal(graded, monkeypatch):
    result, _, _, folder = graded
    monkeypatch.delenv("NO_COLOR", raising=False)
    stream = FakeTerminal(tty=True)
    terminal.summary(result, "en", folder / "results.json", stream=stream)
    assert "\033[" in stream.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    stream = FakeTerminal(tty=True)
    terminal.summary(result, "en", folder / "results.json", stream=stream)
    assert "\033[" not in stream.getvalue()


def test_wrapping_counts_chinese_characters_as_two_columns():
    text = "梯度不对（执行 `n2.backward()` 之后）：" * 6
    lines = terminal.wrap(text, 40, indent="    ")
    assert all(terminal.width(line) <= 40 for line in lines)
    assert "".join(line.strip() for line in lines).replace(" ", "") == text.replace(" ", "")
