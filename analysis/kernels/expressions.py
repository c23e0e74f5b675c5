"""What an expression of the tree stands for, read without importing or running anything: a dotted name resolved
through the file's import aliases to its canonical spelling (`import triton as tr` -> `@tr.jit` is `triton.jit`),
and literal values (numbers, strings, tuples/lists/dicts of them and small integer arithmetic: block sizes written
`2**10` or `64 * 2`)."""

from __future__ import annotations

import ast
from typing import Any

# -- names ------------------------------------------------------------------------------------------------
# Canonical spellings of the decorators and objects we look for; aliases are resolved to these.
JIT = "triton.jit"
AUTOTUNE = "triton.autotune"
HEURISTICS = "triton.heuristics"
CONFIG = "triton.Config"
CONSTEXPR = "triton.language.constexpr"
_CANONICAL = {
    "triton.runtime.jit.jit": JIT,
    "triton.runtime.autotuner.autotune": AUTOTUNE,
    "triton.runtime.autotune": AUTOTUNE,
    "triton.runtime.autotuner.heuristics": HEURISTICS,
    "triton.runtime.heuristics": HEURISTICS,
    "triton.runtime.autotuner.Config": CONFIG,
    "triton.runtime.Config": CONFIG,
    "triton.language.core.constexpr": CONSTEXPR,
}
# Positional order of triton.Config(kwargs, num_warps, num_stages, num_ctas, maxnreg, pre_hook).


def resolve_dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    base = aliases.get(node.id)
    if base is None:
        return None
    parts.append(base)
    dotted = ".".join(reversed(parts))
    return _CANONICAL.get(dotted, dotted)


# Names libraries re-export Triton under (vllm.triton_utils, vendor shims): taken as Triton wherever imported from.
_REEXPORTED = {"triton": "triton", "tl": "triton.language"}


def add_import(node: ast.Import | ast.ImportFrom, aliases: dict[str, str], other: set[str]) -> None:
    if isinstance(node, ast.Import):
        for item in node.names:
            if item.name == "triton" or item.name.startswith("triton."):
                if item.asname:
                    aliases[item.asname] = item.name
                else:
                    aliases["triton"] = "triton"
            else:
                other.add(item.asname or item.name.split(".")[0])
    elif node.module and node.level == 0:
        if node.module == "triton" or node.module.startswith("triton."):
            for item in node.names:
                if item.name != "*":
                    aliases[item.asname or item.name] = f"{node.module}.{item.name}"
        else:
            for item in node.names:
                if item.name in _REEXPORTED:  # `from vllm.triton_utils import tl, triton`: Triton re-exported
                    aliases[item.asname or item.name] = _REEXPORTED[item.name]
                else:
                    other.add(item.asname or item.name)


# -- literals -----------------------------------------------------------------------------------------------
_NO_VALUE = object()


def literal(node: ast.AST | None) -> tuple[bool, Any]:
    """(True, value) when `node` is a literal (numbers, strings, tuples/lists/dicts of them, small int arithmetic)."""
    if node is None:
        return False, None
    value = _literal(node, 0)
    return (False, None) if value is _NO_VALUE else (True, value)


def _literal(node: ast.AST, depth: int) -> Any:
    if depth > 20:
        return _NO_VALUE
    if isinstance(node, ast.Constant):
        return _NO_VALUE if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _literal(node.operand, depth + 1)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if isinstance(node.op, ast.USub) else inner
        return _NO_VALUE
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_literal(e, depth + 1) for e in node.elts]
        if any(i is _NO_VALUE for i in items):
            return _NO_VALUE
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return _NO_VALUE
        keys = [_literal(k, depth + 1) for k in node.keys if k is not None]
        values = [_literal(v, depth + 1) for v in node.values]
        if any(x is _NO_VALUE for x in (*keys, *values)):
            return _NO_VALUE
        try:
            return dict(zip(keys, values, strict=True))
        except TypeError:
            return _NO_VALUE
    if isinstance(node, ast.BinOp):
        return _int_arith(node, depth)
    return _NO_VALUE


def _int_arith(node: ast.BinOp, depth: int) -> Any:
    # Block sizes are often written 2**10 or 64 * 2; evaluate small integer arithmetic only.
    left, right = _literal(node.left, depth + 1), _literal(node.right, depth + 1)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (left, right)):
        return _NO_VALUE
    op = node.op
    try:
        if isinstance(op, ast.Add):
            return left + right
        if isinstance(op, ast.Sub):
            return left - right
        if isinstance(op, ast.Mult):
            return left * right if abs(left) < 2**32 and abs(right) < 2**32 else _NO_VALUE
        if isinstance(op, ast.FloorDiv):
            return left // right
        if isinstance(op, ast.Mod):
            return left % right
        if isinstance(op, ast.Pow):
            return left**right if 0 <= right <= 64 and abs(left) < 2**16 else _NO_VALUE
        if isinstance(op, ast.LShift):
            return left << right if 0 <= right <= 64 else _NO_VALUE
        if isinstance(op, ast.RShift):
            return left >> right if right >= 0 else _NO_VALUE
    except (ZeroDivisionError, OverflowError, ValueError):
        return _NO_VALUE
    return _NO_VALUE


def grid_literal(node: ast.AST) -> tuple[Any, ...] | None:
    ok, value = literal(node)
    if not ok:
        return None
    if isinstance(value, (list, tuple)):
        return tuple(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    return None
