"""tl.dot rules: tiles too small for the matrix units, fp32 dots forced off the tensor cores."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..findings import Finding, Level, Severity
from ..rules import Rule, register
from . import references as ref
from .base import finding, kernel_check
from .context import TL, KernelContext

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
            message = f"{reason}: fp32 tl.dot runs on CUDA cores instead of TF32 tensor cores (~8-16x slower)"
            yield finding(DOT_IEEE, ctx, kw, message)
