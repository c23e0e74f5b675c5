"""Per-element division by a value that is the same for every element of the block (TL135)."""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator

from ..core.findings import Finding, Fix, Level, Severity
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, kernel_check, replace_fix, short
from .context import KernelContext
from .context_names import TL
from .flat_indexing import SIZE_NAME
from .shapes import REDUCTIONS, rank, statement

DIVIDE_BY_SCALAR = register(
    Rule(
        code="TL135",
        name="per-element-division-by-scalar",
        title="Every element divided by the same scalar",
        level=Level.TRIAGE,
        severity=Severity.INFO,
        platforms=("cuda", "ascend"),
        rationale=(
            "`y = x / denom` with a block `x` and a scalar `denom` (a row's normalizer, standard deviation, "
            "temperature) performs one IEEE-rounded division per element: Triton lowers fp32 `/` to "
            "`div.rn.f32`, a reciprocal approximation plus Newton steps and a slow path, about ten instructions "
            "on NVIDIA, and a multi-cycle vector division on Ascend. The compiler may not replace it by a "
            "multiplication because the results differ in the last bit.\n\n"
            "**Fix:** compute the reciprocal once per program, `inv = 1.0 / denom`, and multiply: "
            "`y = x * inv` (the layer-norm tutorial keeps `rstd` for this reason). Reported only where the "
            "divisions can be measured: in a loop over tiles that also computes (a `tl.dot` or a transcendental "
            "per element), or on an accumulator (or the weights added into one) renormalised by a running sum "
            "on every iteration, where the fix is to keep it unnormalised and divide once after the loop (the "
            "flash-attention epilogue). A divide per element in memory-bound elementwise code, or once per "
            "program outside any loop, costs nothing measurable and is not reported."
        ),
        references=(ref.LAYER_NORM, ref.CUDA_ARITHMETIC),
        has_fix=True,
    )
)


@kernel_check
def division_by_scalar(ctx: KernelContext) -> Iterator[Finding]:
    loaded = ctx.names_closure(set(ctx.load_names))
    for node in ctx.nodes:
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Div):
            continue
        divisor = node.right
        if isinstance(divisor, ast.Constant) or not _scalar(ctx, divisor) or ctx.is_index_expr(node.left):
            continue
        if _exact_reciprocal_constexpr(ctx, divisor):
            continue  # a constexpr power of two: the compiler folds x / 2**k into a multiply
        if not ctx.is_block_expr(node.left) or not _data(ctx, node.left, loaded):
            continue
        if _constant_numerator(node.left) or _scalar(ctx, node.left) or _reduced(ctx, node.left):
            continue
        if not _from_reduction(ctx, divisor) and ctx.is_block_expr(divisor):
            continue  # rank inference lost track: a divisor built from blocks stays a block unless reduced
        if _size_or_scale(ctx, divisor):
            continue  # `/ N` averages reduced values (a mean); `/ scale` quantizes: both deliberate
        if _quantized(ctx, node):
            continue  # `(x / scale).to(fp8)`: quantizers keep the division for bit parity with the reference
        loops = ctx.enclosing_loops(node)
        if not loops:
            continue  # once per program: a few divisions per element of one block, not measurable
        loop = loops[0]
        renormalised = _renormalised_accumulator(ctx, loop, node, divisor)
        if renormalised is not None:
            message = (
                f"`{short(ctx, node)}` renormalises `{renormalised}` by `{short(ctx, divisor)}` on every "
                f"iteration of the loop at line {loop.lineno}: keep `{renormalised}` unnormalised (rescale it only "
                "by the running-max correction) and divide once after the loop"
            )
            yield finding(
                DIVIDE_BY_SCALAR, ctx, node, message,
                data={"divisor": ast.unparse(divisor), "form": "renormalised", "accumulator": renormalised,
                      "loop_line": loop.lineno},
            )  # fmt: skip
            continue
        if ctx.has_broadcast and rank(ctx, node.left) == 1:
            continue  # one vector (a head-dim row, an l2norm) next to 2-D tile work: its divisions are negligible
        if not _computes(ctx, loop):
            continue  # memory-bound elementwise tiles: the divide hides behind the loads
        message = (
            f"`{short(ctx, node)}` divides every element by the scalar `{short(ctx, divisor)}` in the loop at "
            f"line {loop.lineno}, next to its per-element math: compute the reciprocal once and multiply"
        )
        fix = _reciprocal_fix(ctx, node)
        yield finding(
            DIVIDE_BY_SCALAR, ctx, node, message, fix=fix,
            data={"divisor": ast.unparse(divisor), "form": "in-loop", "loop_line": loop.lineno},
        )  # fmt: skip


