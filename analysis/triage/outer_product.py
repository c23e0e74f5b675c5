"""Matrix products written as rank-1 (outer-product) updates over K without tl.dot (TL133)."""

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
from .program_axes import program_axes

RANK1_LOOP = register(
    Rule(
        code="TL133",
        name="rank1-update-loop",
        title="Matrix product on the FMA units (rank-1 updates or broadcast-multiply-sum) where tl.dot fits",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "`acc += a[:, None] * b[None, :]` once per k computes a matrix product as K rank-1 updates on the "
            "CUDA cores (FMA) or Ascend vector unit: one multiply-add per element per k. `tl.dot` on BLOCK_K "
            "tiles runs the same product on tensor cores (NVIDIA: about 15x the fp32 FMA rate on an H100/H200 "
            "for bf16, 7x for tf32) or the Ascend cube unit, and loads each operand tile once per BLOCK_K "
            "instead of one column and one row per step. The same holds for `tl.sum(q[None, :] * k_tile, axis=1)` "
            "in a loop over key tiles: one matrix-vector product per program, where a block of 16+ rows per "
            "program turns it into a `tl.dot`.\n\n"
            "**Fix:** load `a` as a [BLOCK_M, BLOCK_K] tile and `b` as a [BLOCK_K, BLOCK_N] tile and "
            "`acc += tl.dot(a, b)`, stepping k by BLOCK_K (the matmul tutorial's K loop); keep BLOCK_K >= 16."
        ),
        references=(ref.MATMUL, ref.DOT, ref.ASCEND_PROGRAMMING),
        lowers_to=Severity.INFO,
        lowering=(
            "a vector against a tile (`tl.sum(v[None, :] * tile, axis=1)`) when the vector is loaded once per "
            "program: one row per program is a memory-bound GEMV, and tl.dot pays off only if a program takes a "
            "block of 16+ rows that share the tiles (other programs' rows when the tiles do not depend on the "
            "program; in single-query decode attention, query heads that share a KV head). Not reported when "
            "each program reads tiles no other program reads, outside attention: nothing would share them"
        ),
    )
)


@kernel_check
def broadcast_multiply_sum(ctx: KernelContext) -> Iterator[Finding]:
    """`tl.sum(q[None, :] * k_tile, axis=1)` in a loop over key/K tiles: a matrix-vector product per program on
    the FMA units, where processing a block of rows with tl.dot fits. One finding per loop: the manually unrolled
    copies of the product in the same loop are named in it."""
    if any(True for _ in ctx.calls_to(TL + "dot", TL + "dot_scaled")) or not ctx.has_broadcast:
        return
    per_loop: dict[int, list[tuple[ast.Call, ast.For, ast.AST]]] = {}
    for call in ctx.calls_to(TL + "sum"):
        loops = ctx.enclosing_loops(call)
        if not loops or not ctx.is_range_loop(loops[0]) or not call.args:
            continue
        product = call.args[0]
        while isinstance(product, ast.Call) and isinstance(product.func, ast.Attribute):
            product = product.func.value  # (a * b).to(...)
        if not (isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult)):
            continue
        sides = (product.left, product.right)
        axes = [_axis(ctx, side) for side in sides]
        if sum(a is not None for a in axes) != 1:
            continue  # exactly one broadcast vector against a tile
        tile = sides[axes.index(None)]
        vector = sides[1 - axes.index(None)]
        if _loaded_here(ctx, loops[0], vector):
            continue  # a small weight vector loaded per step (a top-k combine): a GEMV too thin for tl.dot
        if isinstance(tile, ast.Name) and _loop_carried(ctx, loops[0], tile.id):
            continue  # the tile is a recurrent state updated every step, not loaded data: one token at a time
        if not all(_loaded_in(ctx, loops[0], side) or _loaded(ctx, side) for side in sides) or not _loaded_in(
            ctx, loops[0], tile
        ):
            continue
        per_loop.setdefault(id(loops[0]), []).append((call, loops[0], vector))
    for found in per_loop.values():
        call, loop, vector = min(found, key=lambda c: (c[0].lineno, c[0].col_offset))
        copies = sorted({c.lineno for c, _, _ in found} - {call.lineno})
        rows = _rows_per_program(ctx, loop, vector)
        attention = attention_step(ctx, loop)
        shared = _tiles_shared(ctx, vector, found)
        if rows:  # the program walks several rows, each against the same tiles: a GEMM done row by row
            message = (
                f"loop at line {loop.lineno} multiplies a vector into a loaded tile and sums it (a matrix-vector "
                f"product on the FMA units) for each row of the loop at line {rows.lineno}: "
                "load a block of rows and use tl.dot"
            )
            severity = None
        elif shared:  # one row per program, but other programs' rows read the same tiles: they could share them
            message = (
                f"loop at line {loop.lineno} multiplies one vector per program into a loaded tile and sums it "
                "(a matrix-vector product on the FMA units; memory-bound as written). The tiles do not depend on "
                "the program axis the vector varies along, so other programs read the same tiles: a program "
                "that takes a block of 16+ rows"
                + (" (several queries, or the query heads that share one KV head)" if attention else "")
                + " can use tl.dot and read each tile once for all of them"
            )
            severity = Severity.INFO
        elif attention:  # its own keys per program: only a grouping the code does not show (GQA) shares them
            message = (
                f"loop at line {loop.lineno} multiplies one query per program into its key tiles and sums it "
                "(a matrix-vector product on the FMA units; memory-bound as written). tl.dot helps only if a "
                "program takes a block of 16+ rows that share the tiles (several queries, or the query heads "
                "that share one KV head): otherwise leave it"
            )
            severity = Severity.INFO
        else:  # every program reads tiles no other program reads: no block of rows shares them, nothing to do
            continue
        if copies:
            message += f"; the same product is repeated on line(s) {', '.join(map(str, copies))} (unrolled copies)"
        yield finding(
            RANK1_LOOP,
            ctx,
            call,
            message,
            severity=severity,
            data={"loop_line": loop.lineno, "form": "broadcast-sum", "copies": copies, "gemv": rows is None},
        )


