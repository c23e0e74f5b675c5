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
A tensor argument whose every address use sits under flags that typical guesses turned off, and that the
compiled code reads as a value instead (`if IS_PTR: v = tl.load(value_or_ptr) else: v = value_or_ptr`), gets
those guesses turned on.
Pure: AST in, facts out.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ..source.safe_eval import UNKNOWN, call_name
from .guess import ASSUMED_TYPICAL
from .infer import POINTER_CALLS, pointer_arg

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


Read = tuple[int, tuple[Guard, ...], bool]  # line, guards around it, whether it is a load/store address


def reads(fn: ast.FunctionDef, constexprs: frozenset[str]) -> dict[str, list[Read]]:
    """param -> every read of it (not an `is None` test): line, the guards around it, whether it is (part of)
    the address of a tl.load/tl.store."""
    params = frozenset(a.arg for a in fn.args.args)
    out: dict[str, list[Read]] = {}

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
        addresses: set[int] = set()
        for sub in _walk(node, skip_blocks):
            if isinstance(sub, ast.Call) and call_name(sub.func) in POINTER_CALLS:
                address = pointer_arg(sub, call_name(sub.func))
                if address is not None:
                    addresses.update(id(n) for n in ast.walk(address) if isinstance(n, ast.Name))
        for sub in _walk(node, skip_blocks):
            if id(sub) in skipped:
                continue
            if isinstance(sub, ast.Compare) and any(
                isinstance(c, ast.Constant) and c.value is None for c in sub.comparators
            ):
                continue
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in params:
                out.setdefault(sub.id, []).append((sub.lineno, guards, id(sub) in addresses))
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
    found = reads(fn, constexprs)
    for name, lines in found.items():
        fact = chosen.get(name)
        if fact is None or fact.value is not None or name in constexprs:
            continue
        live = sorted((line, guards) for line, guards, _ in lines if all(_holds(g, values) for g in guards))
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
    return changed + _address_guards_on(found, chosen, values)


def _address_guards_on(found: dict[str, list[Read]], chosen: dict[str, Any], values: dict[str, Any]) -> list[str]:
    """A tensor argument used as an address only under guards that typical guesses turned off, and read as a
    value where they are off (`if IS_PTR: v = tl.load(value_or_ptr) else: v = value_or_ptr`, IS_PTR guessed
    False: a pointer stored as a value does not compile): those guesses are turned on."""
    changed: list[str] = []
    for name, lines in found.items():
        fact = chosen.get(name)
        guard_sets = [guards for _, guards, address in lines if address]
        if fact is None or not (fact.type or "").startswith("*") or not guard_sets:
            continue
        if any(all(_holds(g, values) for g in guards) for guards in guard_sets):
            continue  # some address use is compiled already
        if not any(all(_holds(g, values) for g in guards) for _, guards, _ in lines):
            continue  # not read at all in this variant: nothing contradicts its type
        off = [g for g in guard_sets[0] if not _holds(g, values)]
        if all(k == "flag" and n in chosen and chosen[n].source == ASSUMED_TYPICAL for k, n, _ in off):
            for _, flag, wanted in off:
                chosen[flag] = replace(chosen[flag], value=wanted)  # still labeled a typical guess
                values[flag] = wanted
                changed.append(flag)
    return changed
