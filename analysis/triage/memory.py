"""Address and index arithmetic: strided innermost access, 64-bit index blocks, per-lane integer division."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, kernel_check, short
from .context import KernelContext
from .context_names import ATOMICS, TL

STRIDED = register(
    Rule(
        code="TL109",
        name="strided-innermost-access",
        title="Innermost (fastest-moving) block dimension is strided",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "Neighbouring lanes of a block should touch neighbouring addresses. When the index that varies along "
            "the innermost block dimension (`tl.arange(...)` in 1-D, `offs[None, :]` in 2-D) is multiplied by a "
            "stride that is not 1, each lane reads a different memory segment: on NVIDIA a warp's 32 loads no "
            "longer coalesce into one or two 128-byte transactions (up to 32x more sectors), and on Ascend the "
            "access stops being a contiguous DMA and falls back to discrete element moves.\n\n"
            "**Fix:** make the unit-stride dimension the innermost one (swap the `[:, None]`/`[None, :]` roles or "
            "pass a transposed/contiguous tensor); a runtime stride argument is fine because Triton specializes "
            "a stride equal to 1 at launch, a literal or constexpr stride other than 1 is not."
        ),
        references=(ref.CUDA_COALESCING, ref.MATMUL, ref.ASCEND_MIGRATE),
    )
)

INT64_INDEX = register(
    Rule(
        code="TL113",
        name="int64-index-block",
        title="Index block widened to int64",
        level=Level.TRIAGE,
        severity=Severity.INFO,
        # On NVIDIA the cost is a few extra integer instructions per lane, small next to the memory traffic of
        # the kernels that do this, and public libraries widen deliberately for tensors beyond 2**31 elements
        # (measured: no true positive among the judged CUDA findings, docs/precision.md). On Ascend the vendor
        # guide lists int64 vector add as unsupported (scalarized), so the rule stays on there.
        platforms=("ascend",),
        rationale=(
            "Casting a whole offset block (`offsets.to(tl.int64)`) makes every lane's address arithmetic 64-bit. "
            "Ascend vector units have no int64 add: the triton-ascend performance guide lists it among the "
            "operations that degrade to scalar code. Offsets only need 64 bits when the tensor has 2**31 "
            "elements or more. Code chosen by a constexpr flag (`if LONG_INDEXING: ... else: ...`) is not "
            "reported: the caller picks the int32 branch for small tensors.\n\n"
            "**Fix:** keep per-lane offsets in int32 and widen only the scalar base when tensors can exceed 2 GiB "
            "elements: `base = pid.to(tl.int64) * stride` (one scalar op) plus `tl.arange(0, BLOCK)` (int32)."
        ),
        references=(ref.ASCEND_VECTOR_OPS, ref.CUDA_ARITHMETIC),
    )
)

VECTOR_DIVMOD = register(
    Rule(
        code="TL124",
        name="index-divmod-by-runtime-value",
        title="Per-lane integer division or modulo by a runtime value inside a loop",
        level=Level.TRIAGE,
        severity=Severity.INFO,
        platforms=("cuda", "ascend"),
        rationale=(
            "`offs // n` and `offs % n` on an index block with a runtime divisor compile to a multi-instruction "
            "integer-division sequence per lane (about 20 instructions on NVIDIA, scalarized on Ascend vector "
            "units). Once per program this is negligible (the matmul tutorial wraps its offsets with `% M`); "
            "inside a loop it is paid on every iteration. With a `tl.constexpr` divisor the compiler uses "
            "shifts or a multiply-high instead.\n\n"
            "**Fix:** make the divisor a `tl.constexpr` when it takes few values, restructure with a 2-D block "
            "(`rows[:, None]`, `cols[None, :]`) so no division is needed, or compute the quotient once per "
            "program on a scalar."
        ),
        references=(ref.CUDA_DIVISION, ref.ASCEND_VECTOR_OPS),
    )
)


@kernel_check
def strided_innermost(ctx: KernelContext) -> Iterator[Finding]:
    # Every expression an address is built from, each walked once.
    exprs: dict[int, ast.AST] = {}
    for call in ctx.calls_to(TL + "load", TL + "store", *ATOMICS):
        pointer = ctx.pointer_arg(call)
        if pointer is not None:
            for expr in ctx.address_exprs(pointer):
                exprs.setdefault(id(expr), expr)
    seen: set[int] = set()
    for expr in exprs.values():
        for node in ctx.walk(expr):
            if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult) or id(node) in seen:
                continue
            seen.add(id(node))
            for index, stride in ((node.left, node.right), (node.right, node.left)):
                value = _stride_value(ctx, stride)  # cheap test first
                if value is None or not _innermost_index(ctx, index):
                    continue
                if _interleaved(ctx, exprs.values(), value, node):
                    continue  # `x[2*i]` and `x[2*i + 1]` both accessed: together the lanes cover every element
                message = f"`{short(ctx, node)}`: adjacent lanes are {value} elements apart, so accesses do not coalesce"
                yield finding(STRIDED, ctx, node, message, data={"stride": value})
                break


@kernel_check
def int64_index_block(ctx: KernelContext) -> Iterator[Finding]:
    for call in ctx.all_calls:
        if isinstance(call.func, ast.Attribute) and call.func.attr == "to" and call.args:
            source, dtype = call.func.value, call.args[0]
        elif ctx.resolve(call.func) == TL + "cast" and len(call.args) >= 2:
            source, dtype = call.args[0], call.args[1]
        else:
            continue
        if ctx.resolve(dtype) != TL + "int64" or not ctx.is_index_expr(source):
            continue
        if ctx.constexpr_guard(call) is not None:
            continue  # `if LONG_INDEXING:` int64 offsets with an int32 `else`: chosen per launch, on purpose
        message = (
            f"`{short(ctx, call)}` makes every lane's index math 64-bit; int32 suffices below 2**31 elements"
        )
        yield finding(INT64_INDEX, ctx, call, message)


@kernel_check
def index_divmod(ctx: KernelContext) -> Iterator[Finding]:
    # `a // n` and `a % n` in one loop are one division (the remainder is derived from the quotient): one finding.
    groups: dict[tuple[int, str, str], list[ast.BinOp]] = {}
    for node in ctx.nodes:
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            continue
        if not ctx.is_index_expr(node.left) or not _runtime_scalar(ctx, node.right):
            continue
        loops = ctx.enclosing_loops(node)
        if not loops:
            continue  # once per program is cheap; in a loop it is paid on every iteration
        if _heavy_body(ctx, loops[0]):
            continue  # once per tile next to a tl.dot or an inner loop: amortised over the tile's work
        if not ctx.names_of(node) & ctx.assigned_in(loops[0]):
            continue  # nothing in it changes in the loop (`row % n` of the program's rows): hoisted by the compiler
        key = (id(loops[0]), ast.unparse(node.left), ast.unparse(node.right))
        groups.setdefault(key, []).append(node)
    for nodes in groups.values():
        node = nodes[0]
        loop = ctx.enclosing_loops(node)[0]
        ops = sorted({"//" if isinstance(n.op, ast.FloorDiv) else "%" for n in nodes})
        pair = next((n for n in nodes if n.op.__class__ is not node.op.__class__), None)
        both = f" and `{short(ctx, pair)}`" if pair is not None else ""
        message = (
            f"`{short(ctx, node)}`{both} divide{'' if both else 's'} every lane by the runtime value "
            f"`{short(ctx, node.right)}` ({', '.join(ops)}) on each iteration of the loop at line {loop.lineno}"
        )
        yield finding(VECTOR_DIVMOD, ctx, node, message, data={"divisor": ast.unparse(node.right)})


def _interleaved(ctx: KernelContext, exprs: Iterable[ast.AST], stride: int, product: ast.AST | None = None) -> bool:
    """Whether the kernel reads both `base + idx` and `base + (idx + c)` with 0 < c < stride (real/imaginary or
    interleaved fields): the strided accesses then cover every element between them, so no sector is wasted."""
    exprs = list(exprs)
    if product is not None and _offset_copy(ctx, exprs, product, stride):
        return True
    direct = set()
    for call in ctx.calls_to(TL + "load", TL + "store", *ATOMICS):
        pointer = ctx.pointer_arg(call)
        if pointer is not None:
            direct |= ctx.names_of(pointer)
    for expr in exprs:
        for node in ctx.walk(expr):
            if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Add):
                continue
            for name, const in ((node.left, node.right), (node.right, node.left)):
                if (
                    isinstance(name, ast.Name)
                    and name.id in direct
                    and isinstance(const, ast.Constant)
                    and isinstance(const.value, int)
                    and not isinstance(const.value, bool)
                    and 0 < const.value < stride
                ):
                    return True
    return False


def _offset_copy(ctx: KernelContext, exprs: list[ast.AST], product: ast.AST, stride: int) -> bool:
    """Whether an address also uses `product` (`i * 2`) shifted by a constant below the stride: `... + i * 2 + 1`
    beside `... + i * 2`, or `j = i2 + 1` where `i2` holds the product (even and odd halves read separately)."""
    text = ast.unparse(product)
    holders = {name for name, values in ctx.assigns.items() if any(ast.unparse(v) == text for v in values)}
    nodes = {id(n): n for e in exprs for n in ctx.walk(e)}.values()  # every node of every address
    copies = sum(1 for n in nodes if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and ast.unparse(n) == text)
    for node in nodes:
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Add):
            continue
        for other, const in ((node.left, node.right), (node.right, node.left)):
            if not (
                isinstance(const, ast.Constant)
                and isinstance(const.value, int)
                and not isinstance(const.value, bool)
                and 0 < const.value < stride
            ):
                continue
            if any(isinstance(sub, ast.Name) and sub.id in holders for sub in ctx.walk(other)):
                return True  # `p + base + 1` (parsed `(p + base) + 1`) beside `p + base`, base holding the product
            if copies > 1 and any(isinstance(sub, ast.BinOp) and ast.unparse(sub) == text for sub in ctx.walk(other)):
                return True
    return False


def _heavy_body(ctx: KernelContext, loop: ast.For) -> bool:
    """Whether the loop's body does tile-sized work per iteration (a tl.dot or a nested loop), so a per-lane
    division on an index block is a small fraction of the iteration (persistent matmul tile loops)."""
    for sub in ctx.walk(loop):
        if sub is not loop and isinstance(sub, (ast.For, ast.While)):
            return True
        if isinstance(sub, ast.Call) and ctx.resolve(sub.func) in (TL + "dot", TL + "dot_scaled"):
            return True
    return False


def _innermost_index(ctx: KernelContext, node: ast.AST) -> bool:
    """A 1-D index block, or a 2-D one broadcast along the last axis (`x[None, :]`)."""
    if isinstance(node, ast.Name):
        return node.id in ctx.one_d_index_names and not ctx.has_broadcast
    if isinstance(node, ast.Call):
        return (
            ctx.resolve(node.func) == TL + "arange" and not _broadcast_parent(ctx, node) and not _row_axis(ctx, node)
        )
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and node.slice.elts:
        elts = node.slice.elts
        last_is_lanes = isinstance(elts[-1], ast.Slice)
        others_new = all(isinstance(e, ast.Constant) and e.value is None for e in elts[:-1])
        return last_is_lanes and others_new and len(elts) >= 2 and ctx.is_index_expr(node.value)
    return False


def _row_axis(ctx: KernelContext, node: ast.AST) -> bool:
    """Is `node` assigned to names that every later use broadcasts along a leading axis (`rows[:, None]`)? Then
    its lanes index rows, and the contiguous axis is another one (`cols[None, :]`)."""
    stmt = ctx.parent(node)
    while stmt is not None and not isinstance(stmt, ast.stmt):
        stmt = ctx.parent(stmt)
    if not isinstance(stmt, ast.Assign) or not all(isinstance(t, ast.Name) for t in stmt.targets):
        return False
    names = {t.id for t in stmt.targets if isinstance(t, ast.Name)}
    uses = [n for n in ctx.nodes if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)]
    return bool(uses) and all(_leading_axis_use(ctx, n) for n in uses)


def _leading_axis_use(ctx: KernelContext, name: ast.Name) -> bool:
    parent = ctx.parent(name)
    if isinstance(parent, ast.Subscript) and parent.value is name and isinstance(parent.slice, ast.Tuple):
        elts = parent.slice.elts
        return len(elts) >= 2 and isinstance(elts[-1], ast.Constant) and elts[-1].value is None
    if isinstance(parent, ast.Compare):
        return True  # a bound check (`offs < n`) is no access
    return False


def _broadcast_parent(ctx: KernelContext, node: ast.AST) -> bool:
    parent = ctx.parent(node)
    return isinstance(parent, ast.Subscript) and parent.value is node


def _stride_value(ctx: KernelContext, node: ast.AST) -> int | None:
    """A stride known not to be 1: an int literal > 1, or a parameter every known value of which is > 1."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value if node.value > 1 else None
    if isinstance(node, ast.Name) and node.id in ctx.params:
        values = [site.value for site in ctx.value_sites(node.id)]
        if values and all(v > 1 for v in values):
            return min(values)
    return None


def _runtime_scalar(ctx: KernelContext, node: ast.AST) -> bool:
    """A divisor only known at run time: a non-constexpr parameter (or a local computed from one)."""
    if isinstance(node, ast.Constant):
        return False
    names = {n.id for n in ctx.walk(node) if isinstance(n, ast.Name)}
    if not names or ctx.is_block_expr(node):
        return False
    runtime = {p for p, param in ctx.params.items() if not param.is_constexpr}
    return bool(names & ctx.names_closure(runtime))
