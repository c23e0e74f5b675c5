"""Threads against block elements (NVIDIA): more threads than elements (replicated lanes, TL126), too few
elements per thread for 128-bit accesses (TL127).

The block size and num_warps are read per launch: literals, the kernel's defaults, autotune configs, and values
the launch-site machinery resolves (a variable assigned before the launch, the launching function's argument
default, a constant expression). A size it cannot resolve is not guessed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from math import prod
from typing import Any

from ..core.findings import Finding, Level, Severity, Span
from ..core.rules import Rule, register
from ..source.safe_eval import UNKNOWN, evaluate
from ..specialize.launch import resolve
from . import references as ref
from .base import finding, kernel_check
from .context import KernelContext
from .context_names import TL
from .launch_facts import launches

DEFAULT_WARPS = 4  # Triton's default num_warps on NVIDIA
WARP = 32
VECTOR_BYTES = 16  # widest global access per thread (ld.global.v4.b32 / 128-bit)
ASSUMED_ELEMENT_BYTES = 4  # when no launch shows the dtype: fp32
SMALL_GRID = 32  # literal grids this small (a final reduction, a unit test) are not judged

REPLICATED = register(
    Rule(
        code="TL126",
        name="replicated-lanes",
        title="More threads than block elements: lanes hold copies",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda",),
        rationale=(
            "A program runs `num_warps * 32` threads. When the block has fewer elements than that, Triton's "
            "layout gives several threads the same element (replication): they load the same addresses, compute "
            "the same values, and the store is predicated to one of them. The program pays for all its warps "
            "(registers, scheduler slots, occupancy) while a fraction does distinct work.\n\n"
            "**Fix:** lower `num_warps` so that `num_warps * 32 <= BLOCK` (1 or 2 warps for blocks of 32-64), "
            "or give each program a larger block."
        ),
        references=(ref.VECTOR_ADD, f"{ref.TRITON_DOCS}/python-api/generated/triton.Config.html"),
    )
)

NARROW_ACCESS = register(
    Rule(
        code="TL127",
        name="accesses-narrower-than-128-bit",
        title="Too few elements per thread for 128-bit loads and stores",
        level=Level.TRIAGE,
        severity=Severity.INFO,
        platforms=("cuda",),
        rationale=(
            "NVIDIA GPUs move up to 16 bytes per thread per load instruction (`ld.global.v4`). Triton's blocked "
            "layout spreads a block over `num_warps * 32` threads; with fewer than 16 bytes per thread (4 fp32 "
            "or 8 fp16 elements) each thread issues narrower loads, so the program needs more instructions and "
            "keeps fewer bytes in flight per thread, which a memory-bound kernel needs to reach bandwidth.\n\n"
            "**Fix:** raise the block size or lower `num_warps` so that "
            "`BLOCK >= num_warps * 32 * 16 / element_size` (1024 fp32 elements at 4 warps)."
        ),
        references=(ref.VECTOR_ADD, ref.CUDA_COALESCING),
    )
)


@dataclass(frozen=True)
class LaunchShape:
    elements: int
    warps: int
    element_bytes: int | None  # of the widest tensor argument, when the launch shows dtypes
    span: Span  # where the value that decides it is written (launch, default or config)
    origin: str
    small_grid: bool = False  # the launch's grid is a literal of a few programs


@kernel_check
def threads_vs_elements(ctx: KernelContext) -> Iterator[Finding]:
    if ctx.kernel.is_helper or any(True for _ in ctx.calls_to(TL + "dot")):
        return  # dot tiles follow the MMA layout, not the blocked one
    if any(True for _ in ctx.calls_to(TL + "make_block_ptr", TL + "make_tensor_descriptor")):
        return
    seen: set[tuple[int, int, int, int]] = set()
    shapes = launch_shapes(ctx)
    # In an autotune list, small candidates next to one that fills the threads are the autotuner's choice.
    tuned_ok = any(s.origin == "autotune" and s.elements >= s.warps * WARP * 4 for s in shapes)
    for shape in shapes:
        if shape.small_grid or (tuned_ok and shape.origin == "autotune"):
            continue  # a handful of programs (a final reduction, a test): their lanes do not matter
        key = (shape.elements, shape.warps, shape.span.line, shape.span.col)
        if key in seen:
            continue
        seen.add(key)
        threads = shape.warps * WARP
        data = {
            "elements": shape.elements,
            "num_warps": shape.warps,
            "threads": threads,
            "origin": shape.origin,
        }
        if shape.elements < threads:
            message = (
                f"block of {shape.elements} elements on {shape.warps} warps ({threads} threads): "
                f"{threads // max(shape.elements, 1)}x replicated lanes; use num_warps="
                f"{max(1, shape.elements // WARP)} or a larger block"
            )
            yield finding(REPLICATED, ctx, shape.span, message, data=data)
            continue
        size = shape.element_bytes or ASSUMED_ELEMENT_BYTES
        per_thread = shape.elements // threads
        if per_thread * size < VECTOR_BYTES:
            assumed = "" if shape.element_bytes else " (assuming 4-byte elements)"
            message = (
                f"block of {shape.elements} elements on {threads} threads: {per_thread} element(s), "
                f"{per_thread * size} bytes per thread{assumed}, below one 128-bit access; "
                f"use BLOCK >= {threads * VECTOR_BYTES // size} or fewer warps"
            )
            yield finding(
                NARROW_ACCESS, ctx, shape.span, message, data={**data, "bytes_per_thread": per_thread * size}
            )


def launch_shapes(ctx: KernelContext) -> list[LaunchShape]:
    """(block elements, num_warps) of every launch whose sizes resolve, else of the defaults/configs."""
    memo = ctx.memo.get("lanes.shapes")
    if memo is not None:
        return memo
    out: list[LaunchShape] = []
    size_params = ctx.block_size_params | _arange_params(ctx)
    configs = ctx.kernel.autotune_configs
    if configs:
        for config, span in zip(configs, ctx.kernel.autotune.config_spans, strict=False):
            values = {k: v for k, v in (config.get("kwargs") or {}).items() if _is_int(v)}
            warps = config.get("num_warps", DEFAULT_WARPS)
            elements = tile_elements(ctx, {**_defaults(ctx), **values})
            if elements and _is_int(warps):
                out.append(LaunchShape(elements, int(warps), None, span, "autotune"))
        ctx.memo["lanes.shapes"] = out
        return out
    jit_warps = ctx.kernel.jit_kwargs.get("num_warps")
    for values, warps, element_bytes, span, small in _launch_values(ctx, size_params):
        warps = warps if warps is not None else jit_warps if _is_int(jit_warps) else DEFAULT_WARPS
        elements = tile_elements(ctx, {**_defaults(ctx), **values})
        if elements:
            out.append(LaunchShape(elements, int(warps), element_bytes, span, "launch", small))
    if not ctx.launches and not out:
        elements = tile_elements(ctx, _defaults(ctx))
        if elements and not (size_params - set(_defaults(ctx))):
            span = _default_span(ctx, size_params) or ctx.kernel.name_span
            warps = jit_warps if _is_int(jit_warps) else DEFAULT_WARPS
            out.append(LaunchShape(elements, int(warps), None, span, "default"))
    ctx.memo["lanes.shapes"] = out
    return out


def _launch_values(
    ctx: KernelContext, size_params: set[str]
) -> Iterator[tuple[dict[str, int], int | None, int | None, Span, bool]]:
    """Per launch of the kernel: resolved values of its size parameters, num_warps, widest element size and the
    span of the argument that sets the size (the launch itself when it comes from a default)."""
    if ctx.module.tree is None or not ctx.launches:
        return
    positional = [p.name for p in ctx.kernel.params if p.kind == "positional"]
    for launch in launches(ctx.module.tree, ctx.name):
        call = launch.call
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            continue
        passed: dict[str, ast.expr] = dict(zip(positional, call.args, strict=False))
        passed.update({k.arg: k.value for k in call.keywords if k.arg})
        values: dict[str, int] = {}
        span: Span | None = None
        for name in sorted(size_params):
            expr = passed.get(name)
            if expr is None:
                continue
            fact = resolve(expr, launch.scope)
            if fact.kind == "value" and _is_int(fact.value) and not _from_tests(ctx, fact.reason):
                values[name] = int(fact.value)
                span = span or ctx.span(expr)
        warps_expr = passed.get("num_warps")
        warps = None
        if warps_expr is not None:
            fact = resolve(warps_expr, launch.scope)
            if not (fact.kind == "value" and _is_int(fact.value)):
                continue  # num_warps chosen at run time: unknown
            warps = int(fact.value)
        sizes = []
        for name in positional:
            expr = passed.get(name)
            if expr is not None and name not in size_params:
                fact = resolve(expr, launch.scope)
                if fact.kind == "tensor" and fact.dtype:
                    sizes.append(_dtype_bytes(fact.dtype))
        element_bytes = max((s for s in sizes if s), default=None)
        yield values, warps, element_bytes, span or ctx.span(call), _small_grid(launch.grid)


_PASSED_AT = re.compile(r"passed as \w+ at line (\d+)")
_TEST_FUNCTION = re.compile(r"^_*(test|bench|benchmark|profile|demo|check)(_|$)", re.IGNORECASE)


def _from_tests(ctx: KernelContext, reason: str) -> bool:
    """Whether a launch value reaches the wrapper only from the file's own tests or benchmarks (`chunk_size = 16`
    in `test_...()`, or under `if __name__ == "__main__":`): a test size, not what production launches use."""
    lines = [int(m) for m in _PASSED_AT.findall(reason)]
    tree = ctx.module.tree
    if not lines or tree is None:
        return False
    for stmt in tree.body:
        start, end = stmt.lineno, getattr(stmt, "end_lineno", stmt.lineno) or stmt.lineno
        if not any(start <= line <= end for line in lines):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and _TEST_FUNCTION.search(stmt.name):
            return True
        if isinstance(stmt, ast.If) and "__name__" in ast.unparse(stmt.test):
            return True
    return False


def _small_grid(grid: ast.expr | None) -> bool:
    """A literal grid of at most SMALL_GRID programs (`[(1,)]`, `[1, 1, 1]`)."""
    if grid is None:
        return False
    value = evaluate(grid, {})
    dims = value if isinstance(value, tuple) else (value,)
    return all(_is_int(d) for d in dims) and prod(int(d) for d in dims) <= SMALL_GRID


def tile_elements(ctx: KernelContext, values: dict[str, Any]) -> int | None:
    """Elements of the kernel's largest block given parameter values: the longest tl.arange in a 1-D kernel, the
    product of the longest arange on each broadcast axis in a 2-D one. None when a size does not resolve."""
    sizes: dict[int, int] = {}
    for call, end in ctx.arange_sizes:
        start = call.args[0] if call.args else ast.Constant(0)
        hi, lo = evaluate(end, values), evaluate(start, values)
        if not _is_int(hi) or not _is_int(lo):
            return None
        sizes[id(call)] = hi - lo
    if not sizes:
        return None
    if not ctx.has_broadcast:
        return max(sizes.values())
    axes: dict[tuple[int, int], int] = {}
    for node in ctx.nodes:
        if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple)):
            continue
        elts = node.slice.elts
        lanes = [i for i, e in enumerate(elts) if isinstance(e, ast.Slice)]
        if len(lanes) != 1 or not all(isinstance(e, ast.Slice) or _is_none(e) for e in elts):
            continue
        size = _feeding_size(ctx, node.value, sizes)
        if size:
            key = (len(elts), lanes[0])
            axes[key] = max(axes.get(key, 0), size)
    if not axes:
        return None
    rank = max(r for r, _ in axes)
    dims = [size for (r, _), size in axes.items() if r == rank]
    return prod(dims) if len(dims) == rank else None


def _feeding_size(ctx: KernelContext, node: ast.AST, sizes: dict[int, int]) -> int | None:
    """The size of the tl.arange an index expression is built from (the largest if several)."""
    found = [sizes[id(c)] for c in ctx.walk(node) if id(c) in sizes]
    names = ctx.names_of(node)
    for call, _ in ctx.arange_sizes:
        target = _assigned_name(ctx, call)
        if target and (target in names or ctx.names_closure({target}) & names):
            found.append(sizes[id(call)])
    return max(found) if found else None


def _assigned_name(ctx: KernelContext, call: ast.Call) -> str | None:
    node: ast.AST | None = call
    while node is not None and not isinstance(node, ast.stmt):
        node = ctx.parent(node)
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def _arange_params(ctx: KernelContext) -> set[str]:
    return {n for _, end in ctx.arange_sizes for n in ctx.names_of(end) if n in ctx.params}


def _defaults(ctx: KernelContext) -> dict[str, int]:
    return {p.name: int(p.default) for p in ctx.kernel.params if p.has_default and _is_int(p.default)}


def _default_span(ctx: KernelContext, names: set[str]) -> Span | None:
    for p in ctx.kernel.params:
        if p.name in names and p.default_span is not None:
            return p.default_span
    return None


def _dtype_bytes(dtype: str) -> int | None:
    digits = "".join(ch for ch in dtype if ch.isdigit())
    if dtype.startswith("fp8"):
        return 1
    return int(digits) // 8 if digits and int(digits) >= 8 else None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value is not UNKNOWN


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
