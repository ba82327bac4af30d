"""`--format junit`: JUnit XML, which GitLab CI, Jenkins and most LMS plugins read.

One <testsuite> per rubric category, one <testcase> per test; a failed test's
feedback is the text of its <failure>, and each test's points are properties.
A submission that cannot be loaded is one <testsuite name="submission"> with one
errored test that says why (once, not once per test).
"""

import re
from xml.sax.saxutils import escape, quoteattr

from grader.i18n import both_in, order
from grader.points import points_text

# Characters XML 1.0 cannot hold at all (a submission's output may contain them).
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def text(value):
    return escape(NOT_XML.sub("\ufffd", str(value)))


def attr(value):
    return quoteattr(NOT_XML.sub("\ufffd", str(value)))


def _properties(pairs, indent):
    lines = [f"{indent}<properties>"]
    lines += [f"{indent}  <property name={attr(k)} value={attr(v)}/>" for k, v in pairs]
    return lines + [f"{indent}</properties>"]


def document(result, lang="en"):
    seconds = f"{result.execution_time:.3f}"
    lines = ['<?xml version="1.0" encoding="UTF-8"?>']
    if result.problem:
        first = order(lang)[0]
        message = both_in(result.problem, lang)
        lines.append(f'<testsuites name="tiny-autograd" tests="1" failures="0" errors="1" time={attr(seconds)}>')
        lines.append(f'  <testsuite name="submission" tests="1" failures="0" errors="1" time={attr(seconds)}>')
        lines += _properties([("score", 0), ("max_score", points_text(result.max_score))], "    ")
        lines.append('    <testcase classname="submission" name="load" time="0">')
        lines.append(f"      <error message={attr(result.problem[first])} type=\"load\">{text(message)}</error>")
        lines.append("    </testcase>")
        lines += _system_out(result, "    ")
        lines.append("  </testsuite>")
        lines.append("</testsuites>")
        return "\n".join(lines) + "\n"
    failed = [t for t in result.tests if not t.passed]
    lines.append(f'<testsuites name="tiny-autograd" tests="{len(result.tests)}" failures="{len(failed)}" '
                 f'errors="0" time={attr(seconds)}>')
    categories = result.categories()
    for category, (earned, possible) in categories.items():
        members = [t for t in result.tests if t.category == category]
        failures = sum(1 for t in members if not t.passed)
        lines.append(f"  <testsuite name={attr(category)} tests=\"{len(members)}\" failures=\"{failures}\" "
                     f'errors="0" time="0">')
        lines += _properties([("score", points_text(earned)), ("max_score", points_text(possible))], "    ")
        for test in members:
            lines += _testcase(test, lang)
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


def _testcase(test, lang):
    file = test.nodeid.partition("::")[0]
    head = (f"    <testcase classname={attr(test.category)} name={attr(test.title(lang))} file={attr(file)} "
            f"time=\"0\">")
    lines = [head]
    lines += _properties([("score", points_text(test.score)), ("max_score", points_text(test.max_score)),
                          ("number", test.number), ("hidden", str(test.hidden).lower())], "      ")
    if not test.passed:
        message = test.message(lang)
        first_line = message.split("\n")[0][:300]
        lines.append(f"      <failure message={attr(first_line)} type=\"{test.category}\">{text(message)}</failure>")
    lines.append("    </testcase>")
    return lines


def _system_out(result, indent):
    if not result.printed.strip():
        return []
    return [f"{indent}<system-out>{text(result.printed)}</system-out>"]
