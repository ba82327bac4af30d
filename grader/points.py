"""Points: shared out in exact binary fractions, added exactly, printed as JavaScript prints them.

A test's points are a whole number of the rubric's unit (1/8 by default). Every
such number, and every sum of them up to the rubric's total, is exact in
floating point, so any program that adds them (GitHub Classroom's reporter adds
`tests[].score` left to right as JavaScript numbers) gets exactly the kit's
total, whichever tests passed; `points_text` prints it the way JavaScript does.
"""

from fractions import Fraction

DEFAULT_UNIT = Fraction(1, 8)


def score_line(tests, categories, lang, name=lambda category, lang: category):
    """"Score 58.25/100 (gradients 30/40, ...)"; `name(category, lang)` says how to call a category."""
    separator = "，" if lang == "zh" else ", "
    summary = separator.join(f"{name(c, lang)} {points_text(e)}/{points_text(p)}" for c, (e, p) in categories.items())
    label = "得分" if lang == "zh" else "Score"
    earned, possible = exact_sum(t.score for t in tests), exact_sum(t.max_score for t in tests)
    opening, closing = ("（", "）") if lang == "zh" else (" (", ")")
    return f"{label} {points_text(earned)}/{points_text(possible)}{opening}{summary}{closing}"


def exact_sum(numbers):
    return float(sum((Fraction(n) for n in numbers), Fraction(0)))


def points_text(value):
    """Points as JavaScript prints the number (what the Classroom reporter shows): 58.25, 100."""
    value = float(value)
    return str(int(value)) if value.is_integer() else repr(value)


def share_points(total, weights, unit=DEFAULT_UNIT):
    """Split `total` by `weights` into whole units that add up exactly (largest remainder;
    ties go to the earlier test)."""
    unit = Fraction(unit)
    total_weight = sum(Fraction(str(w)) for w in weights)
    units_in_total = Fraction(str(total)) / unit
    exact = [units_in_total * Fraction(str(w)) / total_weight for w in weights]
    whole = [int(x) for x in exact]
    leftover = int(units_in_total) - sum(whole)
    by_remainder = sorted(range(len(exact)), key=lambda i: (-(exact[i] - whole[i]), i))
    for i in by_remainder[:leftover]:
        whole[i] += 1
    return [float(n * unit) for n in whole]
