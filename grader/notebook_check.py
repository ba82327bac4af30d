"""Checks inside the notebook: the public tests, run on what the student's kernel defines.

In the notebook (an IPython extension; Jupyter classic and Lab, Colab):

    %load_ext grader.notebook_check     once, near the top
    %check ops                          after a part: ops, backward, zero_grad, Dual
    %check_all                          the whole public suite, and how to submit

From Python: `check("ops")` and `check_all()` (they read the caller's globals,
or `namespace=`). A check runs the public suite's recorded programs
(grader/plans.py, `suites/public/plan.json`) on the kernel's `Value`,
`zero_grad` and `Dual` (grader/kernel_runner.py), takes the expected outcomes
from the reference in the kit or from the recordings in the student bundle
(grader/oracle_recorded.py), compares and explains through the same Engine as
grading, and shows the result inline (grader/notebook_view.py). It never
raises into the student's cell and never hangs it: every failure is a message.

The notebook uses the magics rather than calls because the grader turns `%`
lines into `pass` (grader/submission.py): when the notebook itself is graded,
its check cells are not run and import nothing.

Local feedback only: this runs in the student's own kernel, where their code
can change anything, so it is never a grade; official grades come from
`python -m grader grade`/`batch`, Gradescope or Classroom.
"""

import contextlib
import io
import sys
from dataclasses import dataclass, field

from grader.compare import graph_from_steps
from grader.engine import Engine, GradingFailure, finding_from_exception
from grader.feedback.simulate import simulate
from grader.kernel_runner import CALL_SECONDS, Interrupted, KernelRunner
from grader.oracle_recorded import default_oracle
from grader.plans import load_plan

PRINTED_CAP = 4000  # characters of what the student's code printed during a check


def T(en, zh):
    return {"en": en, "zh": zh}


@dataclass(frozen=True)
class Part:
    name: str
    title: dict  # {"en", "zh"}
    categories: tuple = ()
    tests: tuple = ()  # test names taken into this part whatever their category


# The notebook's parts, in its order (authoring/notebook.py puts a check cell after
# each). Reverse mode needs both the ops and backward(), so both checks follow the
# topological order cell; backward's part takes the public tests about its own rules.
PARTS = (
    Part("ops", T("the ops' local rules: + * ** exp log tanh relu", "各运算的局部求导规则：+ * ** exp log tanh relu"),
         ("gradients",)),
    Part("backward", T("backward(): topological order, several paths, repeated calls",
                       "backward()：拓扑序、多条路径、重复调用"),
         ("accumulation",), ("test_backward_returns_topological_order", "test_second_backward_keeps_intermediate_grads")),
    Part("zero_grad", T("zero_grad", "zero_grad"), ("zero_grad",)),
    Part("Dual", T("Dual: forward mode", "Dual：前向模式"), ("forward_mode",)),
)
PART_NAMES = tuple(part.name for part in PARTS)


def part_of(test):
    """The name of the part a planned test belongs to (None: none)."""
    for part in PARTS:
        if test.name in part.tests:
            return part.name
    for part in PARTS:
        if test.category in part.categories:
            return part.name
    return None


@dataclass
class PartResult:
    part: Part
    tests: list  # [PlannedTest] of this part, in suite order
    failed: list = field(default_factory=list)  # [(PlannedTest, finding dict)]
    missing: list = field(default_factory=list)  # names the kernel does not define, when nothing ran

    @property
    def passed(self):
        return len(self.tests) - len(self.failed)


@dataclass
class Report:
    """What one check found; grader/notebook_view.py shows it."""

    parts: list  # [PartResult]
    whole_suite: bool = False
    problems: list = field(default_factory=list)  # see problems()
    printed: str = ""
    stopped: dict = None  # {"en", "zh"}: why the check could not run or finish

    @property
    def ok(self):
        return self.stopped is None and all(not r.failed and not r.missing for r in self.parts)


# ------------------------------------------------------------- the seam


