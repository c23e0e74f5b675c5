"""Ascend-specific pitfalls documented by triton-ascend: gathers, integer compares, big unrolls, GPU-only options."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, kernel_check, short
from .context import KernelContext
from .context_names import TL

# Fully unrolling more copies than this of a body that holds tiles multiplies live UB buffers and code size.
STATIC_UNROLL_LIMIT = 16
_GPU_ONLY_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")
_BLOCK_WORK = {TL + "load", TL + "store", TL + "dot", TL + "zeros", TL + "full"}

GATHER = register(
    Rule(
        code="TL116",
        name="ascend-gather-through-loaded-indices",
        title="Gather load through indices loaded from memory",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("ascend",),
        rationale=(
            "`tl.load(src + tl.load(idx_ptr + offs))` reads addresses that are only known at run time. Ascend's "
            "vector units move data with contiguous DMA; triton-ascend lowers such a gather to a scalar loop "
            "(`DiscreteMemAccess` in the ttadapter IR), one element per iteration, which is typically one to two "
            "orders of magnitude slower than a contiguous load of the same size.\n\n**Fix:** when the gathered "
            "row fits in the unified buffer, load it contiguously and select with `tl.gather(src_tile, idx, "
            "axis)`; otherwise sort/bucket the indices so each program reads contiguous runs, or gather whole "
            "rows (scalar index, contiguous `tl.arange` columns) instead of single elements."
        ),
        references=(ref.ASCEND_VECTOR_OPS, ref.ASCEND_ISSUE_GATHER_PERF, ref.ASCEND_PR_GATHER_OPT),
    )
)

INT64_COMPARE = register(
    Rule(
        code="TL117",
        name="ascend-int64-vector-compare",
        title="int64 block comparison (scalarized on Ascend)",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("ascend",),
        rationale=(
            "Ascend vector units compare 16/32-bit lanes natively; comparisons of int64 blocks are lowered to "
            "scalar code, so a mask such as `offs64 < n` costs one scalar instruction per lane. The triton-ascend "
            "programming guide asks for int32 indices, lengths and offsets wherever the range allows.\n\n"
            "**Fix:** keep index blocks in int32 (drop the `.to(tl.int64)` on per-lane offsets) and widen only a "
            "scalar base offset when the tensor can exceed 2**31 elements."
        ),
        references=(ref.ASCEND_VECTOR_OPS, ref.ASCEND_PROGRAMMING),
    )
)

INT_COMPARE_WHERE = register(
    Rule(
        code="TL118",
        name="ascend-integer-compare-in-where",
        title="Integer index comparison used as a tl.where condition",
        level=Level.TRIAGE,
        severity=Severity.INFO,
        platforms=("ascend",),
        rationale=(
            "On Ascend, comparisons of integer index blocks that feed computation (`tl.where(cols < N, x, 0.0)`) "
            "are often scalarized, while the same comparison used as a load/store `mask=` is vectorized by the "
            "compiler. Layer-norm style tail handling is the common case.\n\n**Fix:** compare in float32, which "
            "the vector unit supports: `tl.where(cols.to(tl.float32) < N, x, 0.0)` (exact while the values are "
            "below 2**24), or reuse the load mask, e.g. load with `other=0.0` so no `tl.where` is needed."
        ),
        references=(ref.ASCEND_VECTOR_OPS, ref.LAYER_NORM),
    )
)

STATIC_UNROLL = register(
    Rule(
        code="TL119",
        name="ascend-large-static-range",
        title="Large tl.static_range unroll (UB pressure on Ascend)",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("ascend",),
        rationale=(
            "`tl.static_range` unrolls the loop at compile time. On Ascend every unrolled copy of a body that "
            "holds tiles can keep its own buffers live in the 192 KB unified buffer (doubled by multi-buffering), "
            "so large unrolls end in *ub overflow* compile errors or force small tiles; code size and compile "
            "time also grow with the trip count.\n\n**Fix:** use `tl.range` (or `range`) for loops with more than "
            "a few iterations, and keep `tl.static_range` for short loops whose index must be a compile-time "
            "constant."
        ),
        references=(ref.ASCEND_STATIC_RANGE, ref.STATIC_RANGE, ref.ASCEND_ISSUE_UB_OVERFLOW),
    )
)

GPU_OPTIONS = register(
    Rule(
        code="TL120",
        name="ascend-ignores-num-warps",
        title="num_warps / num_stages have no effect on Ascend",
        level=Level.TRIAGE,
        severity=Severity.HINT,
        platforms=("ascend",),
        rationale=(
            "`num_warps`, `num_stages`, `num_ctas` and `maxnreg` describe NVIDIA/AMD execution (warps per CTA, "
            "software-pipeline depth, clusters, registers). An Ascend program runs on one AI core with no warps, "
            "so triton-ascend ignores them: autotune configs that differ only in these values compile the same "
            "kernel several times and time identical binaries.\n\n**What to do:** on Ascend tune the block sizes "
            "and the grid (core count) instead; keep these options only in CUDA-specific configs."
        ),
        references=(ref.ASCEND_ARCH_DIFF, ref.ASCEND_MIGRATE, ref.AUTOTUNE),
    )
)


@kernel_check
def gather_through_loaded_indices(ctx: KernelContext) -> Iterator[Finding]:
    block_index_loads = {
        name for name, call in ctx.load_names.items() if ctx.is_block_expr(ctx.pointer_arg(call) or call)
    }
    loads = list(ctx.calls_to(TL + "load"))
    nested = any(_inside_load(ctx, call) for call in loads)
    if not block_index_loads and not nested:
        return  # no value read from memory can reach an address
    for call in ctx.calls_to(TL + "load", TL + "store"):
        pointer = ctx.pointer_arg(call)
        if pointer is None:
            continue
        source = _loaded_index(ctx, pointer, block_index_loads)
        if source is None:
            continue
        verb = "load" if ctx.resolve(call.func) == TL + "load" else "store"
        message = f"tl.{verb}({short(ctx, pointer)}) is indexed by values loaded from {source}: scalar loop on Ascend"
        yield finding(GATHER, ctx, call, message, data={"index_source": source})


@kernel_check
def int64_vector_compare(ctx: KernelContext) -> Iterator[Finding]:
    wide = _int64_block_names(ctx)
    if not wide and not _mentions_int64(ctx):
        return
    for node in ctx.nodes:
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        if any(_is_int64_block(ctx, op, wide) for op in operands):
            yield finding(
                INT64_COMPARE, ctx, node, f"`{short(ctx, node)}` compares int64 blocks: scalarized on Ascend"
            )


@kernel_check
def integer_compare_in_where(ctx: KernelContext) -> Iterator[Finding]:
    wide = _int64_block_names(ctx)
    for call in ctx.calls_to(TL + "where"):
        cond = (
            call.args[0]
            if call.args
            else next((k.value for k in call.keywords if k.arg == "condition"), None)
        )
        for compare in _compares_of(ctx, cond):
            operands = [compare.left, *compare.comparators]
            if any(_is_int64_block(ctx, op, wide) for op in operands):
                continue  # TL117 already reports it
            if any(ctx.is_index_expr(op) for op in operands):
                message = f"tl.where on the integer comparison `{short(ctx, compare)}`: compare in float32 on Ascend"
                yield finding(INT_COMPARE_WHERE, ctx, compare, message)


@kernel_check
def large_static_range(ctx: KernelContext) -> Iterator[Finding]:
    for loop in ctx.loops:
        if not isinstance(loop.iter, ast.Call) or ctx.resolve(loop.iter.func) != TL + "static_range":
            continue
        trips = _trip_count(ctx, loop.iter)
        if trips is None or trips <= STATIC_UNROLL_LIMIT:
            continue
        if not any(isinstance(n, ast.Call) and ctx.resolve(n.func) in _BLOCK_WORK for n in ctx.walk(loop)):
            continue
        message = f"tl.static_range unrolls {trips} copies of a body with tile loads/ops: use tl.range"
        yield finding(STATIC_UNROLL, ctx, loop.iter, message, data={"trips": trips})


@kernel_check
def gpu_only_options(ctx: KernelContext) -> Iterator[Finding]:
    for launch in ctx.launches:
        options = [a for a in launch.kwargs if a.name in _GPU_ONLY_OPTIONS]
        if options:
            names = ", ".join(a.name or "" for a in options)
            yield finding(GPU_OPTIONS, ctx, options[0].span, f"{names} at this launch is ignored on Ascend")
    for deco in ctx.kernel.node.decorator_list:
        if not isinstance(deco, ast.Call) or ctx.resolve(deco.func) != "triton.autotune":
            continue
        keywords = [
            kw
            for sub in ctx.walk(deco)
            if isinstance(sub, ast.Call) and ctx.resolve(sub.func) == "triton.Config"
            for kw in sub.keywords
            if kw.arg in _GPU_ONLY_OPTIONS
        ]
        if keywords:
            names = ", ".join(sorted({kw.arg or "" for kw in keywords}))
            message = f"autotune configs vary {names}, which Ascend ignores: tune block sizes instead"
            yield finding(GPU_OPTIONS, ctx, keywords[0], message, data={"occurrences": len(keywords)})


def _inside_load(ctx: KernelContext, call: ast.Call) -> bool:
    node = ctx.parent(call)
    while node is not None and node is not ctx.kernel.node:
        if isinstance(node, ast.Call) and ctx.resolve(node.func) in (TL + "load", TL + "store"):
            return True
        node = ctx.parent(node)
    return False


_REDUCTIONS = {TL + n for n in ("argmax", "argmin", "max", "min", "sum", "reduce", "xor_sum")}


def _loaded_index(ctx: KernelContext, pointer: ast.AST, loaded: set[str]) -> str | None:
    """Where the indices come from when the lanes of the address are values read by a block tl.load.

    Only lanes count: a reduction of loaded values (`tl.sum(lens)`) or one loaded element is a scalar base,
    and a scalar base plus `tl.arange` is one contiguous block DMA (the recommended Ascend gather idiom)."""
    seen: set[int] = set()
    stack: list[ast.AST] = [pointer]
    has_columns = any(_broadcast(n, last=True) for e in ctx.address_exprs(pointer) for n in ctx.walk(e))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if has_columns and _broadcast(node, last=False):
            continue  # `idx[:, None] * stride + cols[None, :]`: whole rows at loaded indices, each one a block DMA
        if isinstance(node, ast.Call) and ctx.resolve(node.func) in _REDUCTIONS:
            continue  # a scalar per program (e.g. `base + tl.argmax(loaded)`): not lanes of a gather
        inner = ctx.load_call(node) if isinstance(node, ast.Call) else None
        if inner is not None:
            inner_ptr = ctx.pointer_arg(inner)
            if inner_ptr is not None and ctx.is_block_expr(inner_ptr):
                return short(ctx, inner_ptr)
            continue  # one element read at a scalar address: a scalar base
        if isinstance(node, ast.Name):
            for value in ctx.reaching(node.id, node):
                if ctx.load_call(value) is not None and node.id in loaded:
                    inner_ptr = ctx.pointer_arg(ctx.load_names[node.id])
                    if inner_ptr is None or ctx.is_block_expr(inner_ptr):
                        return short(ctx, inner_ptr) if inner_ptr is not None else node.id
                elif not ctx._returns_a_pointer(value):
                    stack.append(value)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return None


def _broadcast(node: ast.AST, *, last: bool) -> bool:
    """`x[None, :]` (lanes on the last axis, `last=True`) or `x[:, None]` (lanes on a leading axis)."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple) or len(node.slice.elts) != 2:
        return False
    first, second = node.slice.elts
    none, lanes = (first, second) if last else (second, first)
    return isinstance(none, ast.Constant) and none.value is None and isinstance(lanes, ast.Slice)


