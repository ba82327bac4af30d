"""A Finding: one reason a test failed, with everything its reports need.

It says what is wrong (headline: the symptom, with the numbers), why (cause:
the culprit op or the broken rule of backward()/zero_grad), the hint of a known
misconception when the numbers match one, the program, the expected and
returned numbers of the failing read, and a script that reproduces it. It also
knows its place among the mistakes (`diagnosis`: the rule or misconception and
the op, grader/feedback/diagnose.py groups failed tests by it) and its hint
levels: the nudge (level 2) and the rule spelled out (level 3). Its `en`/`zh`
message (the test's output) holds levels 1 and 2 and the program, never the
code of the fix. It is plain data: `as_dict()` is what the results keep.
"""

from dataclasses import dataclass, field, fields

from grader.exercise import SEMANTIC_LABELS
from grader.i18n import bilingual, pick

T = bilingual
LABELS = {
    "hint": bilingual("Hint: ", "提示："),
    "smallest": bilingual("Smallest program that shows it:", "能重现这个问题的最小程序："),
    "program": bilingual("A program that shows it:", "能重现这个问题的程序："),
}
# What a failure of the worker, or an exception, says about the mistake: its rule in the catalog.
FAILURE_RULES = {"timeout": "returns-in-time", "skipped": "returns-in-time", "budget": "returns-in-time",
                 "cannot-load": "loads", "died": "keeps-running", "malformed": "keeps-running"}
# What wrong numbers in an op break, when no hint or check names a rule.
KIND_RULES = {"grad": "chain-rule", "der": "dual-rule", "data": "forward-value"}
ERROR_RULES = {"ReturnedWrongType": "returns-a-node", "ShadowedMethod": "method-runs",
               "NotImplementedError": "implemented"}


@dataclass
class Finding:
    en: str
    zh: str
    kind: str  # worker | error | data | grad | der | order | unavailable
    culprits: list = field(default_factory=list)  # node numbers whose op is to blame
    wrong_nodes: list = field(default_factory=list)
    snapshot: int = None  # which read showed it
    program: str = ""
    culprit: str = ""  # what is to blame: "*", "tanh", "backward", "zero_grad", "Dual.*", "Dual.lift", ...
    method: str = ""  # a built method the probes blame instead ("Value.__rsub__"): grader/feedback/functions.py
    candidates: list = field(default_factory=list)  # every label still possible, best first
    blame: list = field(default_factory=list)  # [{node, op, label, input, side, expected, got}]
    rule: dict = None  # {id, en, zh, summary, nudge, diagnosed}
    hint: dict = None  # {id, rule, culprit, op, en, zh (the nudge), summary, explain}
    calls: str = ""  # the calls before the failing read, as code
    headline: dict = None  # {en, zh}: what is wrong (level 1)
    cause: dict = None  # {en, zh}: why, naming the culprit
    nudge: dict = None  # {en, zh}: toward the concept (level 2)
    explanation: dict = None  # {en, zh}: the rule spelled out (level 3)
    diagnosis: dict = None  # {"rule", "op", "id"}: the mistake it shows (grader/feedback/diagnose.py)
    steps: list = field(default_factory=list)  # the program (JSON steps)
    expected: list = None  # the reference's [data, grad] per node at the failing read
    got: list = None  # the submission's, same shape (None when it raised)
    code: str = ""  # a script that reproduces it
    shrunk: dict = None  # the smallest program that fails the same way (a finding dict)
    category: str = ""
    error: dict = None  # {type, message, function, line, step} when the submission raised
    failure: dict = None  # {kind, call} when the worker gave no outcome (worker_client.Reply.cause)
    source: dict = field(default=None, repr=False, compare=False)  # set by explain(); not reported

    def text(self, lang):
        return pick({"en": self.en, "zh": self.zh}, lang)

    def compose(self):
        """Rebuild the levels, the diagnosis and the full messages from the parts (after a refinement)."""
        self._levels()
        self.diagnosis = self._diagnosis()
        if not self.headline:
            return self
        for lang in ("en", "zh"):
            parts = [self.headline[lang]]
            if self.cause:
                parts.append(self.cause[lang])
            if self.nudge and self.nudge.get(lang):
                parts.append(LABELS["hint"][lang] + self.nudge[lang])
            text = " ".join(parts)
            code = (self.shrunk or {}).get("code") or self.code
            if code:
                text += "\n" + LABELS["smallest" if self.shrunk else "program"][lang] + "\n" + code
            setattr(self, lang, text)
        return self

    def _levels(self):
        """The nudge and the explanation: the hint's, else the culprit op's local rule, else the rule's."""
        from grader.feedback.catalog import load

        catalog = load()
        local = catalog.local.get(self.culprit) if self.culprit else None
        rule = catalog.rule(self._rule_id()) if self._rule_id() else None
        if self.hint:
            self.nudge = {"en": self.hint["en"], "zh": self.hint["zh"]}
            self.explanation = self.hint.get("explain") or local or rule
        elif local and self.kind in ("grad", "der") and not self.method:
            self.nudge, self.explanation = local.get("nudge"), {"en": local["en"], "zh": local["zh"]}
        elif rule:
            self.nudge, self.explanation = rule.get("nudge"), {"en": rule["en"], "zh": rule["zh"]}
        if self.explanation:
            self.explanation = {"en": self.explanation["en"], "zh": self.explanation["zh"]}

    def _rule_id(self):
        if self.hint:
            return self.hint["rule"]
        if self.kind in KIND_RULES and self.culprit and self.culprit not in SEMANTIC_LABELS \
                and not (self.rule or {}).get("diagnosed", True):
            # The test's own rule (its category's) is not what the numbers show about an op.
            return KIND_RULES[self.kind]
        if self.kind == "worker":
            return FAILURE_RULES.get((self.failure or {}).get("kind"), "keeps-running")
        if self.kind == "error" and self.error and self.error.get("type") in ERROR_RULES:
            return ERROR_RULES[self.error["type"]]
        return (self.rule or {}).get("id")

    def _diagnosis(self):
        """The mistake this finding shows: {"rule", "op", "id"}. Two failed tests with the
        same rule and op show the same mistake; `id` is the misconception when one matched."""
        rule = self._rule_id() or self.kind
        if self.kind == "worker":
            op = (self.failure or {}).get("call") or None
        elif self.kind == "error":
            # The exercise function it was raised in (checked by grader/replies.py), never
            # the submission's own names: results are the grader's words.
            op = (self.error or {}).get("within") or self.culprit or None
        else:
            op = self.method or self.culprit or None
        return {"rule": rule, "op": op, "id": self.hint["id"] if self.hint else rule}

    def as_dict(self):
        """Every reported field as plain data (`source` stays behind: it is for refine())."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "source"}


def finding_from_exception(error):
    """A Finding for a test that failed some other way (an error in the test itself)."""
    text = f"{type(error).__name__}: {error}"[:500]
    return Finding(text, text, "error")
