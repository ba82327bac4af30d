"""After a test has failed: shrink its program and sharpen its finding.

Runs once per failed test (from the pytest plugin), on the trusted side, with
the reference and a worker of its own, so the outcome and the score of the test
are already fixed and cannot change.
"""

from grader.exercise import EXERCISE
from grader.feedback.explain import explain, narrow
from grader.i18n import bilingual
from grader.program import graph_from_steps, render_step
from grader.feedback.shrink import SHRINKABLE, Shrinker, judge_with, node_count

MAX_CALLS = 60  # worker calls per failed test
MAX_SECONDS = 4.0  # per failed test; a bound for a slow submission, not the usual stop


def earlier_mistake(finding, run_reference, worker, evidence):
    """An exception can be the consequence of a wrong value made earlier (`log` of a
    number that should have been positive): the program up to the step that raised,
    then a read, shows that value. Its finding, when it shows a wrong value, is the
    mistake to report (the test still failed by raising)."""
    source, step = finding.source, (finding.error or {}).get("step")
    if not isinstance(step, int) or not any(s[0] in EXERCISE.node_kinds for s in finding.steps[:step]):
        return None
    prefix = [*finding.steps[:step], ["read"]]
    reply = worker.run(prefix)
    if reply.failure:
        return None
    found = explain(graph_from_steps(prefix), run_reference(prefix), reply, locate=source["locate"],
                    rule=source["rule"], category=source["category"], evidence=evidence,
                    oracle=source.get("oracle"))
    if not found or found[0].kind != "data":
        return None
    earlier = found[0]
    code, error = render_step(finding.steps[step]) or finding.steps[step][0], finding.error["type"]
    then = bilingual(f"Later `{code}` raises {error} because of it.", f"后面的 `{code}` 正是因此抛出了 {error}。")
    earlier.cause = bilingual(*(f"{(earlier.cause or {}).get(lang, '')} {then[lang]}".strip() for lang in ("en", "zh")))
    return earlier.compose()


def needs_feedback_worker(finding):
    """Whether refine() asks the feedback worker about this finding (when the oracle can run programs)."""
    return finding.kind in SHRINKABLE and bool(finding.steps) and not finding.shrunk and bool(finding.source)


def refine(engine, finding, max_calls=MAX_CALLS, max_seconds=MAX_SECONDS):
    source = finding.source
    if not needs_feedback_worker(finding):
        return finding
    evidence = engine.evidence()
    if source["reply"].outcome is not None:
        again = explain(source["graph"], source["expected"], source["reply"], check_order=source["check_order"],
                        order_only=source.get("order_only", False),
                        locate=source["locate"], rule=source["rule"], category=source["category"],
                        evidence=evidence, oracle=source.get("oracle"))
        if again:
            finding = again[0]
    run_reference = engine.reference_runner()
    worker = engine.shrink_worker() if run_reference is not None else None
    if worker is None:
        return finding
    if finding.kind == "error":
        finding = earlier_mistake(finding, run_reference, worker, evidence) or finding
    hints = frozenset([finding.hint["id"]]) if finding.hint else frozenset()
    judge = judge_with(explain, rule=source["rule"], category=source["category"], hints=hints, evidence=evidence,
                       oracle=source.get("oracle"), locate=source["locate"])
    shrinker = Shrinker(run_reference, worker.run, judge, max_calls=max_calls, max_seconds=max_seconds)
    result = shrinker.shrink(finding.steps, finding)
    if result is None:
        return finding
    steps, small = result
    shrunk = small.as_dict()
    shrunk.pop("shrunk", None)
    shrunk["nodes"] = node_count(steps)
    finding.shrunk = shrunk
    if small.culprit and small.culprit != finding.culprit and small.culprit in finding.candidates:
        narrow(finding, small.culprit)
    return finding.compose()
