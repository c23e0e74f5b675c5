"""When may a masked `tl.load` drop its padding (`care_padding=False`, a triton-ascend extension)?

Triton leaves masked-off lanes undefined when `other` is not given, but triton-ascend fills them with zeros
to behave like GPUs, and kernels do rely on that (a `tl.sum` over a masked row). Dropping the fill is safe
only when no padded lane can reach a result: the loaded value flows through elementwise expressions into
`tl.store` calls with the very same mask, and nowhere else. This module proves that conservatively on the
kernel's AST; anything it does not understand counts as "may observe the padding".
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ...core.findings import Fix, Span, TextEdit

# Calls whose result mixes lanes (or leaves the tile): a padded lane could reach the result through them.
LANE_MIXING = {
    "sum",
    "max",
    "min",
    "argmax",
    "argmin",
    "reduce",
    "xor_sum",
    "cumsum",
    "cumprod",
    "associative_scan",
    "dot",
    "sort",
    "gather",
    "histogram",
    "reshape",
    "view",
    "permute",
    "trans",
    "split",
    "join",
    "interleave",
    "flip",
    "atomic_add",
    "atomic_max",
    "atomic_min",
    "atomic_xchg",
    "atomic_cas",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "device_print",
    "static_print",
    "device_assert",
}


@dataclass(frozen=True)
class PaddingVerdict:
    load: ast.Call
    safe: bool
    reason: str


def _call_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def masked_loads_without_other(func: ast.FunctionDef) -> list[ast.Call]:
    """`tl.load(ptr, mask=...)` calls with no `other` and no explicit `care_padding`."""
    out = []
    for node in ast.walk(func):
        if not (isinstance(node, ast.Call) and _call_name(node) == "load"):
            continue
        mask = (
            _keyword(node, "mask")
            if _keyword(node, "mask") is not None
            else (node.args[1] if len(node.args) > 1 else None)
        )
        other = (
            _keyword(node, "other")
            if _keyword(node, "other") is not None
            else (node.args[2] if len(node.args) > 2 else None)
        )
        if mask is not None and other is None and _keyword(node, "care_padding") is None:
            out.append(node)
    return out


def padding_verdict(func: ast.FunctionDef, load: ast.Call) -> PaddingVerdict:
    """Can the padded lanes of `load` reach any result? Conservative: unknown uses mean yes."""
    mask = _keyword(load, "mask") if _keyword(load, "mask") is not None else load.args[1]
    mask_text = ast.unparse(mask)
    statements = [s for s in ast.walk(func) if isinstance(s, ast.stmt) and s is not func]
    owner = next(
        (
            s
            for s in statements
            if isinstance(s, (ast.Assign, ast.AnnAssign)) and any(n is load for n in ast.walk(s))
        ),
        None,
    )
    if owner is None or not isinstance(owner, ast.Assign) or owner.value is not load:
        return PaddingVerdict(load, False, "the loaded value is not simply assigned to a name")
    if len(owner.targets) != 1 or not isinstance(owner.targets[0], ast.Name):
        return PaddingVerdict(load, False, "the loaded value is unpacked or stored into an attribute")
    tainted = {owner.targets[0].id}
    mask_names = _names(mask)
    changed = True
    while changed:  # propagate through elementwise assignments to a fixed point (loops may feed back)
        changed = False
        for stmt in statements:
            uses = set()
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    uses.add(node.id)
            if not uses & tainted or stmt is owner:
                continue
            if isinstance(stmt, (ast.For, ast.While, ast.If)):
                test = stmt.iter if isinstance(stmt, ast.For) else stmt.test
                if _names(test) & tainted:
                    return PaddingVerdict(
                        load, False, f"line {stmt.lineno} branches or loops on the loaded value"
                    )
                continue  # the body's statements are visited on their own
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Call)
                and _call_name(stmt.value) == "store"
            ):
                store = stmt.value
                value = store.args[1] if len(store.args) > 1 else _keyword(store, "value")
                smask = (
                    _keyword(store, "mask")
                    if _keyword(store, "mask") is not None
                    else (store.args[2] if len(store.args) > 2 else None)
                )
                if value is None or not (_names(value) & tainted):
                    return PaddingVerdict(
                        load, False, f"line {stmt.lineno} uses the value in a store address"
                    )
                if smask is None or ast.unparse(smask) != mask_text:
                    return PaddingVerdict(
                        load, False, f"line {stmt.lineno} stores it without the load's mask"
                    )
                if _names(store.args[0]) & tainted:
                    return PaddingVerdict(
                        load, False, f"line {stmt.lineno} uses the value in a store address"
                    )
                continue
            if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
                mixing = [
                    c
                    for c in ast.walk(stmt.value)
                    if isinstance(c, ast.Call) and _call_name(c) in LANE_MIXING
                ]
                if mixing:
                    return PaddingVerdict(
                        load, False, f"line {stmt.lineno} combines lanes ({_call_name(mixing[0])})"
                    )
                if any(isinstance(n, ast.Subscript) for n in ast.walk(stmt.value)):
                    return PaddingVerdict(load, False, f"line {stmt.lineno} indexes the value")
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    if not isinstance(t, ast.Name):
                        return PaddingVerdict(
                            load, False, f"line {stmt.lineno} writes it through a subscript"
                        )
                    if t.id in mask_names:
                        return PaddingVerdict(load, False, f"line {stmt.lineno} feeds the mask itself")
                    if t.id not in tainted:
                        tainted.add(t.id)
                        changed = True
                continue
            return PaddingVerdict(load, False, f"line {stmt.lineno} uses the value in a way not analyzed")
    return PaddingVerdict(load, True, "masked-off lanes only reach stores under the same mask")


def care_padding_fix(load: ast.Call, source_lines: list[str]) -> Fix | None:
    """Insert `care_padding=False` before the load's closing parenthesis (columns in characters)."""
    line, byte_col = load.end_lineno, load.end_col_offset
    if line is None or byte_col is None or not 0 < line <= len(source_lines):
        return None
    text = source_lines[line - 1]
    col = len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))
    if col < 1 or text[col - 1] != ")":
        return None
    before = text[: col - 1].rstrip()
    sep = "" if before.endswith(("(", ",")) else ", "
    at = Span(line, col - 1, line, col - 1)
    return Fix(
        "Add care_padding=False (masked lanes are only stored under the same mask)",
        (TextEdit(at, f"{sep}care_padding=False"),),
    )
