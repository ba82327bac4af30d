"""A Finding: one reason a test failed, with everything its reports need.

It says what is wrong (headline), why (cause: the culprit op or the broken rule
of backward()/zero_grad), the hint of a known misconception when the numbers
match one, the program, the expected and returned numbers of the failing read,
and a script that reproduces it. It is plain data: `as_dict()` is what the
results keep (grader/results.py reads it back as a dict).
"""

from dataclasses import dataclass, field, fields

from grader.i18n import bilingual

T = bilingual


@dataclass
class Finding:
    en: str
    zh: str
    kind: str  # worker | error | data | grad | der | order
    culprits: list = field(default_factory=list)  # node numbers whose op is to blame
    wrong_nodes: list = field(default_factory=list)
    snapshot: int = None  # which read showed it
    program: str = ""
    culprit: str = ""  # what is to blame: "*", "tanh", "backward", "zero_grad", "Dual.*", "Dual.lift", ...
    candidates: list = field(default_factory=list)  # every label still possible, best first
    blame: list = field(default_factory=list)  # [{node, op, label, input, side, expected, got}]
    rule: dict = None  # {id, en, zh, diagnosed}
    hint: dict = None  # {id, rule, culprit, en, zh}
    calls: str = ""  # the calls before the failing read, as code
    headline: dict = None  # {en, zh}: what is wrong
    cause: dict = None  # {en, zh}: why, naming the culprit
    steps: list = field(default_factory=list)  # the program (JSON steps)
    expected: list = None  # the reference's [data, grad] per node at the failing read
    got: list = None  # the submission's, same shape (None when it raised)
    code: str = ""  # a script that reproduces it
    shrunk: dict = None  # the smallest program that fails the same way (a finding dict)
    category: str = ""
    error: dict = None  # {type, message, function, line, step} when the submission raised
    source: dict = field(default=None, repr=False, compare=False)  # set by compare(); not reported

    def text(self, lang):
        return self.zh if lang == "zh" else self.en

    def compose(self):
        """Rebuild the full messages from their parts (after a refinement)."""
        if not self.headline:
            return self
        for lang in ("en", "zh"):
            parts = [self.headline[lang]]
            if self.cause:
                parts.append(self.cause[lang])
            if self.hint:
                parts.append(("提示：" if lang == "zh" else "Hint: ") + self.hint[lang])
            text = " ".join(parts)
            code = (self.shrunk or {}).get("code") or self.code
            if code:
                label = {"en": "Smallest program that shows it:", "zh": "能重现这个问题的最小程序："}[lang]
                if not self.shrunk:
                    label = {"en": "A program that shows it:", "zh": "能重现这个问题的程序："}[lang]
                text += "\n" + label + "\n" + code
            setattr(self, lang, text)
        return self

    def as_dict(self):
        """Every reported field as plain data (`source` stays behind: it is for refine())."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "source"}


def finding_from_exception(error):
    """A Finding for a test that failed some other way (an error in the test itself)."""
    text = f"{type(error).__name__}: {error}"[:500]
    return Finding(text, text, "error")