def _int64_block_names(ctx: KernelContext) -> set[str]:
    """Names that may hold an int64 index block somewhere (refined per use by `_is_int64_block`)."""
    cached = ctx.memo.get("int64_block_names")
    if cached is not None:
        return cached
    if not _mentions_int64(ctx):
        ctx.memo["int64_block_names"] = set()
        return set()
    roots = set()
    for name, values in ctx.assigns.items():
        if any(_int64_cast_of_block(ctx, v) for v in values):
            roots.add(name)
    wide = {n for n in ctx.names_closure(roots) if n in ctx.block_names and n not in ctx.load_names}
    ctx.memo["int64_block_names"] = wide
    return wide


def _mentions_int64(ctx: KernelContext) -> bool:
    cached = ctx.memo.get("mentions_int64")
    if cached is None:
        cached = any(isinstance(n, ast.Attribute) and n.attr == "int64" for n in ctx.nodes)
        ctx.memo["mentions_int64"] = cached
    return cached


def _int64_at(ctx: KernelContext, name: str, use: ast.AST, wide: set[str], depth: int = 0) -> bool:
    """Whether the value of `name` reaching `use` is an int64 block."""
    if name not in wide or depth > 8:
        return False
    for value in ctx.reaching(name, use):
        if _int64_cast_of_block(ctx, value):
            return True
        refs = [n for n in ctx.walk(value) if isinstance(n, ast.Name) and n.id in wide and n.id != name]
        if any(_int64_at(ctx, n.id, value, wide, depth + 1) for n in refs):
            return True
    return False


