"""Transcendental functions written by hand (TL129): tanh from exponentials and a division, softplus as
`log(1 + exp(x))`, where a library function or a stable identity does the same work. A hand-written sigmoid is
not reported: `tl.sigmoid` is the same formula in Triton 3.x."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from . import references as ref
from .base import finding, kernel_check, short
from .context import KernelContext
from .context_names import TL

_EXP = {
    TL + "exp",
    TL + "math.exp",
    "triton.language.extra.cuda.libdevice.exp",
    "triton.language.extra.libdevice.exp",
}
_LOG = {TL + "log", TL + "math.log"}
LIBDEVICE = f"{ref.TRITON_DOCS}/python-api/triton.language.extra.cuda.html"

HAND_TRANSCENDENTAL = register(
    Rule(
        code="TL129",
        name="hand-written-transcendental",
        title="Transcendental written by hand from exp, divisions and clamps",
        level=Level.TRIAGE,
        severity=Severity.INFO,
        escalates_to=Severity.WARNING,  # a ratio of exponentials whose argument nothing bounds: NaN, not slow
        platforms=("cuda", "ascend"),
        rationale=(
            "Each `tl.exp` is a special-function-unit instruction (NVIDIA MUFU.EX2 after a multiply by log2(e); "
            "a vector exp on Ascend) and each fp32 `/` an IEEE division (`div.rn.f32`, about ten instructions). "
            "Writing tanh as `(exp(x) - exp(-x)) / (exp(x) + exp(-x))` costs two or more exponentials and a "
            "division per element and overflows to inf/inf = NaN for |x| > 44 (a warning where nothing bounds the "
            "argument: a wrong result, not only a slow one); the one-exponential form "
            "`1 - 2 / (exp(2x) + 1)` still pays the IEEE division. softplus as `log(1 + exp(x))` overflows for "
            "x > 88. In elementwise epilogues that are not memory-bound these instructions are the runtime.\n\n"
            "A hand-written sigmoid (`1 / (1 + exp(-x))`) is not reported: `tl.sigmoid` is that same formula in "
            "Triton 3.x, so the library call reads better but runs no faster.\n\n"
            "**Fix:** tanh: `libdevice.tanh(x)` (`triton.language.extra.libdevice`: approximate reciprocal, no "
            "overflow); softplus: `tl.where(x > 20.0, x, libdevice.log1p(tl.exp(x)))`; GELU: `libdevice.erf` or "
            "`libdevice.tanh` instead of a hand-written tanh."
        ),
        references=(LIBDEVICE,),
    )
)


@kernel_check
def hand_written_transcendental(ctx: KernelContext) -> Iterator[Finding]:
    reported: set[int] = set()
    for node in ctx.nodes:
        if id(node) in reported:
            continue
        kind = _classify(ctx, node)
        if kind is None:
            continue
        if kind == "softplus" and _guarded_by_where(ctx, node):
            continue  # `tl.where(x > t, x, log(1 + exp(x)))`: the overflowing branch is never selected
        reported.update(id(sub) for sub in ctx.walk(node))
        severity = None
        if kind == "tanh-ratio" and not (_guarded_by_where(ctx, node) or _clamped(ctx, node)):
            # both checks of public code judged it a wrong result first (NaN from x of about 10 in a GELU)
            kind, severity = "tanh-overflow", Severity.WARNING
        advice = {
            "tanh-ratio": "a hand-written tanh (exponentials and a division): use libdevice.tanh",
            "tanh": "a hand-written tanh (exponentials and a division): use libdevice.tanh",
            "tanh-overflow": "a ratio of exponentials (a hand-written tanh or sigmoid): past an exponent of about "
                             "88 both overflow to inf and the ratio is inf/inf = NaN, a wrong result where the "
                             "function is 1: use libdevice.tanh or tl.sigmoid",
            "softplus": "softplus as log(1 + exp(x)) overflows for x > 88: use tl.where(x > 20, x, ...) or log1p",
        }[kind]
        yield finding(
            HAND_TRANSCENDENTAL, ctx, node, f"`{short(ctx, node)}`: {advice}", severity=severity,
            data={"function": "tanh" if kind.startswith("tanh") else kind},
        )


def _classify(ctx: KernelContext, node: ast.AST) -> str | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        top, bottom = _exp_terms(ctx, node.left), _exp_terms(ctx, node.right)
        if not bottom:
            return None
        if top and _related(top + bottom):
            return "tanh-ratio"  # (e^x - e^-x) / (e^x + e^-x), (e^2x - 1) / (e^2x + 1)
        if not _one_plus(ctx, node.right):
            return None
        # `1 / (1 + e^-x)` and SiLU are not reported: tl.sigmoid is the same formula in Triton 3.x, so the
        # library call would read better but run no faster (judged on public code, see docs/precision.md).
        if isinstance(node.left, ast.Constant) and node.left.value != 1 and _combined_with_constant(ctx, node):
            return "tanh"  # 1 - 2 / (e^2x + 1), 2 / (1 + e^-2x) - 1
    if isinstance(node, ast.Call) and ctx.resolve(node.func) in _LOG and node.args:
        terms = _exp_terms(ctx, node.args[0])
        if terms and _one_plus(ctx, node.args[0]):
            return "softplus"
    return None


def _exp_terms(ctx: KernelContext, node: ast.AST, depth: int = 0) -> list[str] | None:
    """Arguments of the exponentials of a sum of exponentials and constants (`e^x + 1`, `e^x - e^-x`), following
    a local name to its exp call; None when `node` is anything else (so a normalizer such as `tl.sum(p)` or an
    accumulator is never mistaken for part of a hand-written function)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return []
    if isinstance(node, ast.Call) and ctx.resolve(node.func) in _EXP and node.args:
        return [ast.unparse(node.args[0])]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _exp_terms(ctx, node.operand, depth)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = _exp_terms(ctx, node.left, depth), _exp_terms(ctx, node.right, depth)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Name) and depth < 2:
        values = ctx.reaching(node.id, node)
        if len(values) == 1 and not ctx.load_call(values[0]):
            return _exp_terms(ctx, values[0], depth + 1)
    return None


