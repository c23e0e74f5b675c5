"""A tiny evaluator for the constant expressions found around kernels (no `eval`, no calls into user code).

It understands literals, arithmetic, comparisons, boolean logic, `a if c else b`, names bound in an
environment, `args["X"]` / `args.get("X", d)` (what `@triton.heuristics` lambdas read), and a few pure
helpers (`triton.next_power_of_2`, `triton.cdiv`, `min`, `max`, `abs`, `int`, `bool`). Anything else is
UNKNOWN, which callers treat as "no value" rather than guessing.

Every evaluation is bounded in size and time, not only in its exponent: an operation whose result would exceed
MAX_BITS (integers) or MAX_ITEMS (strings, tuples) is refused before it runs (`(((3**128)**128)**128)**128` or
`"x" * 10**9` would otherwise hold the GIL for minutes and freeze the whole server), and one evaluation reads at
most MAX_STEPS nodes.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from typing import Any


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        raise TypeError("UNKNOWN has no truth value; compare with `is UNKNOWN`")


UNKNOWN: Any = _Unknown()


class _NotNone:
    """A value known to exist but not known itself (a tensor argument): only `is (not) None` can read it."""

    def __repr__(self) -> str:
        return "NOT_NONE"

    def __bool__(self) -> bool:
        raise TypeError("NOT_NONE has no truth value")

    def __eq__(self, other: object) -> bool:
        raise TypeError("NOT_NONE cannot be compared")

    __ne__ = __eq__
    __hash__ = object.__hash__


NOT_NONE: Any = _NotNone()


def _is(left: Any, right: Any) -> bool:
    """`is` where it has a meaning here: against None (a missing optional tensor) or between booleans."""
    if left is None or right is None or (isinstance(left, bool) and isinstance(right, bool)):
        return left is right
    raise TypeError("`is` is read only against None")


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: _is,
    ast.IsNot: lambda left, right: not _is(left, right),
}


def _next_power_of_2(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


_FUNCS: dict[str, Callable[..., Any]] = {
    "next_power_of_2": _next_power_of_2,
    "cdiv": _cdiv,
    "min": min,
    "max": max,
    "abs": abs,
    "int": int,
    "bool": bool,
    "float": float,
}
_LITERAL_TYPES = (int, float, bool, str, type(None))
_MAX_INT = 1 << 64  # a final value larger than this is no launch value anyone means
MAX_BITS = 4096  # largest intermediate integer
MAX_ITEMS = 10_000  # longest intermediate string or tuple
MAX_STEPS = 10_000  # nodes one evaluation may visit


class _TooBig(Exception):
    """An operation would exceed the evaluator's bounds."""


def _check(value: Any) -> Any:
    if isinstance(value, int) and value.bit_length() > MAX_BITS:
        raise _TooBig
    if isinstance(value, (str, tuple, list)) and len(value) > MAX_ITEMS:
        raise _TooBig
    return value


def apply_helper(name: str, args: list[Any]) -> Any:
    """`next_power_of_2(600)` -> 1024 for one of the allowed helpers over literal ints/floats; UNKNOWN otherwise."""
    func = _FUNCS.get(name)
    if func is None or not args or not all(type(a) in (int, float) for a in args):
        return UNKNOWN
    try:
        return _check(func(*args))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, _TooBig):
        return UNKNOWN


def _refuse_big(op: ast.operator, left: Any, right: Any) -> bool:
    """Whether `left op right` would build a value past the bounds (checked before computing it)."""
    ints = isinstance(left, int) and isinstance(right, int)
    if isinstance(op, ast.Pow) and ints:
        return right > 0 and abs(left) > 1 and left.bit_length() * right > MAX_BITS
    if isinstance(op, ast.LShift) and ints:
        return right > 0 and left.bit_length() + right > MAX_BITS
    if isinstance(op, ast.Mult):
        if ints:
            return left.bit_length() + right.bit_length() > MAX_BITS
        for seq, n in ((left, right), (right, left)):
            if isinstance(seq, (str, tuple, list)) and isinstance(n, int):
                return len(seq) * max(n, 0) > MAX_ITEMS
    if isinstance(op, ast.Add) and isinstance(left, (str, tuple, list)) and isinstance(right, (str, tuple, list)):
        return len(left) + len(right) > MAX_ITEMS
    if isinstance(op, ast.Mod) and isinstance(left, str):
        return True  # printf-style formatting: widths can ask for gigabytes
    return False


