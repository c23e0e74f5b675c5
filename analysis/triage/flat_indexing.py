"""Index arithmetic of flat kernels: 2-D indices recovered per element by integer division (TL130), and the
innermost index multiplied by a runtime row length, i.e. walking a column (TL131)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, kernel_check, short
from .context import KernelContext
from .context_names import ATOMICS, TL

_STRIDE_NAME = re.compile(r"(^|_)stride|^s_|_s$|^ld[a-z]?$", re.IGNORECASE)
# Names that say "a size": n_cols, num_rows, seq_len, hidden_size, D, N, ...
SIZE_NAME = re.compile(
    r"^(n|num)_|^n[A-Z]|(cols|rows|len|length|size|dim|width|height|hidden|features|channels)$|^[MNKDHLTCW]$",
    re.IGNORECASE,
)

FLAT_DIVMOD = register(
    Rule(
        code="TL130",
        name="flat-index-divmod",
        title="2-D indices recovered per element with integer division",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "A flat kernel over a 2-D tensor that computes `row = offs // n_cols` and `col = offs % n_cols` for "
            "every element pays an integer division by a runtime value per lane: about 20 instructions on NVIDIA "
            "(no hardware divider), scalarized on Ascend vector units. In a memory-bound elementwise kernel that "
            "is more ALU work than the element's own math. The division is also what hides the row structure "
            "from the compiler, so per-row values (a bias, a scale) are gathered per element.\n\n"
            "Not reported for `offs % M` alone (wrapping offsets into range, as the matmul tutorial does), for "
            "scalar program-id arithmetic (tile swizzles, persistent kernels), or inside loops (TL124).\n\n"
            "**Fix:** launch a 2-D grid or build a 2-D block: `rows = pid_m * BM + tl.arange(0, BM)[:, None]`, "
            "`cols = pid_n * BN + tl.arange(0, BN)[None, :]`, so no division is needed; or make the divisor "
            "a `tl.constexpr` power of two (a shift)."
        ),
        references=(ref.CUDA_DIVISION, ref.ASCEND_VECTOR_OPS, ref.MATMUL),
    )
)

COLUMN_ACCESS = register(
    Rule(
        code="TL131",
        name="column-access-by-row-length",
        title="Innermost index multiplied by a runtime row length (column access)",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        lowers_to=Severity.INFO,
        lowering="for a 1-D vector (per-token gates, scales) read in a kernel that moves 2-D tiles",
        platforms=("cuda", "ascend"),
        rationale=(
            "When the index that varies across lanes is multiplied by the row length (`offs * n_cols`, "
            "`offs[None, :] * N`), neighbouring lanes read addresses a whole row apart: a column of a row-major "
            "tensor. On NVIDIA each lane's 4 bytes cost a full 32-byte sector (8x the traffic for fp32, up to 32 "
            "transactions per warp instead of 1-4); on Ascend the copy is no longer a contiguous DMA. Unlike a "
            "`stride` argument (which Triton specializes to 1 when the tensor is contiguous), a row length is "
            "never 1 in practice.\n\n"
            "Can be confirmed by the compiler (TL301: the load is not vectorized because of a stride) and by "
            "Nsight Compute's L2 sector counts (TL207), once the kernel is compiled or profiled.\n\n"
            "**Fix:** make lanes run along the row (the contiguous dimension) and loop or tile over the column "
            "direction; for a transpose, load a 2-D tile with rows contiguous and store it with `tl.trans`."
        ),
        references=(ref.CUDA_COALESCING, ref.MATMUL, ref.ASCEND_MIGRATE),
    )
)


@kernel_check
def flat_index_divmod(ctx: KernelContext) -> Iterator[Finding]:
    if ctx.has_broadcast:
        return  # already a 2-D block
    groups: dict[tuple[str, str], list[ast.BinOp]] = {}
    for node in ctx.nodes:
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            continue
        if (
            ctx.enclosing_loops(node)
            or not ctx.is_index_expr(node.left)
            or not runtime_scalar(ctx, node.right)
        ):
            continue
        groups.setdefault((ast.unparse(node.left), ast.unparse(node.right)), []).append(node)
    for (_, divisor), nodes in groups.items():
        divs = [n for n in nodes if isinstance(n.op, ast.FloorDiv)]
        mods = [n for n in nodes if isinstance(n.op, ast.Mod)]
        if not divs and not _flat_index(ctx, mods[0].left, divisor):
            continue  # `offs % M` on offsets bounded by M wraps them into range: intentional
        first = (divs or mods)[0]
        pair = f" and `{short(ctx, mods[0])}`" if divs and mods else ""
        message = (
            f"`{short(ctx, first)}`{pair} recover{'s' if not pair else ''} 2-D indices with a per-element "
            f"division by the runtime `{divisor}`: use a 2-D grid or block instead"
        )
        yield finding(FLAT_DIVMOD, ctx, first, message, data={"divisor": divisor, "modulo": bool(mods)})


def _flat_index(ctx: KernelContext, index: ast.AST, divisor: str) -> bool:
    """Whether `index` is a flat offset over the whole tensor: compared (a mask) with a bound other than the
    divisor, e.g. `offs < n_elements` next to `offs % n_cols`."""
    names = ctx.names_of(index)
    for node in ctx.nodes:
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if any(ctx.names_of(side) & names and ctx.is_index_expr(side) for side in sides):
            bounds = {ast.unparse(side) for side in sides if not ctx.is_index_expr(side)}
            if bounds and divisor not in bounds:
                return True
    return False


@kernel_check
def column_access(ctx: KernelContext) -> Iterator[Finding]:
    lengths = row_lengths(ctx) | row_strides(ctx)
    if not lengths:
        return
    exprs: dict[int, ast.AST] = {}
    flat: set[int] = set()  # address expressions of 1-D accesses (no `[:, None]` on the way)
    for call in ctx.calls_to(TL + "load", TL + "store", *ATOMICS):
        pointer = ctx.pointer_arg(call)
        if pointer is not None:
            parts = ctx.address_exprs(pointer)
            one_d = not any(_is_broadcast(n) for e in parts for n in ctx.walk(e))
            for expr in parts:
                exprs.setdefault(id(expr), expr)
                if one_d:
                    flat.add(id(expr))
    seen: set[int] = set()
    for expr in exprs.values():
        for node in ctx.walk(expr):
            if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult) or id(node) in seen:
                continue
            seen.add(id(node))
            for index, scale in ((node.left, node.right), (node.right, node.left)):
                length = _length_name(ctx, scale, lengths)
                if length is None or not innermost_lanes(ctx, index, id(expr) in flat):
                    continue
                if _recovered(ctx, index) or not _only_lane_term(ctx, expr, node, id(expr) in flat):
                    continue
                message = (
                    f"`{short(ctx, node)}`: neighbouring lanes are `{length}` elements apart (a column): "
                    "accesses do not coalesce; make lanes run along the row"
                )
                small = id(expr) in flat and ctx.has_broadcast
                if small:  # one value per token beside the tiles: a small share of the bytes, info only
                    message += " (a 1-D vector beside the kernel's 2-D tiles: a small share of its traffic)"
                yield finding(
                    COLUMN_ACCESS, ctx, node, message, data={"row_length": length, "cause": "stride"},
                    severity=Severity.INFO if small else None,
                )
                break


def _recovered(ctx: KernelContext, index: ast.AST) -> bool:
    """The index was recovered with `//` or `%` (`head = i // size`), directly or through other locals
    (`local = offs // D; s = start + local`): `s * stride_s + (offs % D) * stride_d` walks rows of D
    contiguous lanes, so consecutive lanes share `s` and the product is not what neighbouring lanes differ by."""
    seen: set[str] = set()
    stack = [(name, True) for name in ctx.names_of(index)]
    while stack:
        name, direct = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        for value in ctx.assigns.get(name, ()):
            for sub in ctx.walk(value):
                if isinstance(sub, ast.BinOp) and isinstance(sub.op, (ast.FloorDiv, ast.Mod)):
                    # further away, only a per-lane division counts (`pid // n` on a scalar changes no lane)
                    if direct or ctx.is_index_expr(sub.left):
                        return True
            stack.extend((ref, False) for ref in ctx.names_of(value))
    return False


def _only_lane_term(ctx: KernelContext, expr: ast.AST, product: ast.BinOp, flat: bool) -> bool:
    """Whether the scaled index is the only term of the address that varies across lanes unscaled. Another bare
    lane index (`rows * n + cols` in a diagonal, `k[:, None] + n[None, :] * ld` in a column-major 2-D tile that
    Triton's coalescing pass lays out along k) means some lanes are contiguous."""
    for term in _terms(expr):
        if term is product or any(sub is product for sub in ctx.walk(term)):
            continue
        if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
            if not flat and not any(_length_name(ctx, side, row_lengths(ctx)) for side in (term.left, term.right)):
                return False  # a 2-D axis scaled by a stride that may be 1: possibly the contiguous one
            continue
        if ctx.is_index_expr(term):
            return False
    return True


def _terms(expr: ast.AST) -> list[ast.AST]:
    """The operands of a chain of `+` / `-`."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return [*_terms(expr.left), *_terms(expr.right)]
    return [expr]


def row_lengths(ctx: KernelContext) -> set[str]:
    """Runtime parameters used as a size: named like one, compared with an index (a mask bound) or bounding a
    loop, and not named like a stride."""
    cached = ctx.memo.get("flat_indexing.row_lengths")
    if cached is None:
        cached = ctx.memo["flat_indexing.row_lengths"] = _row_lengths(ctx)
    return cached


def _row_lengths(ctx: KernelContext) -> set[str]:
    runtime = {p for p, param in ctx.params.items() if not param.is_constexpr and not _STRIDE_NAME.search(p)}
    out: set[str] = {p for p in runtime if SIZE_NAME.search(p) and not p.endswith("_ptr")}
    for node in ctx.nodes:
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(ctx.is_index_expr(s) for s in sides):
                out |= {n for s in sides if isinstance(s, ast.Name) for n in [s.id] if n in runtime}
        elif isinstance(node, ast.Call) and ctx.resolve(node.func) in ("range", TL + "range", TL + "cdiv"):
            out |= {
                n.id for a in node.args for n in ctx.walk(a) if isinstance(n, ast.Name) and n.id in runtime
            }
    return out


def _length_name(ctx: KernelContext, node: ast.AST, lengths: set[str]) -> str | None:
    if isinstance(node, ast.Name) and node.id in lengths:
        return node.id
    return None


def row_strides(ctx: KernelContext) -> set[str]:
    """Stride parameters every launch fills with the stride of a dimension that is not the innermost one
    (`x.stride(0)` next to `x.stride(1)` or `x.shape[1]`): a row length, never 1 for a 2-D tensor."""
    out: set[str] = set()
    for name in ctx.params:
        if not _STRIDE_NAME.search(name) or ctx.params[name].is_constexpr:
            continue
        dims = []
        for site in ctx.launches:
            arg = site.bind(ctx.kernel).get(name)
            dims.append(_outer_stride(site, arg.text) if arg is not None else False)
        if dims and all(dims):
            out.add(name)
    return out


def _outer_stride(site: object, text: str) -> bool:
    """`t.stride(d)` where the same launch also passes `t.stride(e)` or `t.shape[e]` with e > d."""
    m = re.fullmatch(r"\s*([A-Za-z_][\w.]*)\.stride\((\d+)\)\s*", text)
    if not m:
        return False
    owner, dim = m.group(1), int(m.group(2))
    others = [a.text for a in (*site.args, *site.kwargs)]  # type: ignore[attr-defined]
    # `A.stride(0)` next to `ddA.stride(2)` says nothing about A: the owner must be the whole name.
    inner = re.compile(rf"(?<![\w.]){re.escape(owner)}\.(?:stride\((\d+)\)|shape\[(\d+)\])")
    for other in others:
        for m2 in inner.finditer(other):
            if int(m2.group(1) or m2.group(2)) > dim:
                return True
    return False


def _is_broadcast(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple)):
        return False
    elts = node.slice.elts
    return any(isinstance(e, ast.Constant) and e.value is None for e in elts) and any(
        isinstance(e, ast.Slice) for e in elts
    )


def innermost_lanes(ctx: KernelContext, node: ast.AST, one_d_access: bool = False) -> bool:
    """A 1-D index block (in a 1-D access, or in a kernel without 2-D blocks), or an index broadcast along the
    last axis (`x[None, :]`)."""
    if isinstance(node, ast.Name):
        return node.id in ctx.one_d_index_names and (one_d_access or not ctx.has_broadcast)
    if isinstance(node, ast.Call):
        parent = ctx.parent(node)
        return ctx.resolve(node.func) == TL + "arange" and not (
            isinstance(parent, ast.Subscript) and parent.value is node
        )
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) >= 2:
        elts = node.slice.elts
        return (
            isinstance(elts[-1], ast.Slice)
            and all(isinstance(e, ast.Constant) and e.value is None for e in elts[:-1])
            and ctx.is_index_expr(node.value)
        )
    return False


def runtime_scalar(ctx: KernelContext, node: ast.AST) -> bool:
    """A scalar only known at run time: a non-constexpr parameter or a local computed from one."""
    if isinstance(node, ast.Constant) or ctx.is_block_expr(node):
        return False
    names = ctx.names_of(node)
    runtime = {p for p, param in ctx.params.items() if not param.is_constexpr}
    return bool(names & ctx.names_closure(runtime))