def _int64_cast_of_block(ctx: KernelContext, node: ast.AST) -> bool:
    for sub in ctx.walk(node):
        if not isinstance(sub, ast.Call):
            continue
        if isinstance(sub.func, ast.Attribute) and sub.func.attr == "to" and sub.args:
            if ctx.resolve(sub.args[0]) == TL + "int64" and ctx.is_block_expr(sub.func.value):
                return True
        if ctx.resolve(sub.func) == TL + "cast" and len(sub.args) >= 2:
            if ctx.resolve(sub.args[1]) == TL + "int64" and ctx.is_block_expr(sub.args[0]):
                return True
    return False


def _is_int64_block(ctx: KernelContext, node: ast.AST, wide: set[str]) -> bool:
    if any(isinstance(n, ast.Name) and _int64_at(ctx, n.id, node, wide) for n in ctx.walk(node)):
        return True
    return _int64_cast_of_block(ctx, node)


def _compares_of(ctx: KernelContext, cond: ast.AST | None) -> list[ast.Compare]:
    if cond is None:
        return []
    found = [n for n in ctx.walk(cond) if isinstance(n, ast.Compare)]
    if found:
        return found
    if isinstance(cond, ast.Name):
        # the assignment that reaches this use, not every value the name ever takes (masks are often reused)
        return [v for v in ctx.reaching(cond.id, cond) if isinstance(v, ast.Compare)]
    return []


def _trip_count(ctx: KernelContext, call: ast.Call) -> int | None:
    bounds: list[int] = []
    for arg in call.args[:3]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, int):
            bounds.append(arg.value)
        elif isinstance(arg, ast.Name) and arg.id in ctx.params:
            values = [s.value for s in ctx.value_sites(arg.id)]
            if not values:
                return None
            bounds.append(max(values))
        else:
            return None
    if len(bounds) == 1:
        return bounds[0]
    step = bounds[2] if len(bounds) == 3 else 1
    if step <= 0:
        return None
    return max(0, -(-(bounds[1] - bounds[0]) // step))
