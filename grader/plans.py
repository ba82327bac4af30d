"""A suite's checks as data: per test, the graph programs it checks, in order.

grader/replay.py records a `Plan` by running the suite once (that needs
pytest) and replays it on submissions. The public suite's plan is also kept as
a file, `grader/suites/public/plan.json`, written by `make template` (and into
the student bundle by `make dist`), so that the notebook's checks
(grader/notebook_check.py) can run the public tests with the standard library
only: no pytest, and no reference where the bundle answers from recordings.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

PLAN_FILE = "plan.json"
FORMAT = 1
PUBLIC_PLAN = Path(__file__).resolve().parent / "suites" / "public" / PLAN_FILE


@dataclass
class Check:
    steps: list  # the graph program, as checked
    check_order: bool = False
    rule: str = None
    order_only: bool = False  # only the orders backward() returned (a wrong gradient does not fail it)
    example: int = None  # the frozen example it belongs to, None outside @generated tests


@dataclass
class PlannedTest:
    nodeid: str
    lineno: int
    category: str
    doc: dict  # {"en", "zh"}: what the test checks
    checks: list = field(default_factory=list)

    @property
    def name(self):
        return self.nodeid.rpartition("::")[2]


@dataclass
class Plan:
    suite: str
    tests: list  # [PlannedTest], in the order pytest ran them


def plan_json(plan):
    """The plan as a JSON document. Line numbers are left out: moving a test within
    its file does not change what it checks."""
    return {
        "format": FORMAT,
        "suite": plan.suite,
        "tests": [
            {"nodeid": test.nodeid, "category": test.category, "doc": test.doc,
             "checks": [{"steps": check.steps, "check_order": check.check_order, "rule": check.rule,
                         "order_only": check.order_only, "example": check.example} for check in test.checks]}
            for test in plan.tests
        ],
    }


def plan_text(plan):
    """The plan file: a test per block, a check per line (diffs stay readable)."""
    data = plan_json(plan)

    def dumps(value):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)

    tests = []
    for test in data["tests"]:
        head = {key: value for key, value in test.items() if key != "checks"}
        checks = ",\n".join("   " + dumps(check) for check in test["checks"])
        tests.append(f"  {dumps(head)[:-1]}, \"checks\": [\n{checks}\n  ]}}")
    return (f'{{"format": {data["format"]}, "suite": {dumps(data["suite"])}, "tests": [\n'
            + ",\n".join(tests) + "\n]}\n")


def plan_from_json(data):
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("tests"), list):
        raise ValueError(f"not a plan of format {FORMAT}")
    tests = [
        PlannedTest(entry["nodeid"], 0, entry["category"], entry.get("doc", ""),
                    [Check(c["steps"], bool(c.get("check_order")), c.get("rule"), bool(c.get("order_only")),
                           c.get("example"))
                     for c in entry["checks"]])
        for entry in data["tests"]
    ]
    return Plan(data["suite"], tests)


def load_plan(path=PUBLIC_PLAN):
    return plan_from_json(json.loads(Path(path).read_text(encoding="utf-8")))