# Per-element work that keeps the ALUs busy, so a division per element shows: tensor-core products and
# transcendentals (the special-function unit on NVIDIA, the vector unit's multi-cycle ops on Ascend).
_COMPUTE = {
    TL + name
    for name in ("dot", "dot_scaled", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "sigmoid",
                 "erf", "math.exp", "math.exp2", "math.log", "math.log2", "math.sqrt", "math.rsqrt", "math.tanh",
                 "math.erf", "math.pow", "extra.cuda.libdevice.tanh", "extra.cuda.libdevice.pow")
}  # fmt: skip


def _computes(ctx: KernelContext, loop: ast.For) -> bool:
    return any(isinstance(c, ast.Call) and ctx.resolve(c.func) in _COMPUTE for c in ctx.walk(loop))


def _renormalised_accumulator(ctx: KernelContext, loop: ast.For, node: ast.BinOp, divisor: ast.AST) -> str | None:
    """The loop-carried accumulator that the quotient becomes (`acc = (acc * a + pv) / l`) or is added into
    (`p = p / l; acc = acc * c + p ...`), when the divisor changes every iteration (a running sum): the
    accumulator is renormalised on every step where one division after the loop would do."""
    if not ctx.names_of(divisor) & ctx.assigned_in(loop):
        return None  # a loop-invariant divisor: the reciprocal-multiply case
    stmt = statement(ctx, node)
    target = _target(stmt)
    if target is None:
        return None
    if _carried(ctx, loop, target):
        return target
    for sub in ctx.walk(loop):
        if isinstance(sub, (ast.Assign, ast.AugAssign)) and sub is not stmt:
            acc = _target(sub)
            if acc and acc != target and target in ctx.names_of(sub.value) and _carried(ctx, loop, acc):
                return acc
    return None


def _target(stmt: ast.AST | None) -> str | None:
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def _carried(ctx: KernelContext, loop: ast.For, name: str) -> bool:
    """`name` is updated from its own previous value in `loop` (`acc += ...`, `acc = acc * c + ...`) and set
    before it (`acc = tl.zeros(...)`): its value crosses iterations. A temporary redefined first in every
    iteration (`p = tl.exp(s); p = p / l`) is not."""
    inside = {id(n) for n in ctx.walk(loop)}
    if all(id(v) in inside for v in ctx.assigns.get(name, ())) and name not in ctx.params:
        return False
    for sub in ctx.walk(loop):
        if isinstance(sub, ast.AugAssign) and _target(sub) == name:
            return True
        if isinstance(sub, ast.Assign) and _target(sub) == name and name in ctx.names_of(sub.value):
            return True
    return False


def _reciprocal_fix(ctx: KernelContext, node: ast.BinOp) -> Fix | None:
    """`a / s` -> `a * (1.0 / s)`: one scalar division per program, a multiply per element. `*` and `/` bind
    alike and associate left, so the left operand's text (with its own parentheses) keeps its meaning."""
    full = ctx.text(node)
    left, right = ctx.span(node.left), ctx.span(node.right)
    start = ctx.span(node)
    if left.end_line != right.line or left.end_line != start.line or "\n" in full:
        return None  # one-line divisions only: the operator's place is then a column
    gap = full[left.end_col - start.col : right.col - start.col]
    if gap.count("/") != 1 or "//" in gap:
        return None
    at = left.end_col - start.col + gap.index("/")
    numerator, denominator = full[:at].rstrip(), full[at + 1 :].strip()
    return replace_fix(
        f"Multiply by the reciprocal: {numerator} * (1.0 / {denominator})",
        ctx.span(node),
        f"{numerator} * (1.0 / {denominator})",
    )


def _data(ctx: KernelContext, node: ast.AST, loaded: set[str]) -> bool:
    return bool(ctx.names_of(node) & loaded) or any(
        isinstance(c, ast.Call) and ctx.load_call(c) is c for c in ctx.walk(node)
    )


def _scalar(ctx: KernelContext, node: ast.AST) -> bool:
    return rank(ctx, node) == 0


