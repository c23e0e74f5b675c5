"""Plumbing shared by the triage rule modules: check registration and finding construction."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from ..core.findings import Evidence, Finding, Fix, Severity, Span, TextEdit
from ..core.rules import Rule, register_check
from .context import KernelContext
from .context_names import TL

KernelCheck = Callable[[KernelContext], Iterable[Finding]]

TRIAGE = "triage"  # the rules.register_check family run on every jit function of a file


def kernel_check(fn: KernelCheck) -> KernelCheck:
    """Register a triage check. The rules it emits are the module's rules its body names (`finding(RULE, ...)`),
    so `Rule.checks` lists it without a second declaration."""
    emits = [value for name in fn.__code__.co_names if isinstance(value := fn.__globals__.get(name), Rule)]
    return register_check(TRIAGE, *emits)(fn)


def finding(
    rule: Rule,
    ctx: KernelContext,
    where: ast.AST | Span,
    message: str,
    *,
    fix: Fix | None = None,
    severity: Severity | None = None,
    evidence: str | None = None,
    gain: str | None = None,
    data: dict[str, object] | None = None,
) -> Finding:
    """A finding of `rule` in `ctx`'s function, at a node or span, with the AST evidence that triggered it."""
    span = where if isinstance(where, Span) else ctx.span(where)
    excerpt = ctx.text(where) if isinstance(where, ast.AST) else _span_text(ctx, span)
    return rule.finding(
        message,
        span,
        kernel=ctx.name,
        severity=severity,
        evidence=(Evidence(kind="ast", summary=evidence or rule.title, excerpt=excerpt[:400]),),
        fix=fix,
        gain=gain,
        data={"function_kind": "helper" if ctx.kernel.is_helper else "kernel", **(data or {})},
    )


def replace_fix(title: str, span: Span, new_text: str) -> Fix:
    return Fix(title=title, edits=(TextEdit(span=span, new_text=new_text),))


def short(ctx: KernelContext, node: ast.AST, limit: int = 48) -> str:
    """Source text of a node on one line, shortened for messages."""
    text = " ".join(ctx.text(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_masked(ctx: KernelContext, call: ast.Call) -> bool:
    """Whether a tl.load / tl.store guards out-of-bounds lanes (mask or boundary_check)."""
    name = ctx.resolve(call.func)
    keywords = {kw.arg for kw in call.keywords}
    if keywords & {"mask", "boundary_check"}:
        return True
    needed = 2 if name == TL + "load" else 3
    return len(call.args) >= needed


def through_block_pointer(ctx: KernelContext, call: ast.Call) -> bool:
    """A load/store whose pointer is a name set from tl.make_block_ptr / tl.advance: bounded by the block's shape,
    not by a mask."""
    first = call.args[0] if call.args else None
    return isinstance(first, ast.Name) and any(
        isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == first.id for t in n.targets)
        and isinstance(n.value, ast.Call) and ctx.resolve(n.value.func) in (TL + "make_block_ptr", TL + "advance")
        for n in ctx.nodes)


def header_span(ctx: KernelContext, loop: ast.For) -> Span:
    """`for i in range(...)` without the body."""
    start = ctx.span(loop)
    end = ctx.span(loop.iter)
    return Span(start.line, start.col, end.end_line, end.end_col)


def is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def next_power_of_two(value: int) -> int:
    return 1 if value <= 1 else 1 << (value - 1).bit_length()


def _span_text(ctx: KernelContext, span: Span) -> str:
    if span.line != span.end_line:
        return ctx.module.line_text(span.line)[span.col :]
    return ctx.module.line_text(span.line)[span.col : span.end_col]
