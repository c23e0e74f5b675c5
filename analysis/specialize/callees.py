"""Argument types a kernel's jit helpers imply: a kernel that only offsets `Q` and passes it to
`_one_block(Q, ...)` says nothing of Q's type in its own body, but the helper's `tl.load(Q + offs)` does.

For each call of a jit function of the same module, the kernel arguments passed by name (positionally or by
keyword, possibly offset first: `Q += off_b * stride_qb`, `K_ptrs = K + offs`) take the type the helper's body implies for
the matching parameter (`specialization_infer`, through nested helpers up to MAX_DEPTH), with the helper and the
call line in the reason. Only arguments the kernel's own body gives no evidence about are answered here.
Helpers imported from other modules of the workspace count too (`imported_helpers`, given a reader).
Pure: AST in, types out.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from ..source.safe_eval import call_name
from .infer import BodyFacts, Inferred, infer_types

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
    facts = BodyFacts(fn, params)
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
        mine: dict[str, str] = {}
        for p, v in passed:  # an argument itself, or a local offset from it (`K_ptrs = K + offs`)
            bases = facts.choose_pointer(facts.base_params(v)) if isinstance(v, (ast.Name, ast.BinOp)) else []
            if bases and bases[0] in wanted and bases[0] not in out:
                mine[p] = bases[0]
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


def imported_helpers(
    tree: ast.Module | None, read: Callable[[str, int], str | None]
) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions a module imports by name from other modules (`from pkg.numerics import load_scale`), as
    `read(module, level)` finds their source (None: not found); a helper the kernel calls is one of them."""
    out: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    if tree is None:
        return out
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or not node.module and not node.level:
            continue
        text = read(node.module or "", node.level)
        if not text:
            continue
        try:
            defs = {
                f.name: f
                for f in ast.parse(text).body
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
        except SyntaxError:
            continue
        for alias in node.names:
            if alias.name in defs:
                out[alias.asname or alias.name] = defs[alias.name]
    return out
