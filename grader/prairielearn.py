"""`--format prairielearn`: the results.json of PrairieLearn's external grading.

PrairieLearn reads /grade/results/results.json: `score` from 0 to 1, `message`,
`output`, and `tests` (`name`, `description`, `points`, `max_points`,
`message`, `output`) for its <pl-external-grader-results> element. A
submission that cannot be loaded (syntax error, empty file, ...) is
`gradable: false` with the reason in `message` and `format_errors`: the student
is not charged an attempt and can fix it.
"""

from fractions import Fraction

from grader.i18n import both_in, pick

MAX_TEXT = 20_000  # PrairieLearn accepts about 1 MB per results file


def _short(text):
    text = str(text)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + " [...]"


def _both(pair, lang):
    return both_in(pair, lang)


def results(result, lang="en"):
    if result.problem:
        message = _both(result.problem, lang)
        return {"gradable": False, "score": 0.0, "message": message, "format_errors": [message],
                "output": _short(result.printed), "tests": []}
    score = float(Fraction(result.score) / Fraction(result.max_score)) if result.max_score else 0.0
    notes = [pick(note, lang) for note in result.notes]
    return {
        "gradable": True,
        "score": score,
        "message": "\n".join([result.first_line(lang), *notes]),
        "output": _short(result.printed),
        "tests": [
            {
                "name": test.nodeid.partition("::")[2] or test.name,
                "description": pick(test.doc, lang) if test.doc else test.category,
                "points": test.score,
                "max_points": test.max_score,
                "message": _short(test.message(lang)) if not test.passed else "",
                "output": _short(_program(test)),
            }
            for test in result.tests
        ],
    }


def _program(test):
    finding = test.finding or {}
    return (finding.get("shrunk") or {}).get("code") or finding.get("code") or ""
