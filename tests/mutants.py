"""A corpus of realistic student mistakes, each one bug in the reference solution.

Every mutant is a single textual replacement applied to reference/tiny_autograd.py:
`find` must occur exactly once in the reference (so the corpus breaks loudly when
the reference changes), and the graded suites must take points off the mutant in
its declared `category` (the rubric category whose tests exist to catch it).

The "why" column says which input exposes the mistake; it is the reason the
hidden suite needs that input.
"""

import re
from dataclasses import dataclass
from pathlib import Path

REFERENCE = Path(__file__).resolve().parent.parent / "reference" / "tiny_autograd.py"


@dataclass(frozen=True)
class Mutant:
    id: str
    category: str  # the rubric category in which it must lose points
    find: str
    replace: str
    why: str

    def apply(self, source):
        """The reference `source` with this one mistake in it."""
        count = source.count(self.find)
        if count != 1:
            raise AssertionError(
                f"mutant {self.id}: its find text occurs {count} times in the reference (expected once); "
                "update tests/mutants.py to the new reference:\n" + self.find
            )
        return source.replace(self.find, self.replace)


def mutant_source(mutant, reference=REFERENCE):
    return mutant.apply(Path(reference).read_text(encoding="utf-8"))


MUTANTS = [
    # ------------------------------------------------------------ accumulation: `=` for `+=`
    Mutant(
        "add_assigns", "accumulation",
        "self.grad += out.grad\n            other.grad += out.grad",
        "self.grad = out.grad\n            other.grad = out.grad",
        "x + x gives x only one path's gradient",
    ),
    Mutant(
        "mul_assigns", "accumulation",
        "self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
        "self.grad = other.data * out.grad\n            other.grad = self.data * out.grad",
        "x * x gives x·g instead of 2x·g",
    ),
    Mutant(
        "pow_assigns", "accumulation",
        "self.grad += k * self.data ** (k - 1) * out.grad",
        "self.grad = k * self.data ** (k - 1) * out.grad",
        "a node used by ** and by another op keeps only one contribution",
    ),
    Mutant(
        "exp_assigns", "accumulation",
        "self.grad += out.data * out.grad",
        "self.grad = out.data * out.grad",
        "x used by exp and by another op keeps only one contribution",
    ),
    # ----------------------------------------------------------------- gradients: local rules
    Mutant(
        "mul_not_crossing", "gradients",
        "self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
        "self.grad += self.data * out.grad\n            other.grad += other.data * out.grad",
        "x * y with x != y: each input gets its own value instead of the other's",
    ),
    Mutant(
        "pow_off_by_one", "gradients",
        "k * self.data ** (k - 1) * out.grad",
        "k * self.data ** k * out.grad",
        "x ** k with x != 1",
    ),
    Mutant(
        "exp_uses_input", "gradients",
        "self.grad += out.data * out.grad",
        "self.grad += self.data * out.grad",
        "exp(x) with x != e**x (always)",
    ),
    Mutant(
        "exp_forgets_upstream", "gradients",
        "self.grad += out.data * out.grad",
        "self.grad += out.data",
        "exp below the root (upstream gradient != 1)",
    ),
    Mutant(
        "log_missing_reciprocal", "gradients",
        "self.grad += (1.0 / self.data) * out.grad",
        "self.grad += out.grad",
        "log(x) with x != 1",
    ),
    Mutant(
        "log_uses_output", "gradients",
        "self.grad += (1.0 / self.data) * out.grad",
        "self.grad += (1.0 / out.data) * out.grad",
        "log(x) with ln x != x",
    ),
    Mutant(
        "log_forgets_upstream", "gradients",
        "self.grad += (1.0 / self.data) * out.grad",
        "self.grad += 1.0 / self.data",
        "log below the root (upstream gradient != 1)",
    ),
    Mutant(
        "tanh_uses_input", "gradients",
        "self.grad += (1.0 - t * t) * out.grad",
        "self.grad += (1.0 - self.data * self.data) * out.grad",
        "tanh(x) with x != 0: 1 - x² instead of 1 - t²",
    ),
    Mutant(
        "tanh_forgets_upstream", "gradients",
        "self.grad += (1.0 - t * t) * out.grad",
        "self.grad += 1.0 - t * t",
        "tanh below the root (upstream gradient != 1)",
    ),
    Mutant(
        "relu_one_at_zero", "gradients",
        "(1.0 if self.data > 0 else 0.0) * out.grad",
        "(1.0 if self.data >= 0 else 0.0) * out.grad",
        "relu at exactly 0: relu'(0) = 0",
    ),
    Mutant(
        "relu_tests_output_not_below_zero", "gradients",
        "(1.0 if self.data > 0 else 0.0) * out.grad",
        "(1.0 if out.data >= 0 else 0.0) * out.grad",
        "relu of a negative input: out.data is 0, so the gradient leaks through",
    ),
    # ------------------------------------------------------------------ gradients: derived ops
    Mutant(
        "rsub_swaps_operands", "gradients",
        "return Value(other) - self",
        "return self - other",
        "a plain number on the left of `-`: 1.5 - x computed as x - 1.5",
    ),
    Mutant(
        "rtruediv_swaps_operands", "gradients",
        "return Value(other) / self",
        "return self / other",
        "a plain number on the left of `/`: 3 / x computed as x / 3",
    ),
    # ------------------------------------------------------------------ gradients: backward()
    Mutant(
        "root_grad_not_set", "gradients",
        "        self.grad = 1.0\n        for node in reversed(order):",
        "        for node in reversed(order):",
        "every gradient stays 0",
    ),
    Mutant(
        "order_not_reversed", "gradients",
        "for node in reversed(order):",
        "for node in order:",
        "a chain of two or more ops: inputs pass on their grad before they have it",
    ),
    Mutant(
        "backward_returns_none", "gradients",
        "        return order\n        # END SOLUTION",
        "        return None\n        # END SOLUTION",
        "backward() must return the topological order",
    ),
    Mutant(
        "backward_returns_reversed_order", "gradients",
        "        return order\n        # END SOLUTION",
        "        return order[::-1]\n        # END SOLUTION",
        "the returned order must put inputs first and the root last",
    ),
    Mutant(
        "topological_order_breadth_first", "gradients",
        "    visited = set()\n"
        "    stack = [(root, False)]\n"
        "    while stack:\n"
        "        node, inputs_done = stack.pop()\n"
        "        if inputs_done:\n"
        "            order.append(node)\n"
        "        elif node not in visited:\n"
        "            visited.add(node)\n"
        "            stack.append((node, True))\n"
        "            for parent in node._parents:\n"
        "                if parent not in visited:\n"
        "                    stack.append((parent, False))\n"
        "    return order\n",
        "    visited = set()\n"
        "    queue = [root]\n"
        "    while queue:\n"
        "        node = queue.pop(0)\n"
        "        if node not in visited:\n"
        "            visited.add(node)\n"
        "            order.append(node)\n"
        "            queue.extend(node._parents)\n"
        "    order.reverse()\n"
        "    return order\n",
        "breadth-first from the root, reversed: a node that is also an input of a node farther from "
        "the root comes after it (x feeding both the root's input and a deeper node)",
    ),
    Mutant(
        "visited_keyed_by_data", "gradients",
        "        elif node not in visited:\n"
        "            visited.add(node)\n"
        "            stack.append((node, True))\n"
        "            for parent in node._parents:\n"
        "                if parent not in visited:",
        "        elif node.data not in visited:\n"
        "            visited.add(node.data)\n"
        "            stack.append((node, True))\n"
        "            for parent in node._parents:\n"
        "                if parent.data not in visited:",
        "two distinct inner nodes with equal data: one of them is never visited",
    ),
    # --------------------------------------------------------- accumulation: backward() twice
    Mutant(
        "leaf_grads_reset_too", "accumulation",
        "            if node._parents:\n                node.grad = 0.0",
        "            node.grad = 0.0",
        "two backward() calls must add up on the leaves",
    ),
    Mutant(
        "root_grad_adds_one", "accumulation",
        "        self.grad = 1.0\n        for node in reversed(order):",
        "        self.grad += 1.0\n        for node in reversed(order):",
        "a leaf used as the root must get grad 1.0 on every backward() call, not 1, 2, 3",
    ),
    Mutant(
        "topological_order_repeats_nodes", "accumulation",
        "        elif node not in visited:",
        "        else:",
        "a node reached by two paths is visited (and its _backward run) twice",
    ),
    # ---------------------------------------------------------------------------- zero_grad
    Mutant(
        "intermediate_grads_not_reset", "zero_grad",
        "        for node in order:\n            if node._parents:\n                node.grad = 0.0\n",
        "",
        "a second backward() adds onto stale inner gradients (visible three levels deep)",
    ),
    Mutant(
        "zero_grad_does_nothing", "zero_grad",
        "    for value in values:\n        value.grad = 0.0",
        "    for value in values:\n        pass",
        "backward(); zero_grad(); read",
    ),
    Mutant(
        "zero_grad_sets_one", "zero_grad",
        "    for value in values:\n        value.grad = 0.0",
        "    for value in values:\n        value.grad = 1.0",
        "backward(); zero_grad(); read",
    ),
    Mutant(
        "zero_grad_only_leaves", "zero_grad",
        "    for value in values:\n        value.grad = 0.0",
        "    for value in values:\n        if not value._parents:\n            value.grad = 0.0",
        "zero_grad given an intermediate node (it must reset every value it is given, not only leaves)",
    ),
    Mutant(
        "zero_grad_only_first", "zero_grad",
        "    for value in values:\n        value.grad = 0.0",
        "    for value in values[:1]:\n        value.grad = 0.0",
        "zero_grad of two or more values",
    ),
    # ------------------------------------------------------------------------- forward mode
    Mutant(
        "dual_add_drops_other_der", "forward_mode",
        "der = self.der + other.der",
        "der = self.der",
        "a sum whose right operand carries a derivative",
    ),
    Mutant(
        "dual_mul_missing_cross_term", "forward_mode",
        "der = self.val * other.der + self.der * other.val",
        "der = self.der * other.val",
        "a product whose right operand carries a derivative",
    ),
    Mutant(
        "dual_exp_keeps_der", "forward_mode",
        "der = e * self.der",
        "der = self.der",
        "exp: the derivative part is e**a · b",
    ),
    Mutant(
        "dual_tanh_uses_input", "forward_mode",
        "der = (1.0 - t * t) * self.der",
        "der = (1.0 - self.val * self.val) * self.der",
        "tanh at a != 0: 1 - a² instead of 1 - t²",
    ),
    Mutant(
        "dual_tanh_forgets_seed", "forward_mode",
        "der = (1.0 - t * t) * self.der",
        "der = 1.0 - t * t",
        "a seed derivative other than 1",
    ),
    Mutant(
        "dual_lifts_numbers_with_der_one", "forward_mode",
        "Dual(other, 0.0)",
        "Dual(other, 1.0)",
        "a plain number is a constant: its derivative part is 0",
    ),
    Mutant(
        "dual_default_der_one", "forward_mode",
        "der=0.0):\n        self.val = _as_float(val, \"Dual\")",
        "der=1.0):\n        self.val = _as_float(val, \"Dual\")",
        "Dual(3.0), built without a der, is a constant: its der is 0",
    ),
    Mutant(
        "dual_radd_returns_float", "forward_mode",
        "    __radd__ = __add__\n    __rmul__ = __mul__\n",
        "    __rmul__ = __mul__\n\n    def __radd__(self, other):\n        return other + self.val\n",
        "a plain number on the left of + (2.0 + d) must give a Dual, not a float",
    ),
    Mutant(
        "dual_sub_adds_ders", "forward_mode",
        "        return self + (-self._lift(other))",
        "        other = self._lift(other)\n        return Dual(self.val - other.val, self.der + other.der)",
        "a difference whose right operand carries a derivative: the der of a - b is da - db",
    ),
]

