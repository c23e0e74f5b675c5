"""Launches inside a `torch.autograd.Function`: how its methods are called, so the launch resolver can follow
values into them as it does into a plain wrapper.

- No line calls `forward(ctx, a, b)`: `Op.apply(a, b)` does (or `op = Op.apply` then `op(a, b)`), with ctx left
  out. `apply_calls` writes each such call out as a synthetic call of forward with a ctx placeholder first, so
  `a` and `b` land on forward's parameters by position, as at a direct call of a wrapper.
- `backward(ctx, ...)` receives what forward kept on ctx (`ctx.tile = 256`); the scope builder binds each
  `ctx.<name>` of forward (`ctx_attributes`) into backward's scope, marked with the scope it is read in
  (forward's, whose parameters take what `.apply` passes) and the line that set it.

Pure AST; the scope builder hands in how to make a scope (as kernelbench.py does) so the modules form no cycle.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator, Mapping
from typing import Any

from ..source.safe_eval import dotted_name

FuncNode = ast.FunctionDef | ast.AsyncFunctionDef
APPLY = "apply"
# base classes that make a class an autograd Function: `torch.autograd.Function`, `autograd.Function`,
# `Function`, and torch's own aliases of it
FUNCTION_BASES = frozenset({"Function", "InplaceFunction"})
# marks on a ctx attribute's value copied into backward's scope: the scope its names are read in, and where it was set
HOME_SCOPE = "home_scope"
SET_WHERE = "set_where"


def function_class(tree: ast.Module, func: FuncNode | None) -> ast.ClassDef | None:
    """The autograd Function class (`class Op(torch.autograd.Function)`) that defines `func`, else None."""
    if func is None:
        return None
    for node in tree.body:  # top-level classes only: this runs for every launching function and caller
        if isinstance(node, ast.ClassDef) and any(child is func for child in node.body):
            bases = {(dotted_name(b) or "").rsplit(".", 1)[-1] for b in node.bases}
            return node if bases & FUNCTION_BASES else None
    return None


def method(cls: ast.ClassDef, name: str) -> FuncNode | None:
    return next(
        (n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None
    )


def ctx_name(func: FuncNode) -> str | None:
    """The name forward/backward give the context: their first parameter (a staticmethod's `ctx`)."""
    params = [*func.args.posonlyargs, *func.args.args]
    return params[0].arg if params else None


def takes_ctx(cls: ast.ClassDef, forward: FuncNode) -> bool:
    """forward takes ctx first unless the class sets ctx up apart (`setup_context(ctx, inputs, output)`)."""
    return method(cls, "setup_context") is None and ctx_name(forward) is not None


def apply_names(cls: ast.ClassDef, top_bindings: Mapping[str, ast.expr]) -> list[str]:
    """How the module calls the class: `Op.apply`, and each module-level name bound to it (`op = Op.apply`)."""
    spelled = f"{cls.name}.{APPLY}"
    return [spelled, *(name for name, value in top_bindings.items() if dotted_name(value) == spelled)]


def as_forward_call(call: ast.Call, forward: FuncNode, shift: bool) -> ast.Call:
    """`Op.apply(a, b)` as the call `forward(ctx, a, b)` it makes (ctx a placeholder nothing resolves)."""
    placeholder: list[ast.expr] = [ast.Name(id=ctx_name(forward) or "ctx", ctx=ast.Load())] if shift else []
    made = ast.Call(func=call.func, args=[*placeholder, *call.args], keywords=call.keywords)
    return ast.copy_location(made, call)


def apply_calls(
    cls: ast.ClassDef, forward: FuncNode, calls: Mapping[str, list[tuple[ast.Call, Any]]],
    top_bindings: Mapping[str, ast.expr],
) -> Iterator[tuple[ast.Call, Any]]:
    """(forward's call as `.apply` makes it, the function the `.apply` runs in) for every `.apply` call."""
    shift = takes_ctx(cls, forward)
    for name in apply_names(cls, top_bindings):
        for call, enclosing in calls.get(name, []):
            yield as_forward_call(call, forward, shift), enclosing


def ctx_attributes(bindings: Mapping[str, ast.expr], owner: str, reader: str, home: Any, where: str) -> dict[str, ast.expr]:
    """`reader.<name>` -> what forward bound to `owner.<name>` (its scope's `bindings`), each value a copy
    marked with the scope it is read in (`home`) and where it was set, for backward's scope."""
    out: dict[str, ast.expr] = {}
    prefix = f"{owner}."
    for key, value in bindings.items():
        if not key.startswith(prefix):
            continue
        attr = key[len(prefix):]
        marked = copy.copy(value)  # a shallow copy: the marks stay off the tree other scopes read
        setattr(marked, HOME_SCOPE, home)
        setattr(marked, SET_WHERE, f"{owner}.{attr} set in {where} at line {getattr(value, 'lineno', '?')}")
        out[f"{reader}.{attr}"] = marked
    return out
