"""A model of how an engine behaves: the reference's, or one with a known mistake.

Plain data (no exercise logic): the catalog (hints.toml) describes each
misconception as a Model; the simulator (simulate.py, kit only) runs programs
under one; a recording keys the numbers a model gives by `model_key`.
"""

import functools
import json
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Model:
    """How the simulated engine behaves; the defaults are the reference's."""

    sends: tuple = ()  # ((op, (formula text per input, ...)), ...): wrong local rules
    assign: tuple = ()  # ops whose _backward uses `=` instead of `+=` ("all": every op)
    reset_intermediate: bool = True
    reset_leaves: bool = False
    root: str = "set"  # set: root.grad = 1.0 | add: += 1.0 | keep: never set
    call_order: str = "reverse"  # reverse | forward: the order _backward is called in
    visited: str = "identity"  # identity | data: what the topological sort's visited set holds
    zero_grad: str = "set"  # set | noop
    ders: tuple = ()  # ((op, formula text), ...): wrong Dual rules
    lift_der: float = 0.0  # der given to plain numbers lifted to Dual


@functools.lru_cache(maxsize=None)  # models are frozen, and few (the catalog's)
def model_key(model):
    """A model as one stable line of text (a recording's key)."""
    return json.dumps(asdict(model), sort_keys=True, separators=(",", ":"))