def problems(failed):
    """The problems to show for failed tests: one per mistake, not one per test.

    `failed`: [(PlannedTest, finding dict)] in test order. Returns, in the order
    first met, [{"id", "op", "summary": {"en", "zh"}, "tests": [nodeid, ...],
    "finding": the finding dict to show (the smallest program among the group)}].
    For now findings are grouped by culprit and rule (the hint's misconception
    when one matched); this is where the diagnoses of results.json
    (`extra_data.diagnoses`) will come from instead."""
    groups = {}
    for test, finding in failed:
        key = _problem_key(finding)
        group = groups.setdefault(key, {"id": key[0], "op": key[1] or None, "tests": [], "findings": []})
        group["tests"].append(test.nodeid)
        group["findings"].append(finding)
    shown = []
    for group in groups.values():
        findings = group.pop("findings")
        # A hang is shown as it first happened; later ones only say they were not run.
        best = findings[0] if group["id"] == "did-not-finish" else min(findings, key=_shown_size)
        shown.append({**group, "summary": _summary(group["id"], group["op"], best), "finding": best})
    return shown


def _problem_key(finding):
    """(id, op, what else tells two problems apart)."""
    op = finding.get("culprit") or ""
    error = finding.get("error") or {}
    if error.get("type") == "NotImplementedError":
        return "not-implemented", op, "" if op else error.get("message", "")  # each stub's TODO names its body
    if finding.get("kind") == "worker":
        return "did-not-finish", op, ""
    if finding.get("kind") in ("unavailable", "error") and not finding.get("rule"):
        return finding["kind"], op, ""
    rule_id = (finding.get("hint") or {}).get("id") or (finding.get("rule") or {}).get("id") or finding.get("kind")
    return rule_id, op, ""


def _shown_size(finding):
    steps = (finding.get("shrunk") or {}).get("steps") or finding.get("steps") or []
    return len(steps)


def _summary(problem_id, op, finding):
    # The smallest program's numbers, as shown below it; an error keeps the test's
    # headline, which places it in the kernel's cells (the shrinker's does not).
    shown = finding.get("shrunk") if finding.get("kind") != "error" and finding.get("shrunk") else finding
    headline = shown.get("headline") or finding.get("headline") or {"en": finding.get("en", ""),
                                                                      "zh": finding.get("zh", "")}
    if problem_id == "did-not-finish":
        return T(f"{headline['en']} A check gives each program {CALL_SECONDS:g} s, so that a loop that never "
                 "ends stops here instead of hanging the notebook.",
                 f"{headline['zh']}检查给每个程序 {CALL_SECONDS:g} 秒，所以永不结束的循环会在这里停下，"
                 "而不会让 notebook 卡住。")
    if problem_id == "not-implemented":
        message = (finding.get("error") or {}).get("message", "")
        where_en = f"`{op}`" if op else "something"
        where_zh = f"`{op}`" if op else "有的部分"
        return T(f"Not written yet: {where_en} still raises NotImplementedError ({message}).",
                 f"还没写完：{where_zh} 仍然抛出 NotImplementedError（{message}）。")
    if op:
        return T(f"`{op}`: {headline['en']}", f"`{op}`：{headline['zh']}")
    return headline


# ------------------------------------------------------------- running


class _KernelEngine(Engine):
    """The grading Engine on the kernel's runner. Where there is no reference (the
    bundle), programs outside the recording (the shrinker's smaller ones, the
    probes) run on the trusted model of the exercise that the comparison uses."""

    def reference_runner(self):
        return super().reference_runner() or _modelled_reference


def _modelled_reference(steps):
    outcome = simulate(steps)
    return {key: outcome[key] for key in ("ok", "step", "error", "snapshots", "orders") if key in outcome}


_CACHE = {}


def _plan():
    if "plan" not in _CACHE:
        _CACHE["plan"] = load_plan()
    return _CACHE["plan"]


def _oracle():
    if "oracle" not in _CACHE:
        _CACHE["oracle"] = default_oracle()
    return _CACHE["oracle"]


def _locate(line, lang="en"):
    return f"所在单元格的第 {line} 行" if lang == "zh" else f"line {line} of its cell"


