"""Guesses that what a launch shows decides, when it shows no value.

A constexpr the launch passes as `"tf32" if fast else "ieee"` is one of those literals; one passed a float
(a `: float` wrapper parameter, `torch.finfo(d).eps`, a float default) is a float; one passed
`next_power_of_2(n)` where `n` is what another parameter gets is computed from that parameter's value, guessed
or not. Each stays labeled as a guess (`LAUNCH_NOTE` after the ASSUMED_TYPICAL marker), so no finding passes it
as a fact. Pure: AST and facts in, values out.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from ..source.safe_eval import UNKNOWN, call_name, evaluate
from .scope import Scope

LAUNCH_NOTE = "what the launch shows:"
FLOAT_TYPES = frozenset({"fp16", "bf16", "fp32", "fp64"})
# A float nothing shows the value of: small and positive, so `x / (s + eps)` and `if s > 0:` keep their code.
FLOAT_GUESS = 1e-5
_RELATION_CALLS = frozenset({"next_power_of_2", "cdiv", "min", "max", "int"})
_MAX_FOLLOW = 4  # names followed from the launch argument to the expression that computes it


class _Shown(Protocol):
    source: str
    type: str | None
    likely: tuple[Any, ...]


def shown_guess(facts: Iterable[_Shown]) -> tuple[Any, str] | None:
    """(value, note) for a constexpr whose launch shows candidates or a float type but no value; else None."""
    for fact in facts:
        if fact.likely:
            listed = ", ".join(repr(v) for v in fact.likely)
            single = "a float" if isinstance(fact.likely[0], float) else f"{listed} or a value not shown"
            what = f"one of {listed}" if len(fact.likely) > 1 else single
            return fact.likely[0], f"{LAUNCH_NOTE} {what} ({fact.source})"
        if fact.type in FLOAT_TYPES:
            return FLOAT_GUESS, f"{LAUNCH_NOTE} a float ({fact.source})"
    return None


def within(value: Any, bounds: tuple[int | None, int | None], source: str) -> tuple[Any, str]:
    """(the typical guess moved into the bounds a launch shows, note): `max(128, ...)` never passes 64."""
    low, high = bounds
    shown = " and ".join(x for x in (f"at least {low}" if low is not None else "",
                                     f"at most {high}" if high is not None else "") if x)
    if isinstance(value, int) and not isinstance(value, bool):
        value = max(value, low) if low is not None else value
        value = min(value, high) if high is not None else value
    return value, f"{LAUNCH_NOTE} {shown} ({source})"


def relation(arg: ast.expr, scope: Scope, passed: Mapping[str, ast.expr]) -> ast.expr | None:
    """`next_power_of_2(n)` at the launch (inline or through `w = next_power_of_2(n)`), where `n` is what the
    launch passes as kernel parameter N: that expression over N (`next_power_of_2(N)`); None otherwise."""
    expr = arg
    for _ in range(_MAX_FOLLOW):
        if not isinstance(expr, ast.Name):
            break
        found = scope.lookup(expr.id)
        if found is None or found[0] != "expr":
            return None
        expr = found[1]
    if not (isinstance(expr, ast.Call) and call_name(expr.func) in _RELATION_CALLS and not expr.keywords):
        return None
    shown = {ast.dump(v): k for k, v in passed.items() if v is not arg}
    used: list[str] = []

    def swap(node: ast.expr) -> ast.expr:
        name = shown.get(ast.dump(node))
        if name is not None:
            used.append(name)
            return ast.Name(id=name, ctx=ast.Load())
        if isinstance(node, ast.BinOp):
            return ast.BinOp(left=swap(node.left), op=node.op, right=swap(node.right))
        return node

    rewritten = copy.copy(expr)
    rewritten.args = [swap(a) for a in expr.args]
    return rewritten if used else None


def derived_value(expr: ast.expr, values: Mapping[str, Any]) -> Any:
    """The relation's value over the parameters' values (ints only), else UNKNOWN."""
    value = evaluate(expr, values)
    return value if isinstance(value, int) and not isinstance(value, bool) else UNKNOWN


def relation_bases(expr: ast.expr) -> list[str]:
    return [n.id for a in getattr(expr, "args", []) for n in ast.walk(a) if isinstance(n, ast.Name)]