def _tiles_shared(ctx: KernelContext, vector: ast.AST, found: list[tuple[ast.Call, ast.For, ast.AST]]) -> bool:
    """Do programs with different vectors read the same tiles: the vector varies along a grid axis that no
    tile of the product depends on (`q` per program against key tiles every program streams)?"""
    vector_axes = program_axes(ctx, vector)
    tiles: set[int] = set()
    for call, _, vec in found:
        product = call.args[0]
        while isinstance(product, ast.Call) and isinstance(product.func, ast.Attribute):
            product = product.func.value
        if isinstance(product, ast.BinOp):
            tile = product.right if vec is product.left else product.left
            tiles |= program_axes(ctx, tile)
    return bool(vector_axes - tiles)


def _rows_per_program(ctx: KernelContext, loop: ast.For, vector: ast.AST) -> ast.For | None:
    """The enclosing loop (outside `loop`) in which the broadcast vector is loaded: the program then takes one
    row per iteration of that loop against the same tiles. None when it is loaded once per program."""
    base = vector.value if isinstance(vector, ast.Subscript) else vector
    names = ctx.names_of(base) & ctx.names_closure(set(ctx.load_names))
    for outer in ctx.enclosing_loops(loop):
        if names & (ctx.assigned_in(outer) - ctx.assigned_in(loop)):
            return outer
    return None


def _loaded_here(ctx: KernelContext, loop: ast.For, side: ast.AST) -> bool:
    """The vector is itself loaded in this loop (`w = tl.load(...)`, then `w[:, None]`)."""
    base = side.value if isinstance(side, ast.Subscript) else side
    if isinstance(base, ast.Name):
        return base.id in ctx.load_names and base.id in ctx.assigned_in(loop)
    return any(isinstance(c, ast.Call) and ctx.load_call(c) is c for c in ctx.walk(side))


def _loaded(ctx: KernelContext, side: ast.AST) -> bool:
    """Data loaded anywhere in the kernel (a query row loaded once before the loop)."""
    return bool(ctx.names_of(side) & ctx.names_closure(set(ctx.load_names)))


