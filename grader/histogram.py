"""The score distribution of a class as an inline SVG bar chart (no library, no script).

Scores fall into ten bins of ten percent of the maximum (0-9, 10-19, ... 90-99)
and one more for full marks, so that "how many have everything" is its own bar.
Every bar carries its bin and count as data attributes, which the kit's tests read.
"""

from fractions import Fraction

LABELS = tuple(f"{10 * n}-{10 * n + 9}" for n in range(10)) + ("100",)
WIDTH, HEIGHT = 660, 230
LEFT, RIGHT, TOP, BOTTOM = 36, 8, 22, 34  # margins: the count axis, the bin labels


def bin_of(score, max_score):
    """The bin (an index of LABELS) of `score` out of `max_score`, computed exactly."""
    if score >= max_score:
        return len(LABELS) - 1
    return max(0, min(9, int(Fraction(score) * 10 / Fraction(max_score))))


def counts(scores):
    """[count per bin] for (score, max_score) pairs; pairs without a maximum are left out."""
    found = [0] * len(LABELS)
    for score, max_score in scores:
        if max_score > 0:
            found[bin_of(score, max_score)] += 1
    return found


def ticks(largest):
    """Whole-number gridlines from 0 to just above `largest`: at most six, a step of 1, 2
    or 5 times a power of ten."""
    power = 1
    while True:
        for step in (power, 2 * power, 5 * power):
            if largest <= 5 * step:
                return list(range(0, max(step, -(-largest // step) * step) + 1, step))
        power *= 10


def svg(scores):
    """The chart of (score, max_score) pairs, as an <svg> element."""
    found = counts(scores)
    gridlines = ticks(max(found))
    top = gridlines[-1]
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_width / len(found)
    parts = [f'<svg class="histogram" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
             f'role="img" aria-label="{" ".join(f"{label}%: {n}" for label, n in zip(LABELS, found))}">']
    for tick in gridlines:
        y = TOP + plot_height * (1 - tick / top)
        parts.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#e3e3e3"></line>'
                     f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{tick}</text>')
    for index, (label, count) in enumerate(zip(LABELS, found)):
        x = LEFT + slot * index + slot * 0.12
        height = plot_height * count / top
        y = TOP + plot_height - height
        colour = "#43a047" if index == len(LABELS) - 1 else "#5c7cfa"
        parts.append(f'<rect class="bin" data-bin="{label}" data-count="{count}" x="{x:.1f}" y="{y:.1f}" '
                     f'width="{slot * 0.76:.1f}" height="{height:.1f}" rx="2" fill="{colour}"></rect>')
        middle = x + slot * 0.38
        if count:
            parts.append(f'<text x="{middle:.1f}" y="{y - 5:.1f}" text-anchor="middle" class="count">{count}</text>')
        parts.append(f'<text x="{middle:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" class="tick">'
                     f"{label}</text>")
    parts.append(f'<line x1="{LEFT}" y1="{TOP + plot_height}" x2="{WIDTH - RIGHT}" y2="{TOP + plot_height}" '
                 'stroke="#888"></line></svg>')
    return "".join(parts)
