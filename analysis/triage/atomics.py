"""One atomic per program onto one address for the whole grid (TL132): every program's update serializes."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from math import prod

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, kernel_check, short
from .context import KernelContext
from .context_names import ATOMICS

GRID_ATOMIC = register(
    Rule(
        code="TL132",
        name="grid-wide-single-address-atomic",
        title="Every program's atomic lands on the same address",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "`tl.atomic_add(out_ptr, tl.sum(x))` once per program sends every program's update to one address. "
            "Atomics to one address are processed one after another at the L2 slice (NVIDIA) or global memory "
            "(Ascend) that owns it, so with thousands of programs the tail of the kernel is a serial chain of "
            "read-modify-writes, and the floating-point result depends on the order (not reproducible run to "
            "run).\n\n"
            "Not reported for counters and locks (the value is a constant: work queues, semaphores), for "
            "addresses that depend on the program id or loaded indices, or for small literal grids.\n\n"
            "**Fix:** write one partial per program (`tl.store(partial_ptr + pid, total)`) and reduce the "
            "partials with a second small kernel (or `torch.sum`); or launch fewer, persistent programs that "
            "each loop over many blocks, so only a few atomics remain."
        ),
        references=(ref.ATOMIC_ADD, ref.CUDA_ATOMICS),
    )
)

_SMALL_GRID = 32


@kernel_check
def grid_wide_atomic(ctx: KernelContext) -> Iterator[Finding]:
    if not ctx.has_arange:
        return  # one program per element: TL112
    for call, name in ctx.calls:
        if name not in ATOMICS or ctx.enclosing_loops(call):
            continue  # in a loop: TL112
        pointer = ctx.pointer_arg(call)
        value = (
            call.args[1]
            if len(call.args) > 1
            else next((k.value for k in call.keywords if k.arg == "val"), None)
        )
        if pointer is None or value is None or not _single_address(ctx, pointer) or not _data(ctx, value):
            continue
        if _small_literal_grids(ctx):
            continue
        op = name.rsplit(".", 1)[-1]
        message = (
            f"{op}({short(ctx, pointer)}, ...) runs once per program on the same address: the whole grid "
            "serializes on it; store per-program partials and reduce them"
        )
        yield finding(GRID_ATOMIC, ctx, call, message, data={"op": op})


def _single_address(ctx: KernelContext, pointer: ast.AST) -> bool:
    """The address is a pointer parameter plus constants: the same for every program and lane."""
    if ctx.is_block_expr(pointer):
        return False
    names: set[str] = set()
    for expr in ctx.address_exprs(pointer):
        names |= ctx.names_of(expr)
    if any(isinstance(c, ast.Call) for e in ctx.address_exprs(pointer) for c in ctx.walk(e)):
        return False  # program_id, loads, casts: not provably one address
    if names & (ctx.program_id_names | set(ctx.load_names) | ctx.index_names | _loop_targets(ctx)):
        return False
    return any(n in ctx.params and not ctx.params[n].is_constexpr for n in names)


def _loop_targets(ctx: KernelContext) -> set[str]:
    return {n.id for loop in ctx.loops for n in ctx.walk(loop.target) if isinstance(n, ast.Name)}


def _data(ctx: KernelContext, value: ast.AST) -> bool:
    """The value comes from loaded data (a partial sum), not a constant (a counter or a lock)."""
    if isinstance(value, ast.Constant):
        return False
    loads = set(ctx.load_names)
    return any(isinstance(c, ast.Call) and ctx.load_call(c) is c for c in ctx.walk(value)) or bool(
        ctx.names_of(value) & ctx.names_closure(loads)
    )


def _small_literal_grids(ctx: KernelContext) -> bool:
    grids = [site.grid_value or site.grid_resolved_value for site in ctx.launches]
    return bool(grids) and all(
        g is not None and all(isinstance(d, int) for d in g) and prod(g) <= _SMALL_GRID for g in grids
    )