BY_ID = {mutant.id: mutant for mutant in MUTANTS}


# ------------------------------------------------- what feedback must say about each

_SOURCE = REFERENCE.read_text(encoding="utf-8")

# The hint each mistake must get (None: no hint fits it, so none may show). Mutants
# not listed are checked for their culprit only; an `own_` prefix (a test file's own
# mutants) and a shared suffix (`mul_assigns` -> `assigns`) find the entry.
HINTS = {
    "assigns": "assign-instead-of-add",
    "mul_not_crossing": "mul-not-crossed",
    "forgets_upstream": "missing-upstream",
    "pow_off_by_one": "pow-off-by-one",
    "pow_missing_factor_k": "pow-missing-k",
    "exp_uses_input": "exp-uses-input",
    "log_missing_reciprocal": "log-wrong-derivative",
    "log_uses_output": "log-wrong-derivative",
    "log_uses_input": "log-wrong-derivative",
    "tanh_uses_input": "tanh-uses-input",
    "relu_one_at_zero": "relu-at-zero",
    "relu_tests_output_not_below_zero": "relu-always-passes",
    "relu_passes_always": "relu-always-passes",
    "root_grad_not_set": "root-grad-not-one",
    "root_grad_adds_one": "root-grad-not-one",
    "order_not_reversed": "reverse-call-order",
    "visited_keyed_by_data": "visited-by-value",
    "leaf_grads_reset_too": "leaf-grads-reset",
    "intermediate_grads_not_reset": "missing-intermediate-reset",
    "zero_grad_does_nothing": "zero-grad-noop",
    "dual_add_drops_other_der": "dual-add-one-side",
    "dual_mul_missing_cross_term": "dual-mul-cross-term",
    "dual_mul_multiplies_ders": "dual-mul-cross-term",
    "dual_exp_keeps_der": "dual-exp-derivative",
    "dual_tanh_uses_input": "tanh-uses-input",
    "dual_tanh_forgets_seed": "dual-missing-chain",
    "dual_lifts_numbers_with_der_one": "dual-lift-der-one",
    "add_drops_right_input": None,
    "backward_returns_none": None,
    "backward_returns_reversed_order": None,
    "topological_order_repeats_nodes": None,
    "zero_grad_sets_one": None,
    "zero_grad_only_first": None,
}
NO_HINT = object()


