"""Block sizes that are computed, not written: a `@triton.heuristics({"BLOCK": lambda args: ...})` entry, and a
constexpr the wrapper computes before the launch (`BLOCK = triton.next_power_of_2(n)`, `min(..., 1024)`,
`max(...)`). Each is searched by rewriting the expression where it is written (the whole file kept otherwise):
twice it (`2 * (e)`), half of it (`max(16, (e) // 2)`), or a cap moved (`min(e, C)` -> `min(e, 2C)` / `min(e, C/2)`).

Correctness decides which: a block the kernel steps through (the step of a `range`, an argument of `tl.cdiv`) or
that tiles a grid axis (`tl.program_id(k) * BLOCK`) may take any power of two: the loop or the grid covers the
rest. A block with neither covers its whole extent in one program (a row of a softmax, `tl.arange(0, BLOCK)`
masked by `< n`): shrinking it would leave elements unprocessed, so it only grows (x2, a cap raised). The gate
then checks every candidate against the original anyway. Pure functions over text.
"""

from __future__ import annotations

import ast

from ....analysis.kernels.config_lists import decorator
from .autotune_search import TuneMove
from .knobs import _program_axes, _Text, apply_edits, is_block

_FLOOR = 16
_COMPUTED = ("next_power_of_2", "min", "max", "cdiv")


def steps_through(fn: ast.FunctionDef, name: str) -> bool:
    """`name` is a loop step / cdiv divisor in the kernel, or tiles a grid axis: any size keeps coverage."""
    if name in _program_axes(fn):
        return True
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in ("range", "static_range", "cdiv"):
            args = node.args[2:3] if ast.unparse(node.func).split(".")[-1] != "cdiv" else node.args[1:2]
            if any(isinstance(a, ast.Name) and a.id == name for a in args):
                return True
    return False


def _rewrites(expr: ast.expr, text: str, free: bool) -> list[tuple[str, str]]:
    """(label, new text) for one computed block expression."""
    out = [("x2", f"2 * ({text})")]
    if free:
        out.append(("/2", f"max({_FLOOR}, ({text}) // 2)"))
    if isinstance(expr, ast.Call) and ast.unparse(expr.func) == "min" and len(expr.args) == 2:
        cap = next((a for a in expr.args if isinstance(a, ast.Constant) and type(a.value) is int), None)
        other = next((a for a in expr.args if a is not cap), None)
        if cap is not None and other is not None:
            inner = ast.unparse(other)
            out.append((f"cap {cap.value} -> {cap.value * 2}", f"min({inner}, {cap.value * 2})"))
            if free and cap.value // 2 >= _FLOOR:
                out.append((f"cap {cap.value} -> {cap.value // 2}", f"min({inner}, {cap.value // 2})"))
    return out


def derived_moves(source: str, kernel: str, constexprs: list[str]) -> list[TuneMove]:
    tree = ast.parse(source)
    text = _Text(source)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == kernel), None)
    if fn is None:
        return []
    out: list[TuneMove] = []

    def add(where: str, name: str, node: ast.expr) -> None:
        free = steps_through(fn, name)
        original = source[text.start(node):text.end(node)]
        for how, new in _rewrites(node, original, free):
            label = f"{where} {kernel}.{name}: `{original}` {how}"
            out.append(TuneMove(label, apply_edits(source, [(text.start(node), text.end(node), new)]),
                                {f"{kernel}.{name}": how, "covers": "loop/grid" if free else "whole extent"}))

    table = decorator(fn, "heuristics")
    values = (table.args[0] if table.args else None) if table is not None else None
    if isinstance(values, ast.Dict):
        for key, value in zip(values.keys, values.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(value, ast.Lambda) and is_block(fn, str(key.value)):
                add("heuristic", str(key.value), value.body)
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n is not fn):
        assigned: dict[str, list[ast.expr]] = {}
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                assigned.setdefault(node.targets[0].id, []).append(node.value)
        for call in ast.walk(func):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript)
                    and isinstance(call.func.value, ast.Name) and call.func.value.id == kernel):
                continue
            bound = dict(zip(params, call.args, strict=False))
            bound.update({kw.arg: kw.value for kw in call.keywords if kw.arg})
            for name in constexprs:
                node = bound.get(name)
                if isinstance(node, ast.Name) and len(assigned.get(node.id, [])) == 1:
                    node = assigned[node.id][0]
                if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in _COMPUTED \
                        and is_block(fn, name):
                    add("wrapper", name, node)
    seen: set[str] = set()
    return [m for m in out if not (m.source in seen or seen.add(m.source))]  # type: ignore[func-returns-value]
