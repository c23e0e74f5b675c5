"""Transcendental functions written by hand (TL129): tanh from several exponentials, sigmoid and SiLU as
`1 / (1 + exp(-x))`, softplus as `log(1 + exp(x))`, where a library function, one exponential or a stable identity
does the same work."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..findings import Finding, Level, Severity
from ..rules import Rule, register
from . import references as ref
from .base import finding, kernel_check, short
from .context import TL, KernelContext

_EXP = {
    TL + "exp",
    TL + "math.exp",
    "triton.language.extra.cuda.libdevice.exp",
    "triton.language.extra.libdevice.exp",
}
_LOG = {TL + "log", TL + "math.log"}
_REDUCTIONS = {TL + "sum", TL + "max", TL + "min", TL + "reduce"}
LIBDEVICE = f"{ref.TRITON_DOCS}/python-api/triton.language.extra.cuda.html"

HAND_TRANSCENDENTAL = register(
    Rule(
        code="TL129",
        name="hand-written-transcendental",
        title="Transcendental written by hand from exp, divisions and clamps",
        level=Level.TRIAGE,
        severity=Severity.INFO,
        platforms=("cuda", "ascend"),
        rationale=(
            "Each `tl.exp` is a special-function-unit instruction (NVIDIA MUFU.EX2 after a multiply by log2(e); "
            "a vector exp on Ascend) and each fp32 `/` an IEEE division of about ten instructions. Writing tanh "
            "as `(exp(x) - exp(-x)) / (exp(x) + exp(-x))` costs two or more exponentials and a division per "
            "element, and overflows to inf/inf = NaN for |x| > 44; softplus as `log(1 + exp(x))` overflows for "
            "x > 88. In elementwise epilogues that are not memory-bound these instructions are the runtime.\n\n"
            "**Fix:** tanh: `libdevice.tanh(x)` (`triton.language.extra.libdevice`) or the one-exponential "
            "identity `2 * tl.sigmoid(2 * x) - 1`; sigmoid/SiLU: `tl.sigmoid(x)` (same formula, one place to "
            "make it fast, e.g. `tl.exp2(-x * 1.4426950408889634)` and `tl.fdiv` for an approximate division); "
            "softplus: `tl.where(x > 20.0, x, tl.log(1 + tl.exp(x)))` or `libdevice.log1p(tl.exp(x))` below the "
            "threshold; GELU: `libdevice.erf` / `libdevice.tanh` instead of a hand-written tanh."
        ),
        references=(LIBDEVICE, f"{ref.TRITON_DOCS}/python-api/generated/triton.language.sigmoid.html"),
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
        reported.update(id(sub) for sub in ctx.walk(node))
        advice = {
            "tanh": "tanh from several exponentials and a division: use libdevice.tanh or 2*tl.sigmoid(2*x)-1",
            "sigmoid": "a hand-written sigmoid: use tl.sigmoid (and x * tl.sigmoid(x) for SiLU)",
            "softplus": "softplus as log(1 + exp(x)) overflows for x > 88: use tl.where(x > 20, x, ...) or log1p",
        }[kind]
        yield finding(
            HAND_TRANSCENDENTAL, ctx, node, f"`{short(ctx, node)}`: {advice}", data={"function": kind}
        )


def _classify(ctx: KernelContext, node: ast.AST) -> str | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        if any(ctx.resolve(c.func) in _REDUCTIONS for c in ctx.walk(node.right) if isinstance(c, ast.Call)):
            return None  # softmax-like normalization, not a transcendental
        top, bottom = _exp_args(ctx, node.left), _exp_args(ctx, node.right)
        if top and bottom and _related(top + bottom):
            return "tanh"
        if bottom and _one_plus(ctx, node.right) and _unit_numerator(ctx, node.left, bottom):
            return "sigmoid"
    if isinstance(node, ast.Call) and ctx.resolve(node.func) in _LOG and node.args:
        if _one_plus(ctx, node.args[0]) and _exp_args(ctx, node.args[0]):
            return "softplus"
    return None


def _exp_args(ctx: KernelContext, node: ast.AST, depth: int = 0) -> list[str]:
    """Canonical text of the arguments of exp calls in `node`, following local names one assignment deep."""
    out: list[str] = []
    for sub in ctx.walk(node):
        if isinstance(sub, ast.Call) and ctx.resolve(sub.func) in _EXP and sub.args:
            out.append(ast.unparse(sub.args[0]))
        elif isinstance(sub, ast.Name) and depth < 2:
            for value in ctx.reaching(sub.id, sub):
                if isinstance(value, ast.AST) and not ctx.load_call(value):
                    out.extend(_exp_args(ctx, value, depth + 1))
    return out


def _related(args: list[str]) -> bool:
    """Several exponentials of the same argument or of an argument and its negation (x, -x, 2*x, -2*x)."""
    if len(args) < 2:
        return False
    bare = {a.removeprefix("-").strip("()") for a in args}
    return len(bare) == 1


def _one_plus(ctx: KernelContext, node: ast.AST) -> bool:
    """`1 + e`, `e + 1`, `1.0 + e` (through one local name)."""
    if isinstance(node, ast.Name):
        values = ctx.reaching(node.id, node)
        return len(values) == 1 and _one_plus(ctx, values[0])
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return False
    return any(isinstance(side, ast.Constant) and side.value == 1 for side in (node.left, node.right))


def _unit_numerator(ctx: KernelContext, node: ast.AST, exps: list[str]) -> bool:
    """`1 / (1 + exp(-x))` (sigmoid) or `x / (1 + exp(-x))` (SiLU); not `2 / (1 + exp(-2x))` (a tanh identity)."""
    if isinstance(node, ast.Constant):
        return node.value == 1
    text = ast.unparse(node)
    return any(a.removeprefix("-").strip("()") == text for a in exps)