def _related(args: list[str]) -> bool:
    """Several exponentials of the same argument or of an argument and its negation (x, -x, 2*x, -2*x), or one
    exponential of a doubled argument against a constant ((e^2x - 1) / (e^2x + 1))."""
    bare = {a.removeprefix("-").strip("()") for a in args}
    return len(bare) == 1 and len(args) >= 2


def _one_plus(ctx: KernelContext, node: ast.AST) -> bool:
    """`1 + e`, `e + 1`, `1.0 + e` (through one local name)."""
    if isinstance(node, ast.Name):
        values = ctx.reaching(node.id, node)
        return len(values) == 1 and _one_plus(ctx, values[0])
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return False
    return any(isinstance(side, ast.Constant) and side.value == 1 for side in (node.left, node.right))


def _combined_with_constant(ctx: KernelContext, node: ast.AST) -> bool:
    """`c / (1 + e)` inside `k - c / (1 + e)` or `c / (1 + e) - k`: the one-exponential tanh identity."""
    parent = ctx.parent(node)
    return (
        isinstance(parent, ast.BinOp)
        and isinstance(parent.op, (ast.Add, ast.Sub))
        and any(isinstance(side, ast.Constant) for side in (parent.left, parent.right))
    )


_CLAMPS = {TL + "minimum", TL + "maximum", TL + "clamp"}


def _clamped(ctx: KernelContext, node: ast.AST) -> bool:
    """Is an exponential's argument in `node` bounded first (`tl.exp(tl.minimum(x, 20))`, or through one local
    name set so)?"""
    names = [n for n in ast.walk(node) if isinstance(n, ast.Name)]
    reached = [v for n in names if len(vs := ctx.reaching(n.id, n)) == 1 for v in vs]  # `e = tl.exp(...)`
    for sub in (s for root in (node, *reached) for s in ast.walk(root)):
        if isinstance(sub, ast.Call) and ctx.resolve(sub.func) in _EXP and sub.args:
            arg = sub.args[0]
            if isinstance(arg, ast.Name):
                values = ctx.reaching(arg.id, arg)
                arg = values[0] if len(values) == 1 else arg
            if any(isinstance(n, ast.Call) and ctx.resolve(n.func) in _CLAMPS for n in ast.walk(arg)):
                return True
    return False


def _guarded_by_where(ctx: KernelContext, node: ast.AST) -> bool:
    """Is `node` a value branch of a `tl.where` (directly, or through a division or scaling of it)?"""
    child, parent = node, ctx.parent(node)
    for _ in range(4):
        if parent is None:
            return False
        if isinstance(parent, ast.Call) and ctx.resolve(parent.func) == TL + "where":
            return bool(parent.args) and child is not parent.args[0]
        child, parent = parent, ctx.parent(parent)
    return False
