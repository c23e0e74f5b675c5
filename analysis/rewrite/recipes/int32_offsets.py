"""Keep index arithmetic in 32 bits: drop `.to(tl.int64)` / `tl.cast(..., tl.int64)` on program ids and aranges.

64-bit offsets double the registers of every index and add instructions to each address (and run on Ascend's
scalar unit). The guess this recipe makes, named in its rationale: every offset of the kernel stays below
2**31 elements. Casts of loaded values (gathered indices) are kept.
"""

from __future__ import annotations

import ast

from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit


def _int64(ks: KernelSource, node: ast.AST) -> bool:
    return ks.resolve(node) == "triton.language.int64"


def _widened(ks: KernelSource, node: ast.AST) -> ast.AST | None:
    """The operand of `X.to(tl.int64)` or `tl.cast(X, tl.int64)`."""
    if not isinstance(node, ast.Call):
        return None
    if (
        isinstance(node.func, ast.Attribute)
        and node.func.attr == "to"
        and len(node.args) == 1
        and not node.keywords
        and _int64(ks, node.args[0])
    ):
        return node.func.value
    if ks.is_tl(node, "cast") and len(node.args) == 2 and not node.keywords and _int64(ks, node.args[1]):
        return node.args[0]
    return None


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    edits: list[Edit] = []
    kept = 0
    for node in ast.walk(ks.fn):
        operand = _widened(ks, node)
        if operand is None:
            continue
        if any(ks.is_tl(inner, "load") for inner in ast.walk(operand)) or not any(
            ks.is_tl(inner, "program_id", "arange") for inner in ast.walk(operand)
        ):
            kept += 1  # loaded data or plain scalars: their range is unknown
            continue
        if isinstance(node.func, ast.Attribute):
            # keep the parentheses that wrapped the operand: `(a + b).to(tl.int64)` -> `(a + b)`
            text = ks.text.source[ks.text.start(node) : ks.text.end(operand)]
            text += ")" * (text.count("(") - text.count(")"))
        else:
            text = f"({ks.segment(operand)})"
        edits.append(ks.text.replace(node, text))
    if not edits:
        raise Decline(
            "no int64 cast of a program id or arange" + (f" ({kept} cast(s) of loaded or scalar values kept)" if kept else "")
        )
    rationale = (
        f"Removed {len(edits)} int64 widening(s) of program ids / aranges, so index arithmetic runs in 32 bits. "
        "**Guess:** every offset of this kernel stays below 2**31 elements; the verification shapes cannot prove "
        "that for larger inputs."
    )
    return [finish(recipe, ks.ctx, edits, "Keep index arithmetic in int32", rationale)]


RECIPE = SourceRecipe(
    name="int32-offsets",
    title="Keep index arithmetic in int32",
    keys=("TL113", "TL312", "TL117", "TL402"),
    build=_build,
)