NEEDS = {"value": "Value", "dual": "Dual", "zero_grad": "zero_grad"}


def _missing_names(namespace, tests):
    needed = {NEEDS[step[0]] for test in tests for check in test.checks for step in check.steps if step[0] in NEEDS}
    return sorted(name for name in needed if not callable(namespace.get(name)))


def run_parts(names, namespace, whole_suite=False, runner=None):
    """A Report for the parts `names` on `namespace` (never raises)."""
    report = Report(parts=[], whole_suite=whole_suite)
    printed = _CappedText(PRINTED_CAP)
    try:
        plan, oracle = _plan(), _oracle()
        runner = runner or KernelRunner(namespace)
        engine = _KernelEngine(runner, oracle, locate=_locate, shrink_worker=runner)
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            for name in names:
                part = next(p for p in PARTS if p.name == name)
                result = PartResult(part, [t for t in plan.tests if part_of(t) == name])
                report.parts.append(result)
                result.missing = _missing_names(namespace, result.tests)
                if not result.missing:
                    result.failed = [(test, finding) for test in result.tests
                                     if (finding := _run_test(engine, test)) is not None]
    except (Interrupted, KeyboardInterrupt):
        report.stopped = T("The check was interrupted.", "检查被中断了。")
    except Exception as error:  # noqa: BLE001 - a check never raises into the student's cell
        report.stopped = T(f"The check could not run: {type(error).__name__}: {error}",
                           f"检查没能运行：{type(error).__name__}：{error}")
    report.printed = printed.getvalue()
    report.problems = problems([pair for result in report.parts for pair in result.failed])
    return report


def _run_test(engine, test):
    """The refined finding (a dict) of the test's first failing check, or None."""
    engine.begin_test(category=test.category)
    for check in test.checks:
        try:
            engine.check(graph_from_steps(check.steps), check_order=check.check_order, rule=check.rule)
        except GradingFailure as failure:
            return engine.refine(failure.finding).as_dict()
        except Interrupted:
            raise
        except Exception as error:  # noqa: BLE001 - as under pytest, an error fails the test
            return finding_from_exception(error).as_dict()
    return None


class _CappedText(io.StringIO):
    def __init__(self, cap):
        super().__init__()
        self.cap, self.total = cap, 0

    def write(self, text):
        text = str(text)
        self.total += len(text)
        room = self.cap - self.tell()
        if room > 0:
            super().write(text[:room])
        return len(text)


# ------------------------------------------------------------- public API


def check(part, namespace=None):
    """Run one part's public tests on the caller's definitions and show the result
    (returns nothing, so that a cell shows only the result)."""
    namespace = namespace if namespace is not None else sys._getframe(1).f_globals
    if part not in PART_NAMES:
        report = Report(parts=[], stopped=T(
            f"There is no part {part!r}: choose one of {', '.join(PART_NAMES)}.",
            f"没有叫 {part!r} 的部分：可以是 {'、'.join(PART_NAMES)}。"))
    else:
        report = run_parts([part], namespace)
    _show(report)


def check_all(namespace=None):
    """Run the whole public suite on the caller's definitions, show the result and how to submit."""
    namespace = namespace if namespace is not None else sys._getframe(1).f_globals
    _show(run_parts(PART_NAMES, namespace, whole_suite=True))


def _show(report):
    try:
        from grader.notebook_view import show

        show(report)
    except Exception as error:  # noqa: BLE001 - showing must not raise either
        print(f"The check's result could not be shown / 检查结果无法显示: {type(error).__name__}: {error}")


def load_ipython_extension(ipython):
    """`%load_ext grader.notebook_check`: the magics `%check PART` and `%check_all`."""

    def check_magic(line):
        check(line.strip().strip("\"'"), namespace=ipython.user_ns)

    def check_all_magic(line):
        check_all(namespace=ipython.user_ns)

    ipython.register_magic_function(check_magic, "line", "check")
    ipython.register_magic_function(check_all_magic, "line", "check_all")
