"""How work is split over programs: one program per element, scalar loads per program, contended atomics."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from math import prod

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, kernel_check, short
from .context import KernelContext
from .context_names import ATOMICS, TL

# A literal grid this small with scalar programs is a deliberate single-lane kernel, not per-element launching.
_SMALL_GRID = 64

PROGRAM_PER_ELEMENT = register(
    Rule(
        code="TL104",
        name="one-program-per-element",
        title="The launch starts one program per element",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "A Triton program is meant to process a *block* of elements. When the kernel never builds a block "
            "(`tl.arange`, `tl.make_block_ptr`) and the grid has one program per element, every program does a "
            "handful of scalar instructions: on NVIDIA each program becomes a whole CTA of `num_warps * 32` threads "
            "of which one lane does work, and launch/scheduling overhead dominates; on Ascend each program is an "
            "AI-core task and the grid is capped at 65535, so this shape is both slow and limited.\n\n"
            "**Fix:** give each program `BLOCK_SIZE: tl.constexpr` elements with "
            "`offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)` and a mask, and launch "
            "`grid = (triton.cdiv(n, BLOCK_SIZE),)` as in the vector-add tutorial."
        ),
        references=(ref.VECTOR_ADD, ref.ASCEND_ARCH_DIFF),
    )
)

SCALAR_LOAD = register(
    Rule(
        code="TL105",
        name="scalar-load-per-program",
        title="Scalar load indexed by the program id",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "`tl.load(ptr + pid)` in a kernel without any block reads one element per program. Memory traffic "
            "then happens one 4-byte word at a time: on NVIDIA no coalescing across threads is possible because "
            "only one thread of the CTA issues the load, and on Ascend each load is a separate small DMA into the "
            "unified buffer.\n\n"
            "**Fix:** load a block, `tl.load(ptr + pid * BLOCK + tl.arange(0, BLOCK), mask=...)`, so one program "
            "moves BLOCK contiguous elements with wide vector transactions."
        ),
        references=(ref.VECTOR_ADD, ref.CUDA_COALESCING, ref.ASCEND_VECTOR_OPS),
    )
)

HOT_ATOMIC = register(
    Rule(
        code="TL112",
        name="atomic-same-address-hot-path",
        title="Atomic on a single address in a loop or once per element",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "Atomics to *one* address serialize: every update waits for the previous one at the L2 (NVIDIA) or "
            "global-memory (Ascend) atomic unit. An atomic on a scalar pointer inside a loop, or in a kernel that "
            "runs one program per element, turns a reduction into a long serial chain of read-modify-writes.\n\n"
            "**Fix:** accumulate in registers (`acc += tl.sum(x, axis=0)` over the loop) and issue one atomic per "
            "program after the loop, or write per-program partials to a buffer and reduce them in a second pass."
        ),
        references=(ref.ATOMIC_ADD, ref.CUDA_ATOMICS),
    )
)


@kernel_check
def one_program_per_element(ctx: KernelContext) -> Iterator[Finding]:
    if ctx.has_arange or not any(True for _ in ctx.calls_to(TL + "program_id")):
        return
    if not any(True for _ in ctx.calls_to(TL + "load", TL + "store")):
        return
    if _serial_per_program(ctx):
        return  # each program loops over many elements: serial work per program, not one element each
    for launch in ctx.launches:
        grid = launch.grid_value or launch.grid_resolved_value
        if grid is not None and all(isinstance(g, int) for g in grid) and prod(grid) <= _SMALL_GRID:
            continue
        text = launch.grid_resolved_text or launch.grid_text
        if "cdiv" in text or "//" in text:
            continue
        message = f"grid {short(ctx, launch.node.func.slice)} starts one program per element of `{ctx.name}`"
        yield finding(PROGRAM_PER_ELEMENT, ctx, launch.grid_span, message, data={"grid": text})


@kernel_check
def scalar_load_per_program(ctx: KernelContext) -> Iterator[Finding]:
    if ctx.has_arange:
        return
    if _serial_per_program(ctx):
        return  # a program that loops over elements is not a one-element program
    pid_names = ctx.program_id_names
    for call in ctx.calls_to(TL + "load"):
        pointer = ctx.pointer_arg(call)
        if pointer is None:
            continue
        uses_pid = any(
            (isinstance(n, ast.Name) and n.id in pid_names)
            or (isinstance(n, ast.Call) and ctx.resolve(n.func) == TL + "program_id")
            for n in ctx.walk(pointer)
        )
        if uses_pid:
            message = f"tl.load({short(ctx, pointer)}) reads one element per program: load a block instead"
            yield finding(SCALAR_LOAD, ctx, call, message)


@kernel_check
def atomic_same_address(ctx: KernelContext) -> Iterator[Finding]:
    for call in ctx.calls_to(*ATOMICS):
        pointer = ctx.pointer_arg(call)
        if pointer is None or ctx.is_block_expr(pointer):
            continue
        loops = ctx.enclosing_loops(call)
        op = ctx.resolve(call.func).rsplit(".", 1)[-1]
        if loops and _moves_or_accumulates(ctx, loops[0], call, pointer):
            continue
        if loops:
            where = f"inside the loop at line {loops[0].lineno}"
        elif not ctx.has_arange and _indexes_by_program(ctx) and not _per_program(ctx, pointer):
            where = "once per element (one program per element)"
        else:
            continue
        message = (
            f"{op} on the single address {short(ctx, pointer)} {where}: accumulate first, then one atomic"
        )
        yield finding(HOT_ATOMIC, ctx, call, message)


def _serial_per_program(ctx: KernelContext) -> bool:
    """Whether some loop of the kernel reads or writes memory: each program then handles many elements."""
    return any(ctx.enclosing_loops(call) for call in ctx.calls_to(TL + "load", TL + "store", *ATOMICS))


def _moves_or_accumulates(ctx: KernelContext, loop: ast.For, call: ast.Call, pointer: ast.AST) -> bool:
    """Whether an atomic in `loop` is not the hot single-address pattern: its address changes with the loop
    (the loop variable or any value the loop assigns, e.g. an index loaded per iteration), or the value it
    adds was already accumulated in the loop (a segment flushed once per key)."""
    changed = ctx.assigned_in(loop) | {n.id for n in ctx.walk(loop.target) if isinstance(n, ast.Name)}
    if ctx.names_of(pointer) & changed:
        return True
    values = call.args[1:2] or [kw.value for kw in call.keywords if kw.arg == "val"]
    accumulated = {
        sub.target.id
        for sub in ctx.walk(loop)
        if isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name)
    }
    return any(ctx.names_of(v) & accumulated for v in values)


def _per_program(ctx: KernelContext, pointer: ast.AST) -> bool:
    """The address moves with the program id (a per-output counter, a slot per program): not one address."""
    return bool(ctx.names_of(pointer) & ctx.program_id_names) or any(
        isinstance(n, ast.Call) and ctx.resolve(n.func) == TL + "program_id" for n in ctx.walk(pointer))


def _indexes_by_program(ctx: KernelContext) -> bool:
    """Whether the kernel reads or writes memory at addresses derived from the program id (per-element work)."""
    pointers = (ctx.pointer_arg(call) for call in ctx.calls_to(TL + "load", TL + "store", *ATOMICS))
    return any(p is not None and _per_program(ctx, p) for p in pointers)
