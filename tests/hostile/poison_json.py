# Poison the worker's own reply encoder: every reply becomes NaN, deeply nested
# arrays, or a line that is not JSON at all.
import itertools
import json

_calls = itertools.count()


def _poisoned_dumps(*args, **kwargs):
    number = next(_calls) % 4
    if number == 0:  # the load report passes, so that the requests get poisoned
        return json.JSONEncoder().encode(args[0])
    if number == 1:
        return '{"id": 1, "outcome": NaN}'
    if number == 2:
        return "[" * 200_000
    return "\udcff not json \x00"


json.dumps = _poisoned_dumps
