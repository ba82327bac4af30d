"""The pytest plugin of the trusted grader process.

It hands each test the `engine` fixture, resets per-test state, and records
what the results need (category, description, the bilingual finding) in the
pytest-json-report metadata of every test. It never touches student code: the
engine only talks to the worker through its JSON channel.
"""

import re

import pytest

from grader.engine import GradingFailure
from grader.exercise import categories
from grader.feedback.finding import finding_from_exception
from grader.i18n import LANGUAGES
from grader.protocols import SuiteEngine


class GraderPlugin:
    def __init__(self, engine: SuiteEngine):
        self._engine = engine

    def pytest_configure(self, config):
        config.addinivalue_line("markers", "category(name): the rubric category of a test")

    def pytest_collection_modifyitems(self, items):
        for item in items:
            marker = item.get_closest_marker("category")
            if marker is None or marker.args[0] not in categories():
                raise pytest.UsageError(f"{item.nodeid}: every test needs @pytest.mark.category(one of {categories()}),"
                                        " the categories of grader/rubric.toml")

    @pytest.fixture(scope="session")
    def engine(self):
        return self._engine

    @pytest.fixture(autouse=True)
    def _fresh_test_state(self, request):
        marker = request.node.get_closest_marker("category")
        self._engine.begin_test(category=marker.args[0] if marker else None)
        yield

    def pytest_sessionfinish(self):
        self._engine.close()

    @pytest.hookimpl(optionalhook=True)
    def pytest_json_runtest_metadata(self, item, call):
        if call.when != "call":
            return {}
        metadata = {
            "category": item.get_closest_marker("category").args[0],
            "doc": bilingual_doc(item.function.__doc__),
        }
        if call.excinfo is not None:
            error = call.excinfo.value
            finding = error.finding if isinstance(error, GradingFailure) else _grading_cause(error)
            # Once per failed test, after its outcome is fixed: shrink and sharpen the feedback.
            finding = self._engine.refine(finding)
            metadata["finding"] = finding.as_dict()
        return metadata


def bilingual_doc(docstring):
    """{"en", "zh"} from a suite test's docstring: an English paragraph, a blank line,
    a Chinese one (tests/test_suites.py checks every test has both); one paragraph per
    language of grader/i18n.py, in its order, a missing one read as the English."""
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", (docstring or "").strip()) if p.strip()]
    if not paragraphs:
        return None
    return {code: paragraphs[number] if number < len(paragraphs) else paragraphs[0]
            for number, code in enumerate(LANGUAGES)}


def _grading_cause(error):
    """Our failure, if another exception wraps it (an ExceptionGroup, a cause chain)."""
    seen = [error]
    while seen:
        current = seen.pop()
        if isinstance(current, GradingFailure):
            return current.finding
        seen.extend(getattr(current, "exceptions", ()))
        if current.__cause__ is not None:
            seen.append(current.__cause__)
    return finding_from_exception(error)
