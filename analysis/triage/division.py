"""Per-element division by a value that is the same for every element of the block (TL135)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..findings import Finding, Level, Severity
from ..rules import Rule, register
from . import references as ref
from .base import finding, kernel_check, short
from .context import TL, KernelContext

_REDUCTIONS = {TL + n for n in ("sum", "max", "min", "reduce", "xor_sum", "argmax", "argmin")}
_BLOCKS = {
    TL + n for n in ("arange", "zeros", "full", "zeros_like", "full_like", "rand", "randn", "cumsum", "dot")
}

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
            "`y = x * inv` (the layer-norm tutorial keeps `rstd` for this reason). In memory-bound kernels the "
            "gain is small; in kernels that do math per element (attention epilogues, normalization over "
            "on-chip rows) it frees ALU cycles."
        ),
        references=(ref.LAYER_NORM, ref.CUDA_ARITHMETIC),
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
        if not ctx.is_block_expr(node.left) or not _data(ctx, node.left, loaded):
            continue
        if _constant_numerator(node.left) or _scalar(ctx, node.left):
            continue
        message = (
            f"`{short(ctx, node)}` divides every element by the scalar `{short(ctx, divisor)}`: "
            "compute its reciprocal once and multiply"
        )
        yield finding(DIVIDE_BY_SCALAR, ctx, node, message, data={"divisor": ast.unparse(divisor)})


def _data(ctx: KernelContext, node: ast.AST, loaded: set[str]) -> bool:
    return bool(ctx.names_of(node) & loaded) or any(
        isinstance(c, ast.Call) and ctx.load_call(c) is c for c in ctx.walk(node)
    )


def _scalar(ctx: KernelContext, node: ast.AST) -> bool:
    return rank(ctx, node) == 0


def rank(ctx: KernelContext, node: ast.AST, depth: int = 0) -> int:
    """Number of block dimensions of a value, inferred syntactically: `tl.arange` is 1-D, `v[:, None]` 2-D, a
    reduction with `axis` drops one, without it gives a scalar; loads take their pointer's rank, elementwise
    math the largest of its operands, a local name that of its reaching assignment(s). Parameters are scalars."""
    if isinstance(node, ast.Constant) or depth > 8:
        return 0
    if isinstance(node, ast.Subscript):
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(e, ast.Constant) and e.value is None for e in elts):
            return len(elts)
        return rank(ctx, node.value, depth + 1)
    if isinstance(node, ast.Call):
        name = ctx.resolve(node.func)
        if name == TL + "arange":
            return 1
        if (
            name in (TL + "zeros", TL + "full")
            and node.args
            and isinstance(node.args[0], (ast.Tuple, ast.List))
        ):
            return len(node.args[0].elts)
        if name in _REDUCTIONS:
            has_axis = len(node.args) > 1 or any(
                k.arg == "axis" and not _is_none(k.value) for k in node.keywords
            )
            inner = rank(ctx, node.args[0], depth + 1) if node.args else 0
            return max(inner - 1, 0) if has_axis else 0
        if ctx.load_call(node) is node:
            pointer = ctx.pointer_arg(node)
            return rank(ctx, pointer, depth + 1) if pointer is not None else 0
        parts = [*node.args, *(k.value for k in node.keywords if k.arg not in ("dtype", "axis"))]
        if isinstance(node.func, ast.Attribute) and name is None:
            parts.append(node.func.value)  # x.to(...)
        return max((rank(ctx, p, depth + 1) for p in parts), default=0)
    if isinstance(node, ast.Name):
        if node.id in ctx.params:
            return 0
        values = ctx.reaching(node.id, node)
        return max((rank(ctx, v, depth + 1) for v in values), default=0)
    return max((rank(ctx, c, depth + 1) for c in ast.iter_child_nodes(node)), default=0)


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _constant_numerator(node: ast.AST) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant)
