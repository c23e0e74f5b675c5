"""Leftovers that cost time on every launch: fp64 arithmetic and device-side printing."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import PurePath

from ..core.findings import Finding, Fix, Level, Severity, Span, TextEdit
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, kernel_check, short
from .context import KernelContext
from .context_names import TL
from .shapes import rank

FP64 = register(
    Rule(
        code="TL122",
        name="fp64-in-kernel",
        title="float64 arithmetic in a kernel",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "Consumer and inference NVIDIA GPUs run fp64 at 1/32-1/64 of the fp32 rate (only A100/H100-class "
            "parts have fast fp64), and Ascend vector and cube units have no fp64 support at all in "
            "triton-ascend. A stray `.to(tl.float64)` or `dtype=tl.float64` usually comes from a reference "
            "implementation and makes the kernel compute-bound or fail to compile on Ascend.\n\n**Fix:** "
            "accumulate in float32 (`tl.float32`), which is what the Triton tutorials do for reductions."
        ),
        references=(ref.CUDA_ARITHMETIC, ref.ASCEND_VECTOR_OPS, ref.LAYER_NORM),
        lowers_to=Severity.INFO,
        lowering=(
            "where the file's host code makes float64 tensors (`torch.float64`, `torch.double`, `.double()`): the "
            "data is float64 by the caller's choice (a solver that needs the precision), so the kernel computing "
            "in its type may be intended; the cost stays worth knowing"
        ),
    )
)

DEVICE_PRINT = register(
    Rule(
        code="TL123",
        name="device-print-in-kernel",
        title="Device-side print left in the kernel",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "`tl.device_print` (and `print` inside a jit function, which Triton turns into one) formats and "
            "copies values from every program through a host-visible buffer on every launch. It serializes the "
            "kernel and adds large overhead, and keeps values alive that the compiler would otherwise drop.\n\n"
            "**Fix:** remove it after debugging, guard it with a `DEBUG: tl.constexpr` flag, or use "
            "`tl.static_print` for compile-time values (free at run time). The quick fix deletes a print that "
            "stands on its own lines."
        ),
        references=(ref.DEVICE_PRINT,),
        has_fix=True,
        lowers_to=Severity.INFO,
        lowering=(
            "in a test file (a `test`/`tests` folder, `test_*.py`, `*_test.py`): a test or compiler smoke test "
            "may exist to print, and its kernel is not a hot path; the cost is certain only where the kernel ships"
        ),
    )
)


@kernel_check
def fp64_in_kernel(ctx: KernelContext) -> Iterator[Finding]:
    for node in ctx.nodes:
        if isinstance(node, ast.Attribute) and node.attr == "float64" and ctx.resolve(node) == TL + "float64":
            if _opt_in(ctx, node):
                continue  # `if internal_dtype == "f64":` / `if USE_FP64:`: float64 chosen per launch by the caller
            if _scalar_cast(ctx, node):
                continue  # `tl.max(x).to(tl.float64)`: one float64 value per program (a scale), not a block
            if _host_float64(ctx):
                yield finding(FP64, ctx, node, f"`{short(ctx, node)}` computes in float64, like the float64 "
                              "tensors this file's host code makes: intended if the algorithm needs the precision; "
                              "otherwise tl.float32 is many times faster", severity=Severity.INFO)
                continue
            yield finding(FP64, ctx, node, f"`{short(ctx, node)}` computes in float64: use tl.float32")


def _host_float64(ctx: KernelContext) -> bool:
    """Whether code of the file outside every jit function makes float64 tensors (`torch.float64`,
    `torch.double`, `.double()`): then float64 is the data's type, chosen by the caller."""
    # once per kernel (its context's memo; the module's memo may be shared by an unchanged chunk of another text),
    # and only where TL122 would fire. The triage cache keys count these words (__init__._function_keys).
    if "host_float64" not in ctx.memo:
        module = ctx.module
        tree = module.tree
        torch = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
                 if a.name == "torch"} if tree is not None else set()
        inside = [(k.span.line, k.span.end_line) for k in module.kernels]
        ctx.memo["host_float64"] = tree is not None and any(
            _makes_float64(torch, node) and not any(start <= node.lineno <= end for start, end in inside)
            for node in ast.walk(tree))
    return bool(ctx.memo["host_float64"])


def _makes_float64(torch: set[str], node: ast.AST) -> bool:
    """`torch.float64` / `torch.double` (torch under any alias) or a `.double()` call."""
    if isinstance(node, ast.Attribute) and node.attr in ("float64", "double"):
        return isinstance(node.value, ast.Name) and node.value.id in torch
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "double"
            and not node.args and not node.keywords)


