"""Values a kernel computes and then drops: a result never assigned (TL141) and a bounds mask never applied (TL142).

Triton tensors are immutable: `acc.to(tl.float16)` or `tl.where(m, x, 0.0)` on a line of its own changes nothing,
and the code after it uses the old value. A mask built from a comparison against a bound (`b_mask = offs < N`) and
never read usually means the load or store it was written for runs unmasked. Both are correctness bugs more often
than leftovers, so each is a warning; a mask is flagged only where an access moves along the indices it bounds and
no mask of that access reads them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, kernel_check, short, through_block_pointer
from .context import KernelContext
from .context_names import TL
from .shapes import rank

DISCARDED = register(
    Rule(
        code="TL141",
        name="discarded-result",
        title="A computed value is thrown away",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "Triton tensors are immutable values: `x.to(tl.float16)`, `tl.where(mask, x, 0.0)`, `tl.dot(a, b, acc)` "
            "or `acc * scale` written as a statement of its own computes a new value and drops it, and the code "
            "after it keeps using the old one (the cast, the masking or the update never happens). The compiler "
            "removes the dead computation without a word.\n\n**Fix:** assign the result (`acc = acc.to(tl.float16)`)"
            " or delete the line."
        ),
        references=(ref.DOT,),
    )
)

UNUSED_MASK = register(
    Rule(
        code="TL142",
        name="unused-bounds-mask",
        title="A bounds mask is built and never applied",
        level=Level.TRIAGE,
        severity=Severity.WARNING,
        platforms=("cuda", "ascend"),
        rationale=(
            "A comparison of a block of indices against a bound (`b_mask = offs_k[:, None] < K`) that no load, "
            "store, `tl.where` or other expression reads is usually the mask of an access that was written without "
            "it: that access reads or writes past the tensor's end whenever the size is not a multiple of the "
            "block (garbage in the result, or a fault). Reported only where an access moves along the indices it "
            "bounds with no mask on them.\n\n**Fix:** pass it (`tl.load(ptrs, mask=b_mask, other=0.0)`), or delete it if every size is "
            "a multiple of the block."
        ),
        references=(ref.VECTOR_ADD,),
    )
)

# tl functions whose only result is their value. Anything else (tl.store, atomics, barriers, asserts, hints, and
# every private or experimental API such as a descriptor store) may act on memory or the compiler: never flagged.
_PURE = frozenset({
    "abs", "advance", "arange", "argmax", "argmin", "associative_scan", "broadcast", "broadcast_to", "cast", "cat",
    "cdiv", "ceil", "clamp", "cos", "cumprod", "cumsum", "div_rn", "dot", "erf", "exp", "exp2", "expand_dims",
    "fdiv", "flip", "floor", "fma", "full", "gather", "histogram", "interleave", "join", "log", "log2",
    "make_block_ptr", "max", "maximum", "min", "minimum", "num_programs", "permute", "program_id", "rand", "randint",
    "randn", "ravel", "reduce", "reshape", "rsqrt", "sigmoid", "sin", "softmax", "sort", "split", "sqrt", "sqrt_rn",
    "sum", "trans", "umulhi", "view", "where", "xor_sum", "zeros", "zeros_like",
})


@kernel_check
def discarded_results(ctx: KernelContext) -> Iterator[Finding]:
    for node in ctx.nodes:
        if not isinstance(node, ast.Expr) or not _pure(ctx, node.value):
            continue
        yield finding(DISCARDED, ctx, node, f"the value of `{short(ctx, node.value)}` is computed and dropped "
                      "(Triton tensors are immutable): assign it if it was meant to change a value (the code after "
                      "it uses the old one), else delete the line")


def _pure(ctx: KernelContext, value: ast.expr) -> bool:
    """A cast, a tl function without effects, or arithmetic: its only result is its value."""
    if isinstance(value, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp)):
        return True
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Attribute) and value.func.attr == "to" and len(value.args) >= 1:
        return True
    name = ctx.resolve(value.func) or ""
    if not name.startswith(TL):
        return False
    return name[len(TL):] in _PURE


@kernel_check
def unused_masks(ctx: KernelContext) -> Iterator[Finding]:
    read = {n.id for n in ctx.nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    accesses = [n for n in ctx.nodes if isinstance(n, ast.Call) and ctx.resolve(n.func) in (TL + "load", TL + "store")
                and n.args and not through_block_pointer(ctx, n)]
    for node in ctx.nodes:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if name in read:
            continue
        indices = _bounded_indices(ctx, node.value)
        if not indices:
            continue
        unguarded = [a for a in accesses if ctx.derived_from(a.args[0], indices)
                     and not (_mask_of(ctx, a) is not None and ctx.derived_from(_mask_of(ctx, a), indices))]
        if not unguarded:
            continue  # every access along these indices is masked by them some other way: a leftover
        lines = ", ".join(str(a.lineno) for a in unguarded[:3])
        yield finding(UNUSED_MASK, ctx, node, f"`{name}` bounds `{', '.join(sorted(indices))}` and nothing reads "
                      f"it, while the access(es) on line(s) {lines} move along those indices with no mask on them: "
                      "past the tensor's end they read or write out of bounds unless every size is a multiple of the "
                      "block")


def _bounded_indices(ctx: KernelContext, value: ast.expr) -> set[str]:
    """The names of the block operand(s) a mask compares with a bound (`offs < N`, `(rows < M)[:, None]`, `&` of
    such); empty when the value is no such mask."""
    if isinstance(value, ast.Subscript):
        return _bounded_indices(ctx, value.value)
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.BitAnd, ast.BitOr)):
        return _bounded_indices(ctx, value.left) | _bounded_indices(ctx, value.right)
    if not (isinstance(value, ast.Compare) and len(value.ops) == 1 and
            isinstance(value.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE))):
        return set()
    sides = [value.left, value.comparators[0]]
    blocks = [s for s in sides if (rank(ctx, s) or 0) >= 1]
    return set().union(*(ctx.names_of(s) for s in blocks)) if len(blocks) == 1 else set()


def _mask_of(ctx: KernelContext, call: ast.Call) -> ast.expr | None:
    kw = next((k.value for k in call.keywords if k.arg == "mask"), None)
    if kw is not None:
        return kw
    position = 1 if ctx.resolve(call.func) == TL + "load" else 2
    return call.args[position] if len(call.args) > position else None
