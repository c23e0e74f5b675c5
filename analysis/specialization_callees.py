"""Argument types a kernel's jit helpers imply: a kernel that only offsets `Q` and passes it to
`_one_block(Q, ...)` says nothing of Q's type in its own body, but the helper's `tl.load(Q + offs)` does.

For each call of a jit function of the same module, the kernel arguments passed by name (positionally or by
keyword, possibly offset in place first: `Q += off_b * stride_qb`) take the type the helper's body implies for
the matching parameter (`specialization_infer`, through nested helpers up to MAX_DEPTH), with the helper and the
call line in the reason. Only arguments the kernel's own body gives no evidence about are answered here.
Pure: AST in, types out.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from .safe_eval import call_name
from .specialization_infer import Inferred, infer_types

MAX_DEPTH = 3


def callee_types(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    params: list[str],
    helpers: Mapping[str, ast.FunctionDef | ast.AsyncFunctionDef],
    depth: int = 0,
) -> dict[str, Inferred]:
    """Types of `params` of `fn` implied by the jit `helpers` (name -> def) it calls with them."""
    out: dict[str, Inferred] = {}
    if depth >= MAX_DEPTH:
        return out
    wanted = set(params)
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        helper = helpers.get(call_name(node.func))
        if helper is None or helper is fn:
            continue
        names = [a.arg for a in helper.args.args]
        passed = list(zip(names, node.args, strict=False)) + [
            (k.arg, k.value) for k in node.keywords if k.arg
        ]
        mine = {p: v.id for p, v in passed if isinstance(v, ast.Name) and v.id in wanted and v.id not in out}
        if not mine:
            continue
        theirs = infer_types(helper, names)
        nested = callee_types(helper, names, helpers, depth + 1)
        for param, arg in mine.items():
            found = theirs.get(param) or nested.get(param)
            if found is not None:
                why = f"{found.reason} in helper {helper.name} (passed as {param} at line {node.lineno})"
                out[arg] = Inferred(found.type, why)
    return out
