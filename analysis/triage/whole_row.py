"""A whole row of a large dimension in one block (TL139): `tl.arange(0, BLOCK)` with the launch setting BLOCK to
`triton.next_power_of_2(n)` (or a literal of 32K and more) and no loop over column blocks."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from ..source.safe_eval import UNKNOWN
from ..specialize.launch import resolve
from ..specialize.scope import Launch, Scope
from . import references as ref
from .base import finding, kernel_check
from .context import KernelContext
from .lanes import DEFAULT_WARPS, WARP
from .launch_facts import launches

LARGE_ROW = 32 * 1024  # elements: a vocabulary-sized row (32K-256K), far beyond a block that fits on chip
MAX_REGISTERS = 255  # per thread on NVIDIA; one fp32 element per register at least

WHOLE_ROW = register(
    Rule(
        code="TL139",
        name="whole-row-in-one-block",
        title="A whole row of a large dimension is one block (the row lives in registers)",
        level=Level.TRIAGE,
        severity=Severity.INFO,
        platforms=("cuda", "ascend"),
        rationale=(
            "`BLOCK = triton.next_power_of_2(n)` at the launch and `tl.arange(0, BLOCK)` in the kernel puts the "
            "whole row in one block. That is the fused-softmax tutorial's choice for rows that fit; for a "
            "vocabulary-sized row (32K-256K elements: logits, sampling, cross-entropy) the block needs "
            "BLOCK / (32 * num_warps) elements per thread: 65536 fp32 at 4 warps is 512 per thread, twice "
            "the 255 registers a thread can have, so the row spills to local memory (and on Ascend a 256 KB "
            "fp32 row exceeds the 192 KB unified buffer). Reported as a warning only when the size is known "
            "(a literal, or a launch whose `n` resolves) and exceeds the registers at the launch's num_warps; "
            "info when it is known and fits. Nothing is reported when `n` is only known at run time: the "
            "tutorial's rows that fit are the common case, and a finding must not rest on a size nobody showed.\n\n"
            "**Fix:** loop over the row in column blocks of a fixed size (`for start in range(0, n, BLOCK)`, "
            "BLOCK 1024-4096) with running statistics (online max/sum), or cap the block "
            "(`min(triton.next_power_of_2(n), 4096)`) and loop."
        ),
        references=(ref.FUSED_SOFTMAX, ref.LAYER_NORM),
        escalates_to=Severity.WARNING,
        escalation="when the size is known and the row needs more than 255 registers per thread",
    )
)


@kernel_check
def whole_row_in_one_block(ctx: KernelContext) -> Iterator[Finding]:
    if ctx.kernel.is_helper or ctx.module.tree is None:
        return
    stepped = _loop_steps(ctx)
    for call, end in ctx.arange_sizes:
        if not isinstance(end, ast.Name) or end.id not in ctx.params or end.id in stepped:
            continue
        start = call.args[0] if len(call.args) >= 2 else None
        if start is not None and not (isinstance(start, ast.Constant) and start.value == 0):
            continue
        param = end.id
        for launch in launches(ctx.module.tree, ctx.name):
            found = _launch_size(ctx, launch, param)
            if found is None:
                continue
            size, dim = found
            if size is None:  # only `next_power_of_2(n)` is known: silent (no finding rests on an unshown size)
                continue
            yield _finding(WHOLE_ROW, ctx, call, param, size, dim, _warps(launch))
            return


def _finding(
    rule: Rule, ctx: KernelContext, call: ast.Call, param: str, size: int, dim: str, warps: int
) -> Finding:
    assert size is not None
    per_thread = size // (WARP * warps)
    spills = per_thread > MAX_REGISTERS
    message = (
        f"`{param}` = {size} at the launch: the whole row is one block, {per_thread} elements per thread at "
        f"num_warps={warps}" + (f" (> {MAX_REGISTERS} registers: it spills)" if spills else "")
        + "; loop over column blocks of 1024-4096 instead"
    )
    severity = Severity.WARNING if spills else Severity.INFO
    data = {"param": param, "size": size, "per_thread": per_thread, "num_warps": warps}
    return finding(rule, ctx, call, message, severity=severity, data=data)


def _loop_steps(ctx: KernelContext) -> set[str]:
    """Parameters a loop of the kernel steps by (`range(0, n, BLOCK)`): the block is a column block."""
    out: set[str] = set()
    for loop in ctx.loops:
        if isinstance(loop.iter, ast.Call):
            for arg in loop.iter.args[2:]:
                out |= ctx.names_of(arg)
    return out


def _launch_size(ctx: KernelContext, launch: Launch, param: str) -> tuple[int | None, str] | None:
    """(known size, or None when only `next_power_of_2(dim)` is known; the dimension's text) for a launch that
    sets `param` to a large literal or to the next power of two of a dimension; None otherwise."""
    arg = next((k.value for k in launch.call.keywords if k.arg == param), None)
    if arg is None:
        positional = [p.name for p in ctx.kernel.params if p.kind == "positional"]
        if param in positional and positional.index(param) < len(launch.call.args):
            arg = launch.call.args[positional.index(param)]
    if arg is None or any(isinstance(a, ast.Starred) for a in launch.call.args):
        return None
    fact = resolve(arg, launch.scope)
    value = fact.value if fact.kind == "value" else UNKNOWN
    pow2 = _next_power_of_two_of(arg, launch.scope)
    if isinstance(value, int) and not isinstance(value, bool):
        return (value, pow2 or str(value)) if value >= LARGE_ROW else None
    if pow2 is not None:
        return None, pow2
    return None


def _next_power_of_two_of(expr: ast.expr, scope: Scope, depth: int = 0) -> str | None:
    """The dimension `expr` is the next power of two of, following names bound before the launch; None when it
    is capped (`min(next_power_of_2(n), 4096)`) or is something else."""
    if depth > 6:
        return None
    if isinstance(expr, ast.Name):
        found = scope.lookup(expr.id)
        if found is None or found[0] != "expr":
            return None
        return _next_power_of_two_of(found[1], scope, depth + 1)
    if isinstance(expr, ast.Call):
        func = expr.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "next_power_of_2" and expr.args:
            return ast.unparse(expr.args[0])
        if name == "max" and expr.args:  # max(16, next_power_of_2(n)): still the whole row
            return next((d for a in expr.args if (d := _next_power_of_two_of(a, scope, depth + 1))), None)
    return None


def _warps(launch: Launch) -> int:
    arg = next((k.value for k in launch.call.keywords if k.arg == "num_warps"), None)
    if arg is None:
        return DEFAULT_WARPS
    fact = resolve(arg, launch.scope)
    value = fact.value if fact.kind == "value" else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else DEFAULT_WARPS