def expected_hint(mutant_id):
    """The hint id the mistake must get, None when no hint fits, NO_HINT when not listed."""
    name = mutant_id.removeprefix("own_")
    if name in HINTS:
        return HINTS[name]
    for suffix, hint in HINTS.items():
        if name.endswith("_" + suffix):
            return hint
    return NO_HINT


# A built method's own mistake (operands swapped in __rsub__) is its own, not its
# primitives': the finding names the method (Finding.method).
METHOD_LABELS = {"__add__": "+", "__mul__": "*", "__pow__": "**", "exp": "exp", "log": "log", "tanh": "tanh",
                 "relu": "relu", "backward": "backward", "_topological_order": "backward", "zero_grad": "zero_grad",
                 "__rsub__": "Value.__rsub__", "__rtruediv__": "Value.__rtruediv__", "__neg__": "Value.__neg__",
                 "__sub__": "Value.__sub__"}
DUAL_LABELS = {"__add__": "Dual.+", "__mul__": "Dual.*", "exp": "Dual.exp", "tanh": "Dual.tanh", "_lift": "Dual.lift",
               "__init__": "Dual.__init__", "__radd__": "Dual.__radd__", "__sub__": "Dual.__sub__"}


def blamed(finding):
    """What a finding (object or dict) blames: the built method, else the culprit label."""
    get = finding.get if isinstance(finding, dict) else lambda key: getattr(finding, key)
    return get("method") or get("culprit")


def expected_culprit(mutant):
    """What the feedback must blame: read off where the mutant edits the reference
    (the method it is in, or the class-level alias it replaces, `__radd__ = __add__`)."""
    upto = _SOURCE[: _SOURCE.index(mutant.find)] + mutant.find.split("\n")[0]
    function = [name or alias for name, alias in re.findall(r"^(?:    )?(?:def (\w+)|(\w+) = \w+$)", upto, re.M)][-1]
    before = _SOURCE[: _SOURCE.index(mutant.find)]
    top_level = re.search(rf"^def {function}\b", before, re.M) is not None
    cls = re.findall(r"^class (\w+)", before, re.M)[-1]
    if cls == "Dual" and not top_level:
        return DUAL_LABELS[function]
    return METHOD_LABELS[function]