def _scalar_cast(ctx: KernelContext, node: ast.AST) -> bool:
    """`name = value.to(tl.float64)` on a scalar (a full reduction's result) whose every use is cast back
    (`(FP8_MAX / name).to(tl.float32)`): one float64 operation per program, and no block becomes float64."""
    call = ctx.parent(node)
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "to"):
        return False
    if not (call.args and call.args[0] is node and rank(ctx, call.func.value) == 0):
        return False
    stmt = ctx.parent(call)
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    name = stmt.targets[0].id
    uses = [n for n in ctx.nodes if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return bool(uses) and all(_cast_back(ctx, use) for use in uses)


def _cast_back(ctx: KernelContext, use: ast.AST) -> bool:
    """An enclosing `.to(dtype)` of the same statement casts the value to a type other than float64."""
    node, parent = use, ctx.parent(use)
    while parent is not None and not isinstance(parent, ast.stmt):
        if (
            isinstance(parent, ast.Attribute) and parent.attr == "to" and parent.value is node
        ):
            outer = ctx.parent(parent)
            if isinstance(outer, ast.Call) and outer.args and ctx.resolve(outer.args[0]) != TL + "float64":
                return True
        node, parent = parent, ctx.parent(parent)
    return False


def _opt_in(ctx: KernelContext, node: ast.AST) -> bool:
    """Whether `node` sits in the body of an `if` (or `elif`) whose test reads only constexpr parameters: a mode
    the caller selects at compile time, not an accident."""
    constexpr = {name for name, p in ctx.params.items() if p.is_constexpr}
    child, parent = node, ctx.parent(node)
    while parent is not None and parent is not ctx.kernel.node:
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
            names = ctx.names_of(parent.test)
            if names and names <= constexpr:
                return True
        child, parent = parent, ctx.parent(parent)
    return False


@kernel_check
def device_print(ctx: KernelContext) -> Iterator[Finding]:
    for node in ctx.nodes:
        if not isinstance(node, ast.Call):
            continue
        if ctx.resolve(node.func) == TL + "device_print" or (
            isinstance(node.func, ast.Name) and node.func.id == "print" and "print" not in ctx.module.aliases
        ):
            if _single_program(ctx, node):
                continue  # guarded by `if tl.program_id(0) == 0 ...`: one program prints, a debugging aid
            message = f"`{short(ctx, node)}` prints from every program on each launch"
            severity = None
            if _test_file(ctx.path):
                message += " (a test file: remove it only if this kernel is also timed or shipped)"
                severity = Severity.INFO
            yield finding(DEVICE_PRINT, ctx, node, message, fix=_removal(ctx, node), severity=severity)


def _test_file(path: str) -> bool:
    """A file of a test suite by the conventions pytest and unittest discover: a `test`/`tests`/`testing` folder,
    or a file named `test_*.py` / `*_test.py`."""
    parts = PurePath(path.replace("\\", "/")).parts
    name = parts[-1] if parts else ""
    return (
        any(part in ("test", "tests", "testing") for part in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
    )


def _removal(ctx: KernelContext, call: ast.Call) -> Fix | None:
    """Delete the print when it is a statement of its own on whole lines and not the only one in its block:
    printing has no effect on what the kernel computes, so removing it is safe."""
    statement = ctx.parent(call)
    if not isinstance(statement, ast.Expr):
        return None
    block = ctx.parent(statement)
    siblings = next(
        (
            getattr(block, f)
            for f in ("body", "orelse", "finalbody")
            if statement in (getattr(block, f, None) or [])
        ),
        None,
    )
    if not siblings or len(siblings) < 2:
        return None
    span = ctx.span(statement)
    before = ctx.module.line_text(span.line)[: span.col]
    after = ctx.module.line_text(span.end_line)[span.end_col :]
    if before.strip() or (after.strip() and not after.strip().startswith("#")):
        return None
    whole_lines = Span(span.line, 0, span.end_line + 1, 0)
    return Fix(title="Remove the device print", edits=(TextEdit(span=whole_lines, new_text=""),))


def _single_program(ctx: KernelContext, node: ast.AST) -> bool:
    """Whether `node` runs under an `if` whose test compares a program id for equality."""
    parent = ctx.parent(node)
    while parent is not None:
        if isinstance(parent, ast.If):
            for cmp in ctx.walk(parent.test):
                if isinstance(cmp, ast.Compare) and any(isinstance(op, ast.Eq) for op in cmp.ops):
                    sides = [cmp.left, *cmp.comparators]
                    if any(
                        (isinstance(n, ast.Call) and ctx.resolve(n.func) == TL + "program_id")
                        or (isinstance(n, ast.Name) and n.id in ctx.program_id_names)
                        for side in sides
                        for n in ctx.walk(side)
                    ):
                        return True
        parent = ctx.parent(parent)
    return False
