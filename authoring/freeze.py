"""Freeze the examples of the suites' @generated tests into data (authoring time only).

For every test of grader/suites/*/test_*.py decorated with
`grader.generated.generated(count, **specs)`, Hypothesis draws `count`
examples from the matching strategies of authoring/strategies.py, seeded by
the test's id (so editing one test never changes another's examples), and
they are written to that suite's `examples.json`. Grading reads them back and
needs no Hypothesis (grader/generated.py).

The result depends only on the specs, the strategies and the Hypothesis
version, which the file records; `check()` regenerates and compares, and says
when this Hypothesis is not the one the examples were made with.
"""

import importlib.util
import json
import zlib
from pathlib import Path

from grader.generated import EXAMPLES_FILE, FORMAT

SUITES_DIR = Path(__file__).resolve().parent.parent / "grader" / "suites"


def generated_tests(suite_dir):
    """The @generated tests of one suite folder, in file and definition order."""
    found = []
    for path in sorted(Path(suite_dir).glob("test_*.py")):
        spec = importlib.util.spec_from_file_location(f"_frozen_{suite_dir.name}_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        tests = [value.__generated__ for value in vars(module).values() if hasattr(value, "__generated__")]
        found += sorted(tests, key=lambda info: _definition_line(module, info.name))
    return found


def _definition_line(module, name):
    return getattr(module, name).__wrapped__.__code__.co_firstlineno


def draw_examples(info):
    """`info.count` examples of one test, as JSON-ready dicts, always the same ones."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    from authoring.strategies import strategy_for

    _without_local_constants()
    drawn = []

    @seed(zlib.crc32(info.key.encode("utf-8")))
    @settings(max_examples=info.count, database=None, deadline=None, derandomize=False,
              phases=(Phase.generate,), suppress_health_check=list(HealthCheck), print_blob=False)
    @given(**{name: strategy_for(spec) for name, spec in info.specs.items()})
    def collect(**example):
        drawn.append({name: _as_json(value) for name, value in sorted(example.items())})

    collect()
    return drawn[: info.count]


def _as_json(value):
    return value.as_json() if hasattr(value, "as_json") else value


def _without_local_constants():
    """Hypothesis also draws "local constants": literals of every module loaded in the
    process that is not installed (the kit's own modules). Which modules those are,
    and what literals they hold, would change the examples; use none. The private
    hook is that of the pinned Hypothesis; other versions may lack it."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # pragma: no cover - another Hypothesis
        return
    none = Constants()
    providers._get_local_constants = lambda: none
    providers.CONSTANTS_CACHE.cache.clear()


def frozen_text(suite_dir):
    """The examples.json text of one suite folder (None when it has no @generated test)."""
    import hypothesis

    tests = generated_tests(suite_dir)
    if not tests:
        return None
    entries = {info.key: {**info.header(), "examples": draw_examples(info)} for info in tests}
    document = {"format": FORMAT, "made_with": {"hypothesis": hypothesis.__version__}, "tests": entries}
    return _one_example_per_line(document)


def _one_example_per_line(document):
    """Indented JSON, except that each example is one line (diffs show which changed)."""
    compact = {}
    for entry in document["tests"].values():
        for number, example in enumerate(entry["examples"]):
            marker = f"@example {len(compact)}@"
            compact[marker] = json.dumps(example, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
            entry["examples"][number] = marker
    text = json.dumps(document, indent=1, sort_keys=True, ensure_ascii=True)
    for marker, line in compact.items():
        text = text.replace(json.dumps(marker), line, 1)
    return text + "\n"


def suite_dirs(root=SUITES_DIR):
    if not Path(root).is_dir():
        return []
    return sorted(path for path in Path(root).iterdir() if path.is_dir() and list(path.glob("test_*.py")))


def files(root=SUITES_DIR):
    """{path of examples.json: its text} for every suite with @generated tests."""
    out = {}
    for folder in suite_dirs(root):
        text = frozen_text(folder)
        if text is not None:
            out[folder / EXAMPLES_FILE] = text
    return out


def made_with(path):
    """The Hypothesis version a committed examples.json was made with, or None."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8")).get("made_with", {}).get("hypothesis")
    except (OSError, ValueError):
        return None
