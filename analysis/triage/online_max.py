"""A pass over a row that only finds its running max, then a pass that reads the row again to sum exponentials
against that max (TL137): the two fuse into one pass in the online form (running max, rescaled sum)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, kernel_check
from .context import KernelContext
from .context_names import ATOMICS, TL
from .shapes import statement

MAX_THEN_REREAD = register(
    Rule(
        code="TL137",
        name="max-pass-then-reread",
        title="A pass only finds the row's max, a second pass reads the row again against it",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "A loop over a row whose only job is `m = tl.maximum(m, tl.max(x))`, followed by a loop over the same "
            "range that loads the row again to accumulate `exp(x - m)` (softmax denominators, sampling and "
            "top-p kernels, log-sum-exp), moves the whole row from global memory twice. The max is not needed "
            "before the sum: the online form keeps a running max and rescales the running sum whenever the max "
            "grows, `m_new = tl.maximum(m, tl.max(x)); s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new)); "
            "m = m_new`, so both statistics come out of one pass (one read of the row fewer; the rescale is "
            "one exp per block). Reported as a warning when both loops only read (the extra pass is in the code "
            "itself), as info when the second loop also writes.\n\n"
            "Not reported when the second loop uses the max for anything but the exponentials it sums (a store "
            "of `x - m`, a comparison): that pass needs the final max.\n\n"
            "**Fix:** drop the max loop; in the sum loop keep `m` and `s` together in the online form above."
        ),
        references=(ref.FUSED_SOFTMAX, "https://arxiv.org/abs/1805.02867"),
        lowers_to=Severity.INFO,
        lowering="when the second loop also writes (the extra read is then part of a pass that stays)",
    )
)

_EXPS = {TL + "exp", TL + "exp2", TL + "math.exp", TL + "math.exp2"}


@dataclass(frozen=True)
class MaxPass:
    """A max-only loop and the later loop that reads the same row again to sum exponentials against it."""

    root: str
    running_max: str
    max_call: ast.Call
    max_loop: ast.For
    sum_loop: ast.For
    reread: ast.Call
    read_only: bool


def max_passes(ctx: KernelContext) -> list[MaxPass]:
    """Every (max loop, re-reading sum loop) pair of the function, computed once (TL108 defers to these)."""
    hit = ctx.memo.get("online_max.passes")
    if hit is None:
        hit = list(_find(ctx))
        ctx.memo["online_max.passes"] = hit
    return hit  # type: ignore[no-any-return]


@kernel_check
def max_pass_then_reread(ctx: KernelContext) -> Iterator[Finding]:
    for p in max_passes(ctx):
        message = (
            f"the loop at line {p.max_loop.lineno} reads `{p.root}` only for its running max `{p.running_max}`, "
            f"and the loop at line {p.sum_loop.lineno} reads `{p.root}` again to sum exp(... - {p.running_max}): "
            f"fuse them in the online form (m_new = tl.maximum({p.running_max}, tl.max(x)); "
            f"s = s * tl.exp({p.running_max} - m_new) + tl.sum(tl.exp(x - m_new))), one read of the row fewer"
        )
        data = {
            "pointer": p.root, "running_max": p.running_max, "max_loop_line": p.max_loop.lineno,
            "sum_loop_line": p.sum_loop.lineno,
        }  # fmt: skip
        severity = Severity.WARNING if p.read_only else Severity.INFO
        yield finding(MAX_THEN_REREAD, ctx, p.max_call, message, severity=severity, data=data)


def _find(ctx: KernelContext) -> Iterator[MaxPass]:
    for call in ctx.calls_to(TL + "max"):
        loops = ctx.enclosing_loops(call)
        if not loops or not ctx.is_range_loop(loops[0]):
            continue
        loop = loops[0]
        running = _running_max(ctx, call, loop)
        if running is None or not _max_only(ctx, loop, running):
            continue
        roots = _rows_reduced(ctx, call, loop)
        for later in ctx.loops:
            if later.lineno <= (loop.end_lineno or loop.lineno) or ast.dump(later.iter) != ast.dump(loop.iter):
                continue
            if loop in ctx.enclosing_loops(later) or running in ctx.assigned_in(later):
                continue
            reread = next((c for c in _loads_in(ctx, later) if ctx.base_pointers(ctx.pointer_arg(c)) & roots), None)
            if reread is None or not _sums_exponentials_of(ctx, later, running):
                continue
            root = sorted(ctx.base_pointers(ctx.pointer_arg(reread)) & roots)[0]
            yield MaxPass(root, running, call, loop, later, reread, not _writes(ctx, later))
            break


def _running_max(ctx: KernelContext, call: ast.Call, loop: ast.For) -> str | None:
    """`m = tl.maximum(m, tl.max(x))`, or `r = tl.max(x)` then `m = tl.maximum(m, r)` in the same loop."""
    stmt = statement(ctx, call)
    target = _single_target(stmt)
    if target is None:
        return None
    if _is_max_combine(ctx, stmt.value, target):  # type: ignore[attr-defined]
        return target
    if stmt.value is call:  # type: ignore[attr-defined]
        for node in ctx.walk(loop):
            if isinstance(node, ast.Assign) and node is not stmt:
                outer = _single_target(node)
                if outer and target in ctx.names_of(node.value) and _is_max_combine(ctx, node.value, outer):
                    return outer
    return None


def _single_target(stmt: ast.AST) -> str | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def _is_max_combine(ctx: KernelContext, value: ast.AST, target: str) -> bool:
    if not isinstance(value, ast.Call) or len(value.args) != 2:
        return False
    name = ctx.resolve(value.func) or (value.func.id if isinstance(value.func, ast.Name) else None)
    return name in (TL + "maximum", "max") and any(
        isinstance(a, ast.Name) and a.id == target for a in value.args
    )


def _max_only(ctx: KernelContext, loop: ast.For, running: str) -> bool:
    """Inside the loop the running max is read only by its own update (no sum rescaled against it: then the
    loop is already the online form)."""
    for node in ctx.walk(loop):
        if isinstance(node, ast.Name) and node.id == running and isinstance(node.ctx, ast.Load):
            stmt = statement(ctx, node)
            if not (_single_target(stmt) == running and _is_max_combine(ctx, stmt.value, running)):  # type: ignore[attr-defined]
                return False
    return True


def _rows_reduced(ctx: KernelContext, call: ast.Call, loop: ast.For) -> set[str]:
    """Pointer roots of the loads of this loop whose values feed the reduction."""
    feeding = ctx.names_of(call)
    roots: set[str] = set()
    for load in _loads_in(ctx, loop):
        pointer = ctx.pointer_arg(load)
        if pointer is None:
            continue
        stmt = statement(ctx, load)
        target = _single_target(stmt)
        inline = any(sub is load for sub in ctx.walk(call))
        if inline or (target and (target in feeding or ctx.names_closure({target}) & feeding)):
            roots |= ctx.base_pointers(pointer)
    return roots


def _loads_in(ctx: KernelContext, loop: ast.For) -> list[ast.Call]:
    return [
        c for c in ctx.walk(loop)
        if isinstance(c, ast.Call) and ctx.load_call(c) is c and ctx.pointer_arg(c) is not None
    ]  # fmt: skip


def _sums_exponentials_of(ctx: KernelContext, loop: ast.For, running: str) -> bool:
    """Every read of `running` in the loop is inside an exp whose value is summed into an accumulator, and no
    store of the loop depends on it (a pass that writes with the final max cannot be merged)."""
    reads = [n for n in ctx.walk(loop) if isinstance(n, ast.Name) and n.id == running and isinstance(n.ctx, ast.Load)]
    if not reads:
        return False
    tainted = {running}
    for node in ctx.walk(loop):  # names computed in the loop from the running max, one level at a time
        target = _single_target(node)
        if target and ctx.names_of(node.value) & tainted:  # type: ignore[attr-defined]
            tainted.add(target)
    for sub in ctx.walk(loop):
        if isinstance(sub, ast.Call) and ctx.resolve(sub.func) in {TL + "store", *ATOMICS}:
            if set(n.id for a in sub.args[1:] for n in ast.walk(a) if isinstance(n, ast.Name)) & tainted:
                return False
    return all(_inside_summed_exp(ctx, read, loop) for read in reads)


def _inside_summed_exp(ctx: KernelContext, node: ast.AST, loop: ast.For) -> bool:
    current = ctx.parent(node)
    while current is not None and current is not loop:
        if isinstance(current, ast.Call) and ctx.resolve(current.func) in _EXPS:
            return _accumulated(ctx, current, loop)
        if isinstance(current, ast.stmt):
            return False
        current = ctx.parent(current)
    return False


def _accumulated(ctx: KernelContext, expr: ast.AST, loop: ast.For) -> bool:
    """The statement holding `expr` adds it to an accumulator (`s += ...`, `s = s + ...`), directly or through
    one local name (`e = tl.exp(...)`, then `s += tl.sum(e)`)."""
    stmt = statement(ctx, expr)
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
        return True
    target = _single_target(stmt)
    if target is None:
        return False
    if isinstance(stmt.value, ast.BinOp) and target in ctx.names_of(stmt.value):  # type: ignore[attr-defined]
        return True
    for node in ctx.walk(loop):
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and target in ctx.names_of(node.value):
            return True
        inner = _single_target(node)
        if inner and inner != target and target in ctx.names_of(node.value) and inner in ctx.names_of(node.value):  # type: ignore[attr-defined]
            return True
    return False


def _writes(ctx: KernelContext, loop: ast.For) -> bool:
    return any(
        isinstance(sub, ast.Call) and ctx.resolve(sub.func) in {TL + "store", *ATOMICS} for sub in ctx.walk(loop)
    )
