"""The values a selector constexpr can take, read from the comparisons the kernel makes with it.

A constexpr the kernel only compares for equality with constants (`casting_mode == _CASTING_MODE_LLAMA`, where
the module says `_CASTING_MODE_LLAMA = tl.constexpr(0)`; `MODE == 2`; `ACT == "relu"`) is an enum-like selector,
not a size: when nothing shows its value, the guess is one of those values, so one branch the kernel really has
is compiled (never a block size such as 1024, which matches no branch). The guess says which value and which
names it was compared with. Pure: AST in, values out.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from .launch_guess import LAUNCH_NOTE

# Provenance suffix of a selector guess (after specialization_guess.ASSUMED_TYPICAL).
CASES_NOTE = "one of the values the kernel compares it with"
_NOTES = (CASES_NOTE, LAUNCH_NOTE)  # what a guess's provenance says it chose from
_CONSTEXPR_CALLS = frozenset({"constexpr"})  # tl.constexpr(0), triton.language.constexpr(0), constexpr(0)
_NO_VALUE = object()
_HELPER_DEPTH = 3  # selectors passed down through helpers: kernel -> helper -> helper's helper
Function = ast.FunctionDef | ast.AsyncFunctionDef


def visible_constant(expr: ast.expr | None) -> Any:
    """The int or str an expression always has (`3`, `-1`, `"relu"`, `tl.constexpr(0)`); _NO_VALUE otherwise."""
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
        func = expr.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return visible_constant(expr.args[0]) if called in _CONSTEXPR_CALLS else _NO_VALUE
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        inner = visible_constant(expr.operand)
        return -inner if type(inner) is int else _NO_VALUE
    if isinstance(expr, ast.Constant) and type(expr.value) in (int, str):
        return expr.value
    return _NO_VALUE


def _locals(function: Function) -> set[str]:
    names = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    return names | {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _flag_tests(function: ast.AST) -> set[int]:
    """ids of the expressions used as truth values: `if X:`, `X if c else y`'s test, `not X`, `X and Y`."""
    out: set[int] = set()
    for sub in ast.walk(function):
        if isinstance(sub, (ast.If, ast.IfExp, ast.While, ast.Assert)):
            out.add(id(sub.test))
        elif isinstance(sub, ast.UnaryOp) and isinstance(sub.op, ast.Not):
            out.add(id(sub.operand))
        elif isinstance(sub, ast.BoolOp):
            out.update(id(v) for v in sub.values)
    return out


def _passed_to_helpers(
    function: Function, name: str, functions: Mapping[str, Function], local: set[str]
) -> list[tuple[ast.Name, Function, str]]:
    """(the use, the module-level helper, its parameter) for each `helper(..., name, ...)` / `helper(p=name)`."""
    out: list[tuple[ast.Name, Function, str]] = []
    for call in ast.walk(function):
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.func.id in local:
            continue
        helper = functions.get(call.func.id)
        if helper is None or helper is function:
            continue
        params = [a.arg for a in (*helper.args.posonlyargs, *helper.args.args)]
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Name) and arg.id == name and i < len(params):
                out.append((arg, helper, params[i]))
        for kw in call.keywords:
            if isinstance(kw.value, ast.Name) and kw.value.id == name and kw.arg:
                out.append((kw.value, helper, kw.arg))
    return out


def _cases(
    function: Function,
    name: str,
    module_env: Mapping[str, ast.expr],
    functions: Mapping[str, Function],
    depth: int,
) -> dict[Any, str] | None:
    """value -> text of the constants `name` is compared with; None when `name` is no selector."""
    local = _locals(function)
    flags = _flag_tests(function)
    allowed: set[int] = set()
    out: dict[Any, str] = {}
    compares = [n for n in ast.walk(function) if isinstance(n, ast.Compare)]
    for sub in sorted(compares, key=lambda n: (n.lineno, n.col_offset)):  # walk is breadth-first
        sides = (sub.left, *sub.comparators)
        mine = [x for x in sides if isinstance(x, ast.Name) and x.id == name]
        if not mine or not all(isinstance(op, (ast.Eq, ast.NotEq)) for op in sub.ops):
            continue
        allowed.update(id(x) for x in mine)
        for side in sides:
            if side in mine:
                continue
            if isinstance(side, ast.Name) and side.id not in local:
                value, text = visible_constant(module_env.get(side.id)), side.id
            else:
                value, text = visible_constant(side), ast.unparse(side)
            if value is _NO_VALUE:
                return None  # compared with something not visible: no selector this module can read
            out.setdefault(value, text)
    if depth < _HELPER_DEPTH:
        for use, helper, param in _passed_to_helpers(function, name, functions, local):
            inner = _cases(helper, param, module_env, functions, depth + 1)
            if inner is None:
                return None
            allowed.add(id(use))
            for value, text in inner.items():
                out.setdefault(value, text)
    uses = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name]
    if any(id(n) not in allowed and id(n) not in flags for n in uses):
        return None
    return out


def compared_cases(
    function: Function,
    name: str,
    module_env: Mapping[str, ast.expr],
    functions: Mapping[str, Function] | None = None,
) -> list[tuple[Any, str]]:
    """(value, text) for each constant `name` is compared with by `==`/`!=` in `function` (or in the module-level
    helpers `functions` it is passed to), in source order, each value once: literals, and module-level names
    whose value the module shows (not the function's own locals). Empty unless every use of `name` is such a
    comparison, a truth test (`if NAME:`) or such a helper argument: an ordering, arithmetic, a shape or another
    call makes it no selector, as does a compared value the module hides."""
    found = _cases(function, name, module_env, functions or {}, 0)
    return list(found.items()) if found else []


def selector_guess(cases: list[tuple[Any, str]]) -> tuple[Any, str] | None:
    """(the value to compile, the provenance note that says which) for a selector with these cases: a string
    first, else the int nearest zero that is not negative (0 before 1 before -1: the first branch of most
    selectors); None without cases."""
    if not cases:
        return None
    strings = [c for c in cases if isinstance(c[0], str)]
    value, _ = strings[0] if strings else min(cases, key=lambda c: (c[0] < 0, abs(c[0])))
    listed = ", ".join(f"{v!r}" if t == repr(v) else f"{t}={v!r}" for v, t in cases)
    return value, f"{CASES_NOTE} ({listed})"


def selectors(
    function: Function,
    names: list[str],
    module_env: Mapping[str, ast.expr],
    functions: Mapping[str, Function] | None = None,
) -> dict[str, tuple[Any, str]]:
    """name -> (value, provenance note) for each of `names` that is a selector (see compared_cases)."""
    out: dict[str, tuple[Any, str]] = {}
    for name in names:
        guess = selector_guess(compared_cases(function, name, module_env, functions))
        if guess is not None:
            out[name] = guess
    return out


def cases_note(provenance: str) -> str:
    """` (one of the values the kernel compares it with (...))` for a selector's guess, else ``: what a
    message shows after `name=value`."""
    at = next((i for i in (provenance.find(note) for note in _NOTES) if i >= 0), -1)
    return f" ({provenance[at:]})" if at >= 0 else ""