@kernel_check
def rank1_update_loop(ctx: KernelContext) -> Iterator[Finding]:
    if any(True for _ in ctx.calls_to(TL + "dot", TL + "dot_scaled")) or not ctx.has_broadcast:
        return
    reported: set[int] = set()
    for node in ctx.nodes:
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult):
            continue
        loops = ctx.enclosing_loops(node)
        if not loops or id(loops[0]) in reported or not ctx.is_range_loop(loops[0]):
            continue
        loop = loops[0]
        axes = {_axis(ctx, node.left), _axis(ctx, node.right)}
        if axes != {"column", "row"} or not _accumulated(ctx, node):
            continue
        if not all(_loaded_in(ctx, loop, side) for side in (node.left, node.right)):
            continue
        if _state_read_in_loop(ctx, loop, node):
            continue  # a recurrence (`h = h * decay + k v^T; o = sum(h * q)`): the state is used every step
        reported.add(id(loop))
        message = (
            f"loop at line {loop.lineno} builds a matrix product from rank-1 updates (column x row per "
            "step) on the FMA units: load K tiles and use tl.dot"
        )
        yield finding(
            RANK1_LOOP,
            ctx,
            header_span(ctx, loop),
            message,
            data={"loop_line": loop.lineno, "form": "rank-1"},
        )


def _axis(ctx: KernelContext, node: ast.AST, depth: int = 0) -> str | None:
    """ "column" for `v[:, None]`, "row" for `v[None, :]` (through one local name)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) == 2:
        first, second = node.slice.elts
        if isinstance(first, ast.Slice) and isinstance(second, ast.Constant) and second.value is None:
            return "column"
        if isinstance(second, ast.Slice) and isinstance(first, ast.Constant) and first.value is None:
            return "row"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to":
        return _axis(ctx, node.func.value, depth)
    if isinstance(node, ast.Name) and depth < 2:
        values = ctx.reaching(node.id, node)
        if len(values) == 1:
            return _axis(ctx, values[0], depth + 1)
    return None


def _accumulated(ctx: KernelContext, node: ast.AST) -> bool:
    """The product is added into a name that is also read on the right (`acc += p`, `acc = acc + p`)."""
    current: ast.AST | None = node
    while current is not None and not isinstance(current, ast.stmt):
        current = ctx.parent(current)
    if isinstance(current, ast.AugAssign) and isinstance(current.op, (ast.Add, ast.Sub)):
        return True
    if (
        isinstance(current, ast.Assign)
        and len(current.targets) == 1
        and isinstance(current.targets[0], ast.Name)
    ):
        return current.targets[0].id in ctx.names_of(current.value)
    return False


def _loop_carried(ctx: KernelContext, loop: ast.For, name: str) -> bool:
    """`name` is updated from its own previous value inside `loop` (`h += ...`, `h = h * g`): loop-carried state."""
    for sub in ctx.walk(loop):
        if isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name) and sub.target.id == name:
            return True
        if isinstance(sub, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in sub.targets):
            if name in ctx.names_of(sub.value):
                return True
    return False


def _state_read_in_loop(ctx: KernelContext, loop: ast.For, product: ast.AST) -> bool:
    """Whether the accumulator the rank-1 `product` is added into is read elsewhere in the loop (an output, an
    erase term, a decay `h *= g`): a recurrence whose state each step needs, which one tl.dot cannot replace."""
    update: ast.AST | None = product
    while update is not None and not isinstance(update, ast.stmt):
        update = ctx.parent(update)
    if isinstance(update, ast.AugAssign) and isinstance(update.target, ast.Name):
        acc = update.target.id
    elif isinstance(update, ast.Assign) and len(update.targets) == 1 and isinstance(update.targets[0], ast.Name):
        acc = update.targets[0].id
    else:
        return False
    inside_update = {id(n) for n in ctx.walk(update)} if update is not None else set()
    return any(
        isinstance(n, ast.Name) and n.id == acc and id(n) not in inside_update
        for n in ctx.walk(loop)
    )


def _loaded_in(ctx: KernelContext, loop: ast.For, side: ast.AST) -> bool:
    """The operand is data loaded in this loop (not an index product)."""
    if any(isinstance(c, ast.Call) and ctx.load_call(c) is c for c in ctx.walk(side)):
        return True
    loaded = set(ctx.load_names) & ctx.assigned_in(loop)
    return bool(loaded) and bool(ctx.names_of(side) & ctx.names_closure(loaded))
