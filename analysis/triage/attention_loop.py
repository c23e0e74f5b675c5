"""Is a loop an attention step: scores against key blocks, an exponential and a running max (TL140, TL133)."""

from __future__ import annotations

import ast

from .context import KernelContext
from .context_names import TL

_EXPS = {TL + "exp", TL + "exp2", TL + "math.exp", TL + "math.exp2"}


def attention_step(ctx: KernelContext, loop: ast.For) -> bool:
    """Scores against a key block (tl.dot, or tl.sum of a product), an exponential and a running max, all in
    the loop, with loads in it (the key and value blocks)."""
    calls = [(c, ctx.resolve(c.func)) for c in ctx.walk(loop) if isinstance(c, ast.Call)]
    names = {n for _, n in calls}
    scores = TL + "dot" in names or any(
        n == TL + "sum" and c.args and isinstance(c.args[0], ast.BinOp) and isinstance(c.args[0].op, ast.Mult)
        for c, n in calls
    )
    running_max = any(
        n == TL + "maximum" and any(isinstance(a, ast.Name) and a.id in ctx.assigned_in(loop) for a in c.args)
        for c, n in calls
    )
    loads = sum(1 for c, _ in calls if ctx.load_call(c) is c)
    return scores and running_max and bool(names & _EXPS) and loads >= 2
