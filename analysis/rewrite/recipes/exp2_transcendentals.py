"""exp / log through the hardware's base-2 units: `tl.exp(x)` -> `tl.exp2(x * log2(e))`, `tl.log` likewise.

On Ascend the vector unit's exp and log go through library sequences, while exp2/log2 map to the base-2
instructions directly; on NVIDIA Triton already lowers fp32 `tl.exp` to `ex2.approx`, so expect no gain there
(the gate measures it). Results differ from the natural-base functions in the last bits.
"""

from __future__ import annotations

import ast

from ..recipe_edits import paren
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit

LOG2_E = "1.4426950408889634"
LN_2 = "0.6931471805599453"


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    edits: list[Edit] = []
    counts = {"exp": 0, "log": 0}
    for node in ast.walk(ks.fn):
        name = ks.tl_call(node)
        if name not in counts or len(node.args) != 1 or node.keywords:
            continue
        if any(ks.tl_call(inner) in counts for inner in ast.walk(node.args[0])):
            continue  # nested: rewrite the outer call only, never overlapping edits
        operand = ks.segment(node.args[0])
        if name == "exp":
            text = f"{ks.tl('exp2')}({paren(operand)} * {LOG2_E})"
        else:
            text = f"({ks.tl('log2')}({operand}) * {LN_2})"
        edits.append(ks.text.replace(node, text))
        counts[name] += 1
    if not edits:
        raise Decline("no tl.exp or tl.log call with a single operand")
    done = ", ".join(f"{n} tl.{k}" for k, n in counts.items() if n)
    rationale = (
        f"Rewrote {done} through the base-2 functions with the conversion constant folded in. Ascend's vector "
        "unit runs exp2/log2 natively; on NVIDIA fp32 tl.exp already lowers to ex2, so no gain is expected there."
    )
    return [finish(recipe, ks.ctx, edits, "Use exp2/log2 with a folded constant", rationale)]


RECIPE = SourceRecipe(
    name="exp2-transcendentals",
    title="Use exp2/log2 with a folded constant",
    keys=("TL129", "TL313"),
    build=_build,
)
