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

from grader.engine import Engine, GradingFailure
from grader.exercise import EXERCISE
from grader.feedback.diagnose import diagnose
from grader.feedback.finding import finding_from_exception
from grader.i18n import bilingual as T
from grader.kernel_runner import Interrupted, KernelRunner
from grader.oracle_recorded import default_oracle
from grader.plans import load_plan
from grader.program import graph_from_steps
from grader.results import GradeResult, tests_from_report

PRINTED_CAP = 4000  # characters of what the student's code printed during a check


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
    Part("ops", T(f"the ops' local rules: {' '.join(EXERCISE.primitives())}",
                  f"各运算的局部求导规则：{' '.join(EXERCISE.primitives())}"), ("gradients",)),
    Part("backward", T("backward(): topological order, several paths, repeated calls",
                       "backward()：拓扑序、多条路径、重复调用"),
         ("accumulation",), ("test_backward_returns_topological_order", "test_second_backward_resets_intermediate_grads")),
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
    """The problems to show for failed tests: one per mistake, not one per test, as
    grading names them (grader/feedback/diagnose.py).

    `failed`: [(PlannedTest, finding dict)] in test order. Returns, costliest first,
    [{"id", "op", "summary", "symptom", "nudge", "explanation": {"en", "zh"} or None,
    "tests": [nodeid, ...], "finding": the finding dict whose program is shown}]."""
    if not failed:
        return []
    report = {"tests": [{"nodeid": test.nodeid, "outcome": "failed",
                         "metadata": {"category": test.category, "doc": test.doc, "finding": finding}}
                        for test, finding in failed]}
    result = GradeResult(submission="", suite="public", tests=tests_from_report(report))
    return [{"id": d.id, "op": d.op, "summary": d.summary, "symptom": d.symptom, "nudge": d.nudge,
             "explanation": d.explanation, "tests": [t.nodeid for t in d.tests], "finding": d.finding or {}}
            for d in diagnose(result)]


# ------------------------------------------------------------- running


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
        engine = Engine(runner, oracle, locate=_locate, shrink_worker=runner)
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
            engine.check(graph_from_steps(check.steps), check_order=check.check_order, rule=check.rule,
                         order_only=check.order_only)
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
