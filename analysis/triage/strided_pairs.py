"""Interleaved fields read (or written) with a small constant stride along the lanes, one access per field (TL138):
each access uses 1/stride of every sector it touches and none vectorizes; one contiguous tile, split, does it in one."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, kernel_check, short
from .context import KernelContext
from .context_names import ATOMICS, TL
from .memory import _innermost_index, _interleaved, _stride_value

MAX_SMALL_STRIDE = 8  # strides up to this: the fields fit one tile [BLOCK, stride] (real/imag, xyz, rgba)

STRIDED_FIELDS = register(
    Rule(
        code="TL138",
        name="strided-field-accesses",
        title="Interleaved fields accessed one stride-2 (small stride) access per field",
        level=Level.TRIAGE,
        severity=Severity.INFO,
        platforms=("cuda", "ascend"),
        rationale=(
            "`x[2*i]` and `x[2*i + 1]` loaded separately (real and imaginary parts, rotary pairs, interleaved "
            "gates) make two accesses whose lanes are 2 elements apart: each uses half of every 32-byte sector "
            "it touches, so the sectors are fetched twice (the second time usually from L1/L2, which is why "
            "this is info: the cost is not proven from the source), and no lane holds contiguous elements, so "
            "no access becomes a 128-bit vector load. On Ascend each strided access is a discrete (non-"
            "contiguous) DMA instead of one block move. A lone strided access that leaves the other fields "
            "unread is TL109.\n\n"
            "**Fix:** load the contiguous `[BLOCK, 2]` tile once (`tl.load(x_ptr + 2 * i[:, None] + "
            "tl.arange(0, 2)[None, :])`) and split it (`re, im = tl.split(tile)`; `tl.reshape` + `tl.split` "
            "for a flat block), or index a 2-D tile with the field as the last axis; store with `tl.join` / "
            "`tl.interleave` the same way."
        ),
        references=(
            ref.CUDA_COALESCING,
            f"{ref.TRITON_DOCS}/python-api/generated/triton.language.split.html",
            f"{ref.TRITON_DOCS}/python-api/generated/triton.language.interleave.html",
            ref.ASCEND_MIGRATE,
        ),
    )
)


@kernel_check
def strided_field_accesses(ctx: KernelContext) -> Iterator[Finding]:
    exprs: dict[int, ast.AST] = {}
    owner: dict[int, ast.Call] = {}
    for call in ctx.calls_to(TL + "load", TL + "store", *ATOMICS):
        pointer = ctx.pointer_arg(call)
        if pointer is not None:
            for expr in ctx.address_exprs(pointer):
                exprs.setdefault(id(expr), expr)
                owner.setdefault(id(expr), call)
    groups: dict[tuple[str, int], list[tuple[ast.BinOp, ast.Call]]] = {}
    for key, expr in exprs.items():
        for node in ctx.walk(expr):
            if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult):
                continue
            for index, stride in ((node.left, node.right), (node.right, node.left)):
                value = _stride_value(ctx, stride)
                if value is None or value > MAX_SMALL_STRIDE or not _innermost_index(ctx, index):
                    continue
                if _interleaved(ctx, exprs.values(), value, node):  # the other fields are accessed too
                    groups.setdefault((ast.unparse(index), value), []).append((node, owner[key]))
                break
    for (index, stride), uses in groups.items():
        node, first = uses[0]
        kind = "loads" if any(ctx.load_call(call) is call for _, call in uses) else "stores"
        message = (
            f"`{short(ctx, node)}`: the fields of a stride-{stride} layout are accessed one strided access each "
            f"(adjacent lanes {stride} elements apart, 1/{stride} of each sector used per access, no vector "
            f"{kind}): access the contiguous [BLOCK, {stride}] tile once and split it"
            + (" (tl.split)" if stride == 2 else " (tl.reshape, then tl.split / a 2-D tile)")
        )
        lines = sorted({call.lineno for _, call in uses})
        yield finding(STRIDED_FIELDS, ctx, node, message, data={"stride": stride, "index": index, "lines": lines})