def _reduced(ctx: KernelContext, node: ast.AST) -> bool:
    """The numerator is a reduction's result (`tl.sum(acc, axis=1) / n`): one value per row, not per element."""
    while (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to") or (
        isinstance(node, ast.Subscript) and rank(ctx, node) > rank(ctx, node.value)
    ):  # `.to(...)`, or `tl.sum(x, 1)[:, None]` (the per-row sum kept 2-D for broadcasting)
        node = node.func.value if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Name):
        values = ctx.reaching(node.id, statement(ctx, node))
        # `acc += tl.sum(tile, axis=0)` makes `acc` an accumulator of reductions, not one reduction
        return len(values) == 1 and id(values[0]) not in ctx.increments and _reduced(ctx, values[0])
    return isinstance(node, ast.Call) and ctx.resolve(node.func) in REDUCTIONS


def _size_or_scale(ctx: KernelContext, divisor: ast.AST) -> bool:
    """A runtime size parameter (`K`, `n_cols`: the divisor of a mean) or a name that says it is a scale."""
    if not isinstance(divisor, ast.Name):
        return False
    if divisor.id in ctx.params and SIZE_NAME.search(divisor.id):
        return True
    values = ctx.assigns.get(divisor.id, ())
    if len(values) == 1 and isinstance(values[0], ast.Name) and values[0].id != divisor.id:
        return _size_or_scale(ctx, values[0])  # `tmp14 = rnumel` (generated code names every value)
    return "scale" in divisor.id.lower()


def _from_reduction(ctx: KernelContext, node: ast.AST, depth: int = 0) -> bool:
    """Whether a reduction (`tl.sum`, `tl.max`) feeds the value, through up to three local assignments."""
    for sub in ctx.walk(node):
        if isinstance(sub, ast.Call) and ctx.resolve(sub.func) in REDUCTIONS:
            return True
        if isinstance(sub, ast.Name) and depth < 3:
            if any(_from_reduction(ctx, v, depth + 1) for v in ctx.reaching(sub.id, statement(ctx, sub))):
                return True
    return False


def _quantized(ctx: KernelContext, node: ast.AST) -> bool:
    """The quotient is cast to an 8-bit type right away (`(x / s).to(tl.float8e4nv)`, or `y = x / s` then
    `y = y.to(tl.int8)`): a quantizer."""

    def eight_bit(call: ast.AST) -> bool:
        if not (isinstance(call, ast.Call) and call.args):
            return False
        target = (ctx.resolve(call.args[0]) or ast.unparse(call.args[0])).lower()
        return any(t in target for t in ("float8", "fp8", "int8", "uint8"))

    parent = ctx.parent(node)
    if isinstance(parent, ast.Attribute) and parent.attr == "to" and eight_bit(ctx.parent(parent)):
        return True
    if isinstance(parent, ast.Call) and ctx.resolve(parent.func) == TL + "clamp":
        outer = ctx.parent(parent)  # `tl.clamp(x / s, lo, hi).to(out.dtype.element_ty)`: clamp-and-cast quantizer
        if isinstance(outer, ast.Attribute) and outer.attr == "to":
            return True
    stmt = statement(ctx, node)
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    name = stmt.targets[0].id
    return any(
        isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "to"
        and isinstance(v.func.value, ast.Name) and v.func.value.id == name and eight_bit(v)
        for v in ctx.assigns.get(name, ())
    )  # fmt: skip


def _constant_numerator(node: ast.AST) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant)


def _exact_reciprocal_constexpr(ctx: KernelContext, divisor: ast.AST) -> bool:
    """A constexpr divisor every known value of which is a power of two (1.0, 2, 0.5): its reciprocal is exact,
    so the division is folded into a multiplication. Other constexpr values still cost an IEEE division."""
    if not (isinstance(divisor, ast.Name) and divisor.id in ctx.params and ctx.params[divisor.id].is_constexpr):
        return False
    param = ctx.params[divisor.id]
    values = [site.value for site in ctx.value_sites(divisor.id) if site.origin != "default"]
    if param.has_default and isinstance(param.default, (int, float)) and not isinstance(param.default, bool):
        values.append(param.default)  # value_sites keeps integers only; a float default counts here
    return bool(values) and all(
        isinstance(v, (int, float)) and v > 0 and math.frexp(v)[0] == 0.5 for v in values
    )
