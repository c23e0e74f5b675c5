"""tl.dot rules: tiles too small for the matrix units, fp32 dots forced off the tensor cores."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, kernel_check
from .context import KernelContext
from .context_names import TL

# Smallest tile edge of an MMA instruction (NVIDIA mma/wgmma) and of the Ascend cube fractal (16x16).
MIN_DOT_DIM = 16

DOT_TILE_SMALL = register(
    Rule(
        code="TL110",
        name="dot-tile-too-small",
        title="tl.dot tile dimension below 16",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "Matrix units work on fixed fragments: NVIDIA tensor-core MMA instructions need M, N and K of at "
            "least 16 (K of 32 for 8-bit types), and the Ascend cube unit computes 16x16 fractals. Triton rejects "
            "or pads smaller `tl.dot` operands, so a BLOCK_K of 8 either fails to compile or wastes at least half "
            "of every MMA, and tiny tiles re-read the operands from memory many more times.\n\n"
            "**Fix:** use tiles of at least 16 in every dimension (typically 64-128 for M/N and 32-64 for K, "
            "as in the matmul tutorial's autotune configs), masking the edges."
        ),
        references=(ref.DOT, ref.MATMUL, ref.ASCEND_PROGRAMMING),
    )
)

DOT_IEEE = register(
    Rule(
        code="TL111",
        name="dot-fp32-ieee",
        title="fp32 tl.dot forced to full-precision FMA (no tensor cores)",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda",),
        rationale=(
            'For fp32 operands `tl.dot` uses TF32 tensor cores by default. `input_precision="ieee"` (or the '
            "deprecated `allow_tf32=False`) forces exact fp32 multiply-adds on the CUDA cores instead, roughly "
            "8-16x lower throughput on A100/H100. It is ignored for fp16/bf16/fp8 operands, so it only matters "
            "when the tiles are fp32.\n\n"
            "**What to do:** if the extra precision is not required, drop the option (TF32) or use "
            '`input_precision="tf32x3"`, which recovers near-fp32 accuracy with three TF32 MMAs and is still '
            "several times faster than IEEE. No quick fix is offered: both change the numerical result."
        ),
        references=(ref.DOT,),
    )
)


@kernel_check
def dot_tile_too_small(ctx: KernelContext) -> Iterator[Finding]:
    if not any(True for _ in ctx.calls_to(TL + "dot")):
        return
    for name in sorted(ctx.block_size_params):
        for site in ctx.value_sites(name):
            if 0 < site.value < MIN_DOT_DIM:
                message = f"{name} = {site.value} feeds tl.dot: matrix units need every tile dimension >= {MIN_DOT_DIM}"
                yield finding(
                    DOT_TILE_SMALL, ctx, site.span, message, data={"param": name, "value": site.value}
                )


@kernel_check
def dot_fp32_ieee(ctx: KernelContext) -> Iterator[Finding]:
    for call in ctx.calls_to(TL + "dot"):
        for kw in call.keywords:
            value = kw.value
            if kw.arg == "input_precision" and isinstance(value, ast.Constant) and value.value == "ieee":
                reason = 'input_precision="ieee"'
            elif kw.arg == "allow_tf32" and isinstance(value, ast.Constant) and value.value is False:
                reason = "allow_tf32=False"
            else:
                continue
            if not any(_known_fp32(ctx, operand, call) for operand in call.args[:2]):
                # fp16/bf16/fp8 operands never use TF32, so the flag changes nothing; an operand is fp32 when
                # the kernel casts it so or the launch sites in the file pass fp32 tensors. Otherwise silent.
                continue
            message = f"{reason}: fp32 tl.dot runs on CUDA cores instead of TF32 tensor cores (~8-16x slower)"
            yield finding(DOT_IEEE, ctx, kw, message)


def _known_fp32(ctx: KernelContext, node: ast.AST, use: ast.AST, depth: int = 0) -> bool:
    """Whether a tl.dot operand is float32 for sure: a `.to(tl.float32)` cast, an fp32 tl.zeros/tl.full, or a
    local whose reaching value is one (through `.T`, tl.trans and unary minus)."""
    if depth > 8:
        return False
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return _known_fp32(ctx, node.value, use, depth + 1)
    if isinstance(node, ast.UnaryOp):
        return _known_fp32(ctx, node.operand, use, depth + 1)
    if isinstance(node, ast.Call) and ctx.resolve(node.func) == TL + "load":
        pointer = ctx.pointer_arg(node)
        roots = ctx.base_pointers(pointer) if pointer is not None else set()
        return bool(roots) and all(_launched_dtype(ctx, root) == "fp32" for root in roots)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr == "to" and node.args:
            return ctx.resolve(node.args[0]) == TL + "float32"
        name = ctx.resolve(node.func)
        if name == TL + "trans" and node.args:
            return _known_fp32(ctx, node.args[0], use, depth + 1)
        if name in (TL + "zeros", TL + "full"):
            return any(
                ctx.resolve(a) == TL + "float32" for a in [*node.args, *(k.value for k in node.keywords)]
            )
        return False
    if isinstance(node, ast.Name):
        values = ctx.reaching(node.id, use)
        return bool(values) and all(_known_fp32(ctx, v, v, depth + 1) for v in values)
    return False


def _launched_dtype(ctx: KernelContext, param: str) -> str | None:
    """The element type of the tensor every launch site in the file passes for `param`, when all agree and
    the tensors' creation is visible (`torch.randn(..., dtype=torch.float32)` then `kernel[grid](a, ...)`)."""
    key = f"launched_dtype:{param}"
    if key in ctx.memo:
        return ctx.memo[key]
    from ..specialize.launch import resolve
    from ..specialize.scope import find_launches

    dtypes: set[str | None] = set()
    order = [p.name for p in ctx.kernel.params if p.kind == "positional"]
    tree = ctx.module.tree
    launches = find_launches(tree, ctx.name) if tree is not None and param in order else []
    for launch in launches:
        args = launch.call.args
        index = order.index(param)
        expr = next((k.value for k in launch.call.keywords if k.arg == param), None)
        if (
            expr is None
            and index < len(args)
            and not any(isinstance(a, ast.Starred) for a in args[: index + 1])
        ):
            expr = args[index]
        dtypes.add(resolve(expr, launch.scope).dtype if expr is not None else None)
    found = dtypes.pop() if len(dtypes) == 1 else None
    ctx.memo[key] = found
    return found
