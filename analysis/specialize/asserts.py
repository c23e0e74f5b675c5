"""Element types a kernel's `tl.static_assert`s state for its pointer arguments, and the values that
`tl.static_assert(N == 4)`, `tl.assume(N == 4)` or a wrapper's `assert n == 4` state for a name.

`tl.static_assert(mx_scale_ptr.dtype.element_ty == tl.uint8, ...)` (directly or through a local such as
`w_type = W.dtype.element_ty`) says what the caller passes; a pointer whose element type is only a guess takes
the first type such an assert accepts, so the labeled guess is one the kernel itself allows.
Pure: AST in, types out.
"""

from __future__ import annotations

import ast
from typing import Any

from ..source.safe_eval import call_name
from .infer import TL_DTYPES

_STATING_CALLS = frozenset({"static_assert", "assume"})  # a condition that holds for every compile that exists


def _element_of(expr: ast.expr, aliases: dict[str, str]) -> str | None:
    """`P.dtype.element_ty` / `P.type.element_ty` (or a local holding it) -> P."""
    if isinstance(expr, ast.Name):
        return aliases.get(expr.id)
    if (
        isinstance(expr, ast.Attribute)
        and expr.attr == "element_ty"
        and isinstance(expr.value, ast.Attribute)
        and expr.value.attr in ("dtype", "type")
        and isinstance(expr.value.value, ast.Name)
    ):
        return expr.value.value.id
    return None


def _sum_root(expr: ast.expr) -> str | None:
    """`base + offsets - more` -> "base" (the leftmost name of an address sum)."""
    while isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        expr = expr.left
    return expr.id if isinstance(expr, ast.Name) else None


def _address_bases(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, set[str]]:
    """Locals assigned from address arithmetic (`p_ht = ht + i * stride`, `p = p + o[:, None]`) -> the names
    they start from."""
    bases: dict[str, set[str]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            root = _sum_root(node.value)
            if root and root != node.targets[0].id:
                bases.setdefault(node.targets[0].id, set()).add(root)
    return bases


def element_type_reads(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int]:
    """Names whose `.dtype.element_ty` the body reads (only pointers have one) -> the first line; a local built
    by address arithmetic also names what it was built from (`p_ht.dtype.element_ty` with `p_ht = ht + ...`
    makes `ht` a pointer)."""
    bases = _address_bases(fn)
    out: dict[str, int] = {}
    for node in ast.walk(fn):
        pointer = _element_of(node, {}) if isinstance(node, ast.Attribute) else None
        todo = [pointer] if pointer else []
        while todo:
            name = todo.pop()
            if name in out:
                continue
            out[name] = node.lineno
            todo.extend(bases.get(name, ()))
    return out


def asserted_elements(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[str, int]]:
    """Pointer argument -> (Triton element type, line) from the first `==` alternative of a static_assert."""
    aliases: dict[str, str] = {}
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            pointer = _element_of(node.value, aliases)
            for t in targets:
                if isinstance(t, ast.Name) and pointer:
                    aliases[t.id] = pointer
    out: dict[str, tuple[str, int]] = {}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Call) and call_name(node.func) == "static_assert" and node.args):
            continue
        for cmp in ast.walk(node.args[0]):
            if not (isinstance(cmp, ast.Compare) and len(cmp.ops) == 1 and isinstance(cmp.ops[0], ast.Eq)):
                continue
            for side, other in ((cmp.left, cmp.comparators[0]), (cmp.comparators[0], cmp.left)):
                pointer = _element_of(side, aliases)
                if pointer and isinstance(other, ast.Attribute) and other.attr in TL_DTYPES:
                    out.setdefault(pointer, (TL_DTYPES[other.attr], node.lineno))
    return out


def equalities(test: ast.expr) -> list[tuple[str, ast.Constant]]:
    """`n == 4`, `4 == n`, `a == 1 and b == "x"` -> [(name, literal)]: what a condition that holds pins down."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [pair for value in test.values for pair in equalities(value)]
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return []
    left, right = test.left, test.comparators[0]
    for name, literal in ((left, right), (right, left)):
        if isinstance(name, ast.Name) and isinstance(literal, ast.Constant) and literal.value is not None:
            return [(name.id, literal)]
    return []


def stated_values(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[Any, str]]:
    """Name -> (value, "tl.assume at line 12") for each top-level `tl.static_assert` / `tl.assume` equality of
    the kernel: a compile with another value fails or lies to the compiler, so no guess may contradict it (one
    under an `if` holds on that branch only: not read)."""
    out: dict[str, tuple[Any, str]] = {}
    for stmt in fn.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and call_name(call.func) in _STATING_CALLS and call.args):
            continue
        how = "tl.assume" if call_name(call.func) == "assume" else "tl.static_assert"
        for name, literal in equalities(call.args[0]):
            out.setdefault(name, (literal.value, f"{how} at line {stmt.lineno}"))
    return out
