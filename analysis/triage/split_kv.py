"""Decode attention without split-KV (TL140): an attention loop (running max, exp, scores against key blocks) in a
kernel whose programs are only (batch, head) scalars, each looping over the whole KV length."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from . import references as ref
from .attention_loop import attention_step
from .base import finding, header_span, kernel_check
from .context import KernelContext
from .context_names import TL

NO_SPLIT_KV = register(
    Rule(
        code="TL140",
        name="decode-attention-without-split-kv",
        title="Decode attention: one program per (batch, head) walks the whole KV length",
        level=Level.TRIAGE,
        severity=Severity.INFO,
        platforms=("cuda", "ascend"),
        rationale=(
            "An attention loop (scores of the query against key blocks, a running max, exponentials) in a "
            "kernel whose program ids are used only as scalar batch / head indices, with no program axis over "
            "the queries or the key sequence, starts batch x heads programs, each walking the whole KV length "
            "alone. At decode (one query per sequence) and small batch that is fewer programs than the device "
            "has SMs / AI cores (32 x 8 KV heads = 256 programs on 132 SMs is two short waves; batch 1 is 8), "
            "and every program's loop is as long as the context. Info: whether the grid is small depends on "
            "the batch and head count at the launch.\n\n"
            "**Fix:** split the KV length across a grid axis (flash-decoding): each program handles one chunk "
            "of keys and writes its partial output with its max and log-sum-exp; a second small kernel combines "
            "the chunks (`o = sum_i exp(lse_i - lse) * o_i`)."
        ),
        references=(ref.FUSED_SOFTMAX, "https://crfm.stanford.edu/2023/10/12/flashdecoding.html"),
    )
)

@kernel_check
def decode_attention_without_split_kv(ctx: KernelContext) -> Iterator[Finding]:
    if ctx.kernel.is_helper:
        return
    pids = _direct_pid_names(ctx)
    if not pids or _tiles_over_programs(ctx, pids):
        return  # no program id, or a program axis over query / key blocks (prefill, split-KV)
    for loop in ctx.loops:
        if not ctx.is_range_loop(loop) or ctx.enclosing_loops(loop):
            continue
        if not attention_step(ctx, loop):
            continue
        bounds = set().union(*(ctx.names_of(a) for a in loop.iter.args)) if isinstance(loop.iter, ast.Call) else set()
        if bounds & pids:
            continue  # the loop's range moves with a program id: the KV length is already split
        message = (
            f"the attention loop at line {loop.lineno} walks the whole KV length in each program, and the "
            "programs are only (batch, head) indices: at decode and small batch that is few programs for the "
            "device; split the KV length over a grid axis (flash-decoding) and combine the partial results"
        )
        yield finding(NO_SPLIT_KV, ctx, header_span(ctx, loop), message, data={"loop_line": loop.lineno})
        return


def _direct_pid_names(ctx: KernelContext) -> set[str]:
    """Names computed from `tl.program_id` by arithmetic alone (a value loaded through one is not one)."""
    roots = {
        name for name, values in ctx.assigns.items()
        if any(_has_pid(ctx, v) and not _has_load(ctx, v) for v in values)
    }  # fmt: skip
    out = set(roots)
    changed = True
    while changed:
        changed = False
        for name, values in ctx.assigns.items():
            if name not in out and any(ctx.names_of(v) & out and not _has_load(ctx, v) for v in values):
                out.add(name)
                changed = True
    return out - ctx.block_names


def _has_pid(ctx: KernelContext, node: ast.AST) -> bool:
    return any(isinstance(s, ast.Call) and ctx.resolve(s.func) == TL + "program_id" for s in ctx.walk(node))


def _has_load(ctx: KernelContext, node: ast.AST) -> bool:
    return any(isinstance(s, ast.Call) and ctx.load_call(s) is s for s in ctx.walk(node))


def _tiles_over_programs(ctx: KernelContext, pids: set[str]) -> bool:
    """A program id scaled by a block size and added to a `tl.arange` (`pid_m * BLOCK_M + tl.arange(...)`), or
    bounding a loop: the grid has an axis over a sequence, not only batch and heads."""
    sizes = ctx.block_size_params
    for node in ctx.nodes:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            sides = (node.left, node.right)
            if any(ctx.names_of(s) & pids for s in sides) and any(ctx.names_of(s) & sizes for s in sides):
                return True
    for loop in ctx.loops:
        if isinstance(loop.iter, ast.Call) and any(ctx.names_of(a) & pids for a in loop.iter.args):
            return True
    return False
