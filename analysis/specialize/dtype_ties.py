"""Launch arguments the wrapper made with another argument's dtype: `o = torch.empty_like(q)` then
`kernel[grid](q, ..., o)`. When neither dtype is visible, each pointer's element type would be guessed on its
own (Q bf16 from the body's casts, O fp32 by default), a pair no launch can produce; tied, the output takes
whatever the input is taken to be. Pure: AST in, names out.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence

from .scope import Scope
from .torch_spellings import LIKE_FACTORIES, NEW_METHODS, SAME_DTYPE_METHODS, SAME_LAYOUT_METHODS

_KEEPS_DTYPE = frozenset(SAME_DTYPE_METHODS) | frozenset(SAME_LAYOUT_METHODS)
MAX_HOPS = 8
MADE_LIKE = "made like "  # provenance marker: "made like Q: its element type (...)"


def made_like(param: str) -> str:
    return f"{MADE_LIKE}{param}"


def tied_pointers(provenance: Mapping[str, str], changed: Sequence[str]) -> list[str]:
    """The arguments made like one of `changed` (their provenance says so): a retry that changes a guessed
    element type changes theirs with it."""
    marks = tuple(f"{made_like(a)}:" for a in changed)
    return [b for b, why in provenance.items() if b not in changed and any(m in why for m in marks)]


def _root(expr: ast.expr, scope: Scope, hops: int = 0) -> str | None:
    """A name for the tensor `expr` holds, through assignments and dtype-keeping methods (`q.contiguous()`)."""
    if hops > MAX_HOPS:
        return None
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _KEEPS_DTYPE:
        return _root(expr.func.value, scope, hops + 1)
    if isinstance(expr, ast.Name):
        found = scope.lookup(expr.id, prior=getattr(expr, "prior", False))
        if found is None or found[0] == "param":
            return expr.id
        bound = found[1]
        if isinstance(bound, ast.Call) and isinstance(bound.func, ast.Attribute) and bound.func.attr in _KEEPS_DTYPE:
            return _root(bound.func.value, scope, hops + 1) or expr.id
        if isinstance(bound, ast.Name):
            return _root(bound, scope, hops + 1) or expr.id
        return expr.id
    return None


def _made_like(expr: ast.expr, scope: Scope, hops: int = 0) -> str | None:
    """The root of the tensor whose dtype `expr` was made with (`empty_like(q)`, `q.new_empty(n)`), no dtype=."""
    if hops > MAX_HOPS:
        return None
    if isinstance(expr, ast.Name):
        found = scope.lookup(expr.id, prior=getattr(expr, "prior", False))
        return _made_like(found[1], scope, hops + 1) if found is not None and found[0] == "expr" else None
    if not isinstance(expr, ast.Call) or any(kw.arg == "dtype" for kw in expr.keywords):
        return None
    func = expr.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in LIKE_FACTORIES and expr.args and (isinstance(func, ast.Name) or _is_torch(func)):
        return _root(expr.args[0], scope, hops + 1)
    if isinstance(func, ast.Attribute) and name in NEW_METHODS:
        return _root(func.value, scope, hops + 1)
    if isinstance(func, ast.Attribute) and name in _KEEPS_DTYPE:
        return _made_like(func.value, scope, hops + 1)
    return None


def _is_torch(func: ast.expr) -> bool:
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "torch"


def dtype_ties(passed: Mapping[str, ast.expr], scope: Scope) -> dict[str, str]:
    """{param: the param whose tensor it was made like} for the launch's arguments `passed` (param -> expression)."""
    roots = {name: _root(arg, scope) for name, arg in passed.items()}
    by_root: dict[str, str] = {}
    for name, root in roots.items():
        if root is not None:
            by_root.setdefault(root, name)
    out: dict[str, str] = {}
    for name, arg in passed.items():
        like = _made_like(arg, scope)
        source = by_root.get(like) if like is not None else None
        if source is not None and source != name:
            out[name] = source
    return out
