"""Optional tensor arguments passed None, kept consistent with the kernel body and the flags that guard them.

A kernel reads an optional tensor only under a guard: a constexpr flag (`if HAS_BIAS:`, `if not USE_G:`) or
`if bias_ptr is not None:`. A variant whose sources pass None where the body still reads the argument (the
guard holds, or there is none) cannot compile (`'NoneType' object has no attribute 'type'`), so it describes
no real launch; `reconcile` makes it consistent, labeled:
- the None is a weak fact (a parameter default, no caller shows the call) and the body reads the argument:
  a tensor is passed (the element type the body implies, else fp32), so the guarded code is compiled;
- the None is what the launch shows and the guarding flag is weak (a typical guess, a heuristic, a default):
  the flag is set False;
- both are what the launch shows (the tool's reading of it cannot be right): a tensor is passed.
Pure: AST in, facts out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from .safe_eval import UNKNOWN, call_name
from .specialization_guess import ASSUMED_TYPICAL
from .specialization_infer import POINTER_CALLS

# (kind, name, wanted): ("flag", "HAS_BIAS", True) holds when HAS_BIAS is truthy; ("set", "b", True) when b is
# not None.
Guard = tuple[str, str, bool]

WEAK_SOURCES = ("assumed", "heuristics", "default")


def _guards(test: ast.expr, constexprs: frozenset[str], params: frozenset[str]) -> list[Guard] | None:
    """The guards a branch condition is made of, or None when it reads runtime values."""
    if isinstance(test, ast.Name) and test.id in constexprs:
        return [("flag", test.id, True)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _guards(test.operand, constexprs, params)
        return [(k, n, not w) for k, n, w in inner] if inner and len(inner) == 1 else None
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        and isinstance(test.left, ast.Name)
        and test.left.id in params
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return [("set", test.left.id, isinstance(test.ops[0], ast.IsNot))]
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        parts = [_guards(v, constexprs, params) for v in test.values]
        return [g for p in parts for g in p] if all(p is not None for p in parts) else None  # type: ignore[union-attr]
    return None


def reads(fn: ast.FunctionDef, constexprs: frozenset[str]) -> dict[str, list[tuple[int, tuple[Guard, ...]]]]:
    """param -> every line that reads it (not an `is None` test), with the guards around that line."""
    params = frozenset(a.arg for a in fn.args.args)
    out: dict[str, list[tuple[int, tuple[Guard, ...]]]] = {}

    def visit(stmts: list[ast.stmt], guards: tuple[Guard, ...]) -> None:
        for stmt in stmts:
            if isinstance(stmt, ast.If):
                found = _guards(stmt.test, constexprs, params)
                if found is None:
                    record(stmt.test, guards)
                inside = guards + tuple(found or ())
                visit(stmt.body, inside)
                negated = tuple((k, n, not w) for k, n, w in found) if found and len(found) == 1 else ()
                visit(stmt.orelse, guards + negated)
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(stmt, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    visit(block, guards)
            record(stmt, guards, skip_blocks=True)

    def record(node: ast.AST, guards: tuple[Guard, ...], skip_blocks: bool = False) -> None:
        skipped: set[int] = set()
        for sub in _walk(node, skip_blocks):
            if id(sub) in skipped:
                continue
            if isinstance(sub, ast.Compare) and any(
                isinstance(c, ast.Constant) and c.value is None for c in sub.comparators
            ):
                continue
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in params:
                out.setdefault(sub.id, []).append((sub.lineno, guards))
            elif isinstance(sub, ast.Call) and call_name(sub.func) not in POINTER_CALLS:
                # passed as is to a helper: the helper may test it for None itself
                passed = {
                    id(a) for a in [*sub.args, *(k.value for k in sub.keywords)] if isinstance(a, ast.Name)
                }
                skipped.update(passed)

    visit(fn.body, ())
    return out


def _walk(node: ast.AST, skip_blocks: bool) -> Iterator[ast.AST]:
    """ast.walk without statement blocks (visited with their own guards) and without `x is None` tests."""
    todo = [node]
    while todo:
        sub = todo.pop()
        yield sub
        if isinstance(sub, ast.Compare) and any(
            isinstance(c, ast.Constant) and c.value is None for c in sub.comparators
        ):
            continue
        for name, value in ast.iter_fields(sub):
            if skip_blocks and sub is node and name in ("body", "orelse", "finalbody", "handlers"):
                continue
            if isinstance(value, list):
                todo.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                todo.append(value)


def _holds(guard: Guard, values: dict[str, Any]) -> bool:
    kind, name, wanted = guard
    value = values.get(name, UNKNOWN)
    if value is UNKNOWN:
        return True  # unknown: the guarded code may run
    return (value is not None if kind == "set" else bool(value)) == wanted


def _weak(source: str) -> bool:
    return source.startswith(WEAK_SOURCES) or "default of" in source


def reconcile(
    fn: ast.FunctionDef, constexprs: frozenset[str], chosen: dict[str, Any], pointer_types: dict[str, str]
) -> list[str]:
    """Make the None-valued arguments of `chosen` (name -> specialization_facts.Fact) consistent with what the
    body reads; returns the names changed. `pointer_types`: the element type the body implies per pointer."""
    values = {
        n: (f.value if f.value is not UNKNOWN else (UNKNOWN if not f.type else "tensor"))
        for n, f in chosen.items()
    }
    changed: list[str] = []
    for name, lines in reads(fn, constexprs).items():
        fact = chosen.get(name)
        if fact is None or fact.value is not None or name in constexprs:
            continue
        live = sorted((line, guards) for line, guards in lines if all(_holds(g, values) for g in guards))
        if not live:
            continue
        line, guards = live[0]
        # each live read made dead by a weak flag of its guards set the other way
        flips = [
            next(
                ((n, not w) for k, n, w in g if k == "flag" and n in chosen and _weak(chosen[n].source)), None
            )
            for _, g in live
        ]
        if not _weak(fact.source) and all(flips):
            for flag, value in dict.fromkeys(f for f in flips if f):
                why = chosen[flag].source  # a typical guess stays labeled as one (its exact marker)
                if why != ASSUMED_TYPICAL:
                    why = f"{why}; set {value}: {name} is passed None ({fact.source})"
                chosen[flag] = replace(chosen[flag], source=why, value=value)
                values[flag] = value
                changed.append(flag)
            continue
        element = pointer_types.get(name, "*fp32")
        where = f" under {', '.join(g[1] for g in guards)}" if guards else ""
        chosen[name] = replace(
            fact,
            source=f"{fact.source}, but the kernel reads {name} at line {line}{where}: a tensor passed instead, "
            f"element type assumed {element[1:]}",
            value=UNKNOWN,
            type=element,
        )
        values[name] = "tensor"
        changed.append(name)
    return changed
