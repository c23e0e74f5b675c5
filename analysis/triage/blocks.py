"""Block-size rules: sizes that are not compile-time constants, not powers of two, or too small to use the chip."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from ..source.numbers import data_number, number_text
from . import references as ref
from .base import (
    finding,
    is_masked,
    is_power_of_two,
    kernel_check,
    next_power_of_two,
    replace_fix,
)
from .context import KernelContext
from .context_names import TL, bare_names
from .context_values import ValueSite

# Upper-case names that conventionally hold a tile size (BLOCK_SIZE, BLOCK_M, XBLOCK, TILE_N, ...).
_BLOCK_NAME = re.compile(r"^(?:[A-Z0-9_]*BLOCK[A-Z0-9_]*|TILE(?:_[A-Z0-9]+)*)$")
# A count of blocks or tiles (M_BLOCKS, NUM_BLOCKS, BLOCK_NUM, N_TILES): a loop bound, not a block shape.
_COUNT_NAME = re.compile(
    r"(?:BLOCKS|TILES)(?:_|$)|(?:^|_)(?:NUM|N|CNT|COUNT)_?(?:BLOCK|TILE)|(?:BLOCK|TILE)_?(?:NUM|CNT|COUNT)"
)
# A 1-D elementwise program should give every one of num_warps*32 lanes work: 128 is one element per lane at 4 warps.
_TINY_1D = 128

NOT_CONSTEXPR = register(
    Rule(
        code="TL101",
        name="block-size-not-constexpr",
        title="Block size is a runtime argument instead of tl.constexpr",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        escalates_to=Severity.ERROR,
        escalation="when the parameter sizes a block (tl.arange, tl.zeros), so the kernel does not compile",
        platforms=("cuda", "ascend"),
        rationale=(
            "Triton sizes blocks at compile time: `tl.arange(0, N)`, `tl.zeros((M, N))` and friends need `N` to be "
            "a `tl.constexpr`, otherwise the kernel does not compile (*arange's arguments must be of type "
            "tl.constexpr*). A tile-size parameter that is only used in loop bounds does compile, but every size "
            "then shares one binary whose loop trip counts and offsets are unknown to the compiler, so it cannot "
            "unroll, vectorize the tail or pick layouts for the tile.\n\n"
            "**Fix:** annotate the parameter `BLOCK_SIZE: tl.constexpr` (the quick fix does this). Triton then "
            "compiles one specialized binary per value, as in the vector-add and softmax tutorials."
        ),
        references=(ref.VECTOR_ADD, ref.CONSTEXPR, ref.ARANGE),
        has_fix=True,
    )
)

NOT_POW2 = register(
    Rule(
        code="TL102",
        name="block-size-not-power-of-two",
        title="Block size is not a power of two",
        level=Level.TRIAGE,
        severity=Severity.ERROR,
        platforms=("cuda", "ascend"),
        rationale=(
            "`tl.arange(start, end)` requires `end - start` to be a power of two, and every block shape is built "
            "from it: a block size of 1000 fails to compile on both upstream Triton and triton-ascend. Power-of-two "
            "tiles are also what the layouts are designed around (warps of 32 lanes, 16x16 MMA fragments, 32-byte "
            "UB alignment on Ascend).\n\n"
            "**Fix:** round the size up to the next power of two and keep the tail in bounds with a mask "
            "(`mask = offsets < n`), as the softmax tutorial does with `triton.next_power_of_2(n_cols)`. The quick "
            "fix is offered only when every load and store of the kernel is already masked, so rounding up cannot "
            "read or write out of bounds."
        ),
        references=(ref.ARANGE, ref.FUSED_SOFTMAX),
        has_fix=True,
    )
)

TINY = register(
    Rule(
        code="TL103",
        name="block-size-tiny",
        title="Block size too small to keep the hardware busy",
        level=Level.TRIAGE,
        severity=Severity.INFO,
        platforms=("cuda", "ascend"),
        rationale=(
            "A 1-D program that handles only a few elements wastes most of the machine: on NVIDIA a program runs "
            "`num_warps * 32` threads (128 by default), so a 32-element block leaves three quarters of the lanes "
            "idle and multiplies the number of programs the scheduler must launch; on Ascend each program is one "
            "AI-core task and a tiny tile pays the fixed DMA and scheduling cost per few bytes.\n\n"
            "**Fix:** use blocks of 512-4096 elements for elementwise and reduction kernels (the vector-add "
            "tutorial uses 1024), or let `@triton.autotune` choose among a few power-of-two sizes."
        ),
        references=(ref.VECTOR_ADD, ref.ASCEND_PROGRAMMING),
    )
)


@kernel_check
def block_size_not_constexpr(ctx: KernelContext) -> Iterator[Finding]:
    if ctx.kernel.is_helper:
        return  # a helper's parameters take constexpr-ness from the caller's arguments
    used_as_size = ctx.block_size_params
    for param in ctx.kernel.params:
        if param.is_constexpr or param.kind != "positional":
            continue
        shaped = param.name in used_as_size
        if not shaped and not (
            _BLOCK_NAME.match(param.name)
            and not _COUNT_NAME.search(param.name)
            and _used_in_body(ctx, param.name)
        ):
            continue
        if shaped:
            message = f"`{param.name}` sizes a block but is not tl.constexpr: this does not compile"
            severity = Severity.ERROR
        else:
            message = f"block size `{param.name}` is a runtime argument: annotate it tl.constexpr"
            severity = Severity.WARNING
        annotated = f"{param.name}: {ctx.module.language_alias}.constexpr"
        if param.default_text is not None:
            annotated += f" = {param.default_text}"
        fix = replace_fix(f"Annotate `{param.name}` as tl.constexpr", param.span, annotated)
        yield finding(NOT_CONSTEXPR, ctx, param.span, message, fix=fix, severity=severity)


@kernel_check
def block_size_not_power_of_two(ctx: KernelContext) -> Iterator[Finding]:
    fixable = _all_accesses_masked(ctx)
    arange_params = {n for _, end in ctx.arange_sizes for n in bare_names(end)}
    for site, label in _size_sites(ctx):
        value = site.value
        if value <= 0 or is_power_of_two(value):
            continue
        rounded = next_power_of_two(value)
        shown, shown_rounded = number_text(value), number_text(rounded)
        fix = (
            replace_fix(f"Round {shown} up to {shown_rounded} (loads/stores are masked)", site.span, str(rounded))
            if fixable and rounded.bit_length() <= 64  # no kernel takes a larger block: no edit to offer
            else None
        )
        data = {"value": data_number(value), "suggested": data_number(rounded)}
        if label != "tl.arange size" and label not in arange_params:
            # it sizes only tl.zeros/tl.full: upstream Triton rejects the shape, triton-ascend accepts it
            message = f"{label} = {shown} sizes a tl.full/tl.zeros shape: upstream Triton needs a power of two"
            found = finding(NOT_POW2, ctx, site.span, message, fix=fix, data=data)
            yield dataclasses.replace(found, platforms=("cuda",))  # shown on CUDA files only
            continue
        message = f"{label} = {shown} is not a power of two (tl.arange needs one): use {shown_rounded} with a mask"
        yield finding(NOT_POW2, ctx, site.span, message, fix=fix, data=data)


@kernel_check
def block_size_tiny(ctx: KernelContext) -> Iterator[Finding]:
    # Only 1-D elementwise/reduction shapes: 2-D tiles and tl.dot kernels are judged by their product (TL110).
    if any(True for _ in ctx.calls_to(TL + "dot")):
        return
    sizes = ctx.block_size_params
    if len(sizes) > 1 or len(ctx.arange_sizes) > 1 and not sizes:
        return
    if ctx.has_broadcast:
        return
    sites = list(_size_sites(ctx))
    # Small candidates next to a big one in an autotune list are the autotuner's job, not a finding.
    big_candidate = any(s.origin == "autotune" and s.value >= _TINY_1D for s, _ in sites)
    for site, label in sites:
        if big_candidate and site.origin == "autotune":
            continue
        if 0 < site.value < _TINY_1D and is_power_of_two(site.value):
            message = f"{label} = {site.value}: each program handles only {site.value} elements; try 1024"
            yield finding(TINY, ctx, site.span, message, data={"value": site.value})


def _size_sites(ctx: KernelContext) -> Iterator[tuple[ValueSite, str]]:
    """Literal block sizes: `tl.arange` bounds written inline, and values given to block-size parameters."""
    for call, end in ctx.arange_sizes:
        start = call.args[0] if call.args else None
        if isinstance(end, ast.Constant) and isinstance(end.value, int) and not isinstance(end.value, bool):
            begin = start.value if isinstance(start, ast.Constant) and isinstance(start.value, int) else 0
            if end.value - begin <= 1:
                continue  # tl.arange(0, 1): a one-lane block to broadcast or store a scalar, never a tile
            yield ValueSite(end.value - begin, ctx.span(end), "literal"), "tl.arange size"
    for name in sorted(ctx.block_size_params):
        for site in ctx.value_sites(name):
            yield site, name


def _used_in_body(ctx: KernelContext, name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name for stmt in ctx.kernel.node.body for n in ctx.walk(stmt)
    )


def _all_accesses_masked(ctx: KernelContext) -> bool:
    accesses = list(ctx.calls_to(TL + "load", TL + "store"))
    return bool(accesses) and all(is_masked(ctx, call) for call in accesses)