def dotted_name(node: ast.expr) -> str | None:
    """`torch.nn.functional` -> "torch.nn.functional"; None for anything but a chain of names."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = dotted_name(node.value)
        return f"{owner}.{node.attr}" if owner else None
    return None


def call_name(func: ast.expr) -> str:
    """`triton.next_power_of_2` -> "next_power_of_2"; `min` -> "min"."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def evaluate(node: ast.AST, env: Mapping[str, Any], args_name: str | None = None) -> Any:
    """Value of `node` given `env`, or UNKNOWN; never raises."""
    try:
        value = _eval(node, env, args_name, 0, [MAX_STEPS])
    except (ArithmeticError, TypeError, ValueError, RecursionError, MemoryError, _TooBig):
        return UNKNOWN
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_INT:
        return UNKNOWN
    return value


def _eval(node: ast.AST, env: Mapping[str, Any], args_name: str | None, depth: int, steps: list[int]) -> Any:
    steps[0] -= 1
    if depth > 50 or steps[0] < 0:
        return UNKNOWN

    def ev(n: ast.AST) -> Any:
        return _check(_eval(n, env, args_name, depth + 1, steps))

    if isinstance(node, ast.Constant):
        return _check(node.value) if isinstance(node.value, _LITERAL_TYPES) else UNKNOWN
    if isinstance(node, ast.Name):
        if node.id in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.id]
        return env.get(node.id, UNKNOWN)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        # `ctx.flag`, `self.n`: what the environment binds to the attribute (`ctx.flag = True` earlier), if anything
        return env.get(f"{node.value.id}.{node.attr}", UNKNOWN)
    if isinstance(node, ast.Subscript) and args_name and isinstance(node.value, ast.Name):
        if (
            node.value.id == args_name
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            return env.get(node.slice.value, UNKNOWN)
        return UNKNOWN
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = ev(node.left), ev(node.right)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        if isinstance(node.op, ast.Pow) and isinstance(right, int) and abs(right) > 128:
            return UNKNOWN
        if isinstance(node.op, ast.LShift) and isinstance(right, int) and right > 128:
            return UNKNOWN
        if _refuse_big(node.op, left, right):
            return UNKNOWN
        return _check(_BINOPS[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp):
        operand = ev(node.operand)
        if operand is UNKNOWN:
            return UNKNOWN
        if isinstance(node.op, ast.Not):
            return not operand
        if isinstance(node.op, ast.USub):
            return -operand
        if isinstance(node.op, ast.UAdd):
            return +operand
        if isinstance(node.op, ast.Invert):
            return ~operand
        return UNKNOWN
    if isinstance(node, ast.Compare):
        left = ev(node.left)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = ev(comp)
            if left is UNKNOWN or right is UNKNOWN or type(op) not in _CMPOPS:
                return UNKNOWN
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        # as Python runs it: `a and b` stops at the first falsy operand, `a or b` at the first truthy one, so
        # `mode == "x" and x.dtype == d` is False once `mode` is known not "x", whatever the dtype
        stop = not isinstance(node.op, ast.And)
        value: Any = UNKNOWN
        for operand in node.values:
            value = ev(operand)
            if value is UNKNOWN:
                return UNKNOWN
            if bool(value) is stop:
                return value
        return value
    if isinstance(node, ast.IfExp):
        test = ev(node.test)
        if test is UNKNOWN:
            return UNKNOWN
        return ev(node.body) if test else ev(node.orelse)
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [ev(e) for e in node.elts]
        return UNKNOWN if any(i is UNKNOWN for i in items) else tuple(items)
    if isinstance(node, ast.Call):
        return _eval_call(node, env, args_name, ev)
    return UNKNOWN


def _eval_call(
    node: ast.Call, env: Mapping[str, Any], args_name: str | None, ev: Callable[[ast.AST], Any]
) -> Any:
    func = node.func
    # args.get("X", default) inside a heuristics lambda
    if (
        args_name
        and isinstance(func, ast.Attribute)
        and func.attr == "get"
        and isinstance(func.value, ast.Name)
        and func.value.id == args_name
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        key = node.args[0].value
        if isinstance(key, str) and key in env:
            return env[key]
        return ev(node.args[1]) if len(node.args) > 1 else None
    name = call_name(func)
    if name not in _FUNCS or node.keywords:
        return UNKNOWN
    if isinstance(func, ast.Attribute) and name not in ("next_power_of_2", "cdiv"):
        return UNKNOWN  # `x.max(...)` is a method of user data, not the builtin
    values = [ev(a) for a in node.args]
    if any(v is UNKNOWN for v in values):
        return UNKNOWN
    return _check(_FUNCS[name](*values))
