"""Loop rules: loads that do not depend on the loop, scalar loops where a block op fits, multi-pass reads."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..core.findings import Finding, Fix, Level, Severity, Span, TextEdit
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, header_span, kernel_check, short
from .context import KernelContext
from .context_names import ATOMICS, TL
from .online_max import max_passes
from .shapes import rank

INVARIANT_LOAD = register(
    Rule(
        code="TL106",
        name="loop-invariant-load",
        title="Load inside a loop does not depend on the loop",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "A `tl.load` whose address, mask and `other` use nothing the loop changes reads the same data on every "
            "iteration. Triton does not hoist loads out of `for` loops (a store in the loop could alias), so the "
            "kernel pays global-memory latency and bandwidth once per iteration: on NVIDIA an extra L2/DRAM "
            "round trip per trip, on Ascend an extra DMA into the unified buffer that also blocks multi-buffering."
            "\n\n**Fix:** load once before the loop and reuse the value (as the matmul tutorial does with its "
            "bias/scale vectors)."
        ),
        references=(ref.MATMUL, ref.ASCEND_PERF),
        has_fix=True,
    )
)

SCALAR_LOOP = register(
    Rule(
        code="TL107",
        name="scalar-loop-reduction",
        title="Scalar loop accumulates where tl.dot or a block reduction fits",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "A `for` loop that loads one scalar per iteration and accumulates with `+=` executes the reduction "
            "one element at a time, on one lane. The same work as a block runs on all lanes: "
            "`tl.sum(tl.load(ptr + offs, mask=...), axis=0)` for a sum, and `tl.dot` on BLOCK_K tiles for a "
            "sum of products, which uses tensor cores (NVIDIA) or the cube unit (Ascend) at 10-100x the scalar "
            "rate.\n\n**Fix:** load `BLOCK_K` elements per iteration with `tl.arange` and reduce them with "
            "`tl.sum` / `tl.dot`, stepping the loop by `BLOCK_K` (see the matmul tutorial's K loop)."
        ),
        references=(ref.MATMUL, ref.DOT, ref.ASCEND_PROGRAMMING),
    )
)

MULTI_PASS = register(
    Rule(
        code="TL108",
        name="multi-pass-over-row",
        title="The same input is read in several separate loops",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "Reading the same row in two or three loops (max, then sum of exponentials, then normalize; or mean, "
            "variance, normalize) moves it from global memory two or three times. For memory-bound kernels such as "
            "softmax or layer norm the runtime is proportional to bytes moved, so each extra pass costs about as "
            "much as the whole useful kernel.\n\n**Fix:** when the row fits in one block, load it once "
            "(`BLOCK_SIZE = triton.next_power_of_2(n_cols)`) and keep it in registers/UB as the fused-softmax "
            "tutorial does; for long rows use an online (single-pass) formulation, e.g. the running max/sum of "
            "online softmax or Welford's mean/variance. One statistics pass plus the pass that writes the "
            "result is the minimum for rows longer than a block, so that shape is not reported; nor are loops "
            "over different ranges (full tiles, then the tail), which read each element once."
        ),
        references=(ref.FUSED_SOFTMAX, ref.LAYER_NORM, ref.ASCEND_PROGRAMMING),
    )
)


@kernel_check
def loop_invariant_load(ctx: KernelContext) -> Iterator[Finding]:
    for call in ctx.calls_to(TL + "load"):
        loops = ctx.enclosing_loops(call)
        if not loops or any(kw.arg == "volatile" for kw in call.keywords):
            continue
        loop = loops[0]
        changed = ctx.assigned_in(loop)
        used = ctx.names_of(call)
        if used & changed:
            continue
        pointer = ctx.pointer_arg(call)
        if pointer is None or _written_in(ctx, loop, ctx.base_pointers(pointer)):
            continue
        if _varying_guard(ctx, call, loop, changed):
            continue  # `if i == 0: ... tl.load(...)`: runs on some iterations only, often once
        message = f"tl.load({short(ctx, pointer)}) is the same on every iteration of the loop at line {loop.lineno}: hoist it"
        fix = _hoist_fix(ctx, loop, call)
        yield finding(INVARIANT_LOAD, ctx, call, message, fix=fix, data={"loop_line": loop.lineno})


def _hoist_fix(ctx: KernelContext, loop: ast.AST, call: ast.Call) -> Fix | None:
    """Move `name = tl.load(...)` from the loop body to just above the loop, where that is the same program: a
    statement of its own, directly in the body (not under an `if`), the only assignment of `name` in the loop,
    and `name` not read in the body before it (the first iteration would otherwise see the older value)."""
    body = getattr(loop, "body", [])
    stmt = next((s for s in body if isinstance(s, ast.Assign) and s.value is call), None)
    if stmt is None or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        return None
    name = stmt.targets[0].id
    stores = [
        n for n in ast.walk(loop) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
    ]
    if len(stores) != 1:
        return None
    for earlier in body[: body.index(stmt)]:
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(earlier)):
            return None
    first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    lines = [ctx.module.line_text(n) for n in range(first, last + 1)]
    if ";" in lines[0][: stmt.col_offset] or lines[0][: stmt.col_offset].strip() or lines[-1].rstrip().endswith(";"):
        return None  # shares its line with another statement
    loop_indent = " " * getattr(loop, "col_offset", 0)
    moved = "".join(loop_indent + text[stmt.col_offset :].rstrip() + "\n" for text in lines)
    if any(text[: stmt.col_offset].strip() for text in lines[1:]):
        return None  # a continuation line indented less than the statement: not a plain block to move
    return Fix(
        f"Hoist `{name} = tl.load(...)` above the loop at line {loop.lineno}",  # type: ignore[attr-defined]
        (
            TextEdit(Span(loop.lineno, 0, loop.lineno, 0), moved),  # type: ignore[attr-defined]
            TextEdit(Span(first, 0, last + 1, 0), ""),
        ),
    )


@kernel_check
def scalar_loop_reduction(ctx: KernelContext) -> Iterator[Finding]:
    scalar_loads = {
        name for name, call in ctx.load_names.items() if not ctx.is_block_expr(ctx.pointer_arg(call) or call)
    }
    if not scalar_loads and all(
        ctx.is_block_expr(ctx.pointer_arg(call) or call) for call in ctx.calls_to(TL + "load")
    ):
        return  # every load reads a block: nothing scalar to accumulate
    reported: set[int] = set()
    for node in ctx.nodes:
        if not isinstance(node, ast.AugAssign) or not isinstance(node.op, (ast.Add, ast.Sub)):
            continue
        loops = ctx.enclosing_loops(node)
        if not loops or id(loops[0]) in reported:
            continue
        loop = loops[0]
        if ctx.is_block_expr(node.value):
            continue  # a block update per iteration is already vectorized
        if _consumed_in_loop(ctx, loop, node):
            continue  # a running prefix, segmented sum or tile counter: its partial values are used in the loop
        # Only loads performed in this loop count: a value loaded once before the loop is not the pattern.
        loaded_here = scalar_loads & ctx.assigned_in(loop)
        sources = sum(
            1
            for c in ctx.walk(node.value)
            if isinstance(c, ast.Call)
            and ctx.load_call(c) is c
            and not ctx.is_block_expr(ctx.pointer_arg(c) or c)
        )
        used = ctx.names_of(node.value)
        sources += sum(1 for name in loaded_here if name in used or ctx.names_closure({name}) & used)
        if not sources:
            continue
        product = any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.Mult) for b in ctx.walk(node.value))
        target = short(ctx, node.target)
        if product and sources >= 2:
            advice = "a sum of products one scalar at a time: load BLOCK_K tiles and use tl.dot"
        else:
            advice = "one scalar per iteration: load a block with tl.arange and reduce it with tl.sum"
        reported.add(id(loop))
        message = f"loop at line {loop.lineno} accumulates `{target}` {advice}"
        yield finding(SCALAR_LOOP, ctx, header_span(ctx, loop), message, data={"accumulator": target})


@kernel_check
def multi_pass_over_row(ctx: KernelContext) -> Iterator[Finding]:
    by_root: dict[str, list[tuple[ast.For, ast.Call]]] = {}
    for call in ctx.calls_to(TL + "load"):
        loops = ctx.enclosing_loops(call)
        pointer = ctx.pointer_arg(call)
        if not loops or pointer is None:
            continue
        for root in sorted(ctx.base_pointers(pointer)):
            by_root.setdefault(root, []).append((loops[0], call))
    for root, uses in by_root.items():
        passes: list[tuple[ast.For, ast.Call]] = []
        for loop, call in uses:
            if any(
                other is loop
                or _nested(loop, other, ctx)
                or _nested(other, loop, ctx)
                or _exclusive(ctx, loop, other)
                for other, _ in passes
            ):
                continue
            if passes and not _same_space(ctx, passes[0][0], loop):
                continue
            passes.append((loop, call))
        if len(passes) < 2:
            continue
        first = passes[0][0].lineno
        # Passes that only read (statistics: max, sum, mean, variance) fuse into one with an online
        # formulation; one statistics pass plus the pass that writes the result is the minimum for a row
        # longer than a block (Liger's multi-block softmax), so that case is only a hint to load it once.
        read_only = [loop for loop, _ in passes if not _stores_in(ctx, loop)]
        if len(read_only) < 2:
            continue  # one statistics pass plus the writing pass: the minimum for a row longer than a block
        if any(_small_next_to_tiles(ctx, loop, call) for loop, call in passes[1:]):
            continue  # a vector re-read next to the tiles each pass moves (a logsumexp per row): 1/D of the bytes
        fused = {(m.root, m.max_loop.lineno, m.sum_loop.lineno) for m in max_passes(ctx)}
        if len(passes) == 2 and (root, passes[0][0].lineno, passes[1][0].lineno) in fused:
            continue  # a max pass and a sum pass: TL137 names their online fusion
        # one finding per row, on its first re-read: the fix (one pass) removes every extra pass at once
        again = [loop.lineno for loop, _ in passes[1:]]
        where = ", ".join(str(n) for n in again)
        message = (
            f"`{root}` is read again in the loop(s) at line {where} ({len(passes)} passes, first at "
            f"line {first}): keep the row on chip or use a one-pass formulation"
        )
        data = {"pointer": root, "passes": len(passes), "reread_lines": again}
        yield finding(MULTI_PASS, ctx, passes[1][1], message, data=data)


def _small_next_to_tiles(ctx: KernelContext, loop: ast.For, call: ast.Call) -> bool:
    """Is this load a lower-rank block than another load of the same loop (a per-row vector beside 2-D tiles)?"""
    mine = rank(ctx, call)
    return any(
        rank(ctx, other) > mine
        for other in ctx.walk(loop)
        if isinstance(other, ast.Call) and ctx.load_call(other) is other and other is not call
    )


def _varying_guard(ctx: KernelContext, node: ast.AST, loop: ast.For, changed: set[str]) -> bool:
    """Whether `node` sits under an `if` inside `loop` whose test depends on something the loop changes (the loop
    variable, a counter): the load does not run on every iteration, so hoisting it may load what is never used."""
    child, parent = node, ctx.parent(node)
    while parent is not None and parent is not loop:
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
            if ctx.names_of(parent.test) & changed:
                return True
        child, parent = parent, ctx.parent(parent)
    return False


def _consumed_in_loop(ctx: KernelContext, loop: ast.For, update: ast.AugAssign) -> bool:
    """Whether the accumulator's running value is used inside the loop (read by anything but its own `+=`
    updates, or reset by a plain assignment): then it is a prefix/segment/counter, not a reduction that
    tl.sum could compute at the end."""
    if not isinstance(update.target, ast.Name):
        return True  # `x[i] += v` / `obj.attr += v`: a store pattern, not a scalar reduction
    name = update.target.id
    own = {
        id(n)
        for sub in ctx.walk(loop)
        if isinstance(sub, ast.AugAssign) and _targets(sub, name)
        for n in ctx.walk(sub.target)
    }
    for sub in ctx.walk(loop):
        if isinstance(sub, ast.Name) and sub.id == name and id(sub) not in own:
            return True
    return False


def _targets(node: ast.AugAssign, name: str) -> bool:
    return isinstance(node.target, ast.Name) and node.target.id == name


def _same_space(ctx: KernelContext, a: ast.For, b: ast.For) -> bool:
    """Whether two loops iterate the same range (written the same way): loops over disjoint column ranges
    (full tiles, then the tail; masked, then unmasked keys) are one pass split in two, not two passes."""
    return ast.dump(a.iter) == ast.dump(b.iter)


def _exclusive(ctx: KernelContext, a: ast.AST, b: ast.AST) -> bool:
    """Whether `a` and `b` sit in different branches of one `if` (only one of them runs)."""
    branch_of: dict[int, str] = {}
    child, node = a, ctx.parent(a)
    while node is not None:
        if isinstance(node, ast.If):
            branch_of[id(node)] = (
                "body" if child in node.body else "orelse" if child in node.orelse else "test"
            )
        child, node = node, ctx.parent(node)
    child, node = b, ctx.parent(b)
    while node is not None:
        if id(node) in branch_of and isinstance(node, ast.If):
            side = "body" if child in node.body else "orelse" if child in node.orelse else "test"
            return {side, branch_of[id(node)]} == {"body", "orelse"}
        child, node = node, ctx.parent(node)
    return False


def _nested(inner: ast.For, outer: ast.For, ctx: KernelContext) -> bool:
    return outer in ctx.enclosing_loops(inner)


def _stores_in(ctx: KernelContext, loop: ast.For) -> bool:
    """Whether the loop writes global memory at all (the pass that produces the output)."""
    return any(
        isinstance(sub, ast.Call) and ctx.resolve(sub.func) in {TL + "store", *ATOMICS}
        for sub in ctx.walk(loop)
    )


def _written_in(ctx: KernelContext, loop: ast.For, roots: set[str]) -> bool:
    key = f"written_in:{id(loop)}"
    written = ctx.memo.get(key)
    if written is None:
        written = set()
        for sub in ctx.walk(loop):
            if isinstance(sub, ast.Call) and ctx.resolve(sub.func) in {TL + "store", *ATOMICS}:
                pointer = ctx.pointer_arg(sub)
                if pointer is not None:
                    written |= ctx.base_pointers(pointer)
        ctx.memo[key] = written
    return bool(written & roots)
