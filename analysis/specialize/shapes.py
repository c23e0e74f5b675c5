"""The shape relations a kernel states in its own body between its constexprs and its tensor descriptors'
blocks: the ones Triton's front end checks.
- `x.reshape(S)` / `x.view(S)` / `tl.reshape(x, S)`: the numel of `x` equals the product of `S`;
- `tl.dot(a, b, acc)` / `tl.dot_scaled(a, sa, fa, b, sb, fb, acc)`: the inner sizes agree (packed `e2m1`
  operands hold two values per element, a scale covers 32 values), the outer sizes are those of `acc`; the
  operands of `dot_scaled` have the element type of their format (scales: uint8);
- `desc.store(offsets, value)`: the descriptor's block is the value's shape;
- every dimension of a `reshape`/`zeros`/`full`/`arange` shape is at least 1, of a dot operand at least 16;
  `tl.static_assert(cond)` holds.
Shapes are followed through the body's assignments (the latest one above the use), `.trans`/`.permute`/`.T`/
`.to`, elementwise operators, `tl.load` of a tile of pointers, and loads through descriptor arguments (whose
block dims are the unknowns `desc[i]`). Each relation keeps the `if` tests it runs under, so a branch the
values rule out adds none. Pure: AST in, relations out (`specialization_relations` solves them).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..source.safe_eval import UNKNOWN, call_name, evaluate

Dim = ast.expr
_SHAPE_CALLS = ("zeros", "full", "ones", "empty", "zeros_like")
_SAME_SHAPE_METHODS = ("to", "cast", "__neg__", "abs", "exp", "exp2", "sqrt", "sigmoid")
_SCALE_BLOCK = 32  # values one dot_scaled scale element covers (e8m0 scales)


def desc_dim(desc: str, i: int) -> str:
    return f"{desc}[{i}]"


Guard = tuple[tuple[ast.expr, bool], ...]  # the `if` tests (and their outcome) a statement runs under


@dataclass
class Relations:
    """Each relation carries its line and the guard it runs under (a branch the values rule out adds none)."""

    equal: list[tuple[list[Dim], list[Dim], int, Guard]] = field(default_factory=list)  # equal products
    true: list[tuple[ast.expr, int, Guard]] = field(default_factory=list)  # static_assert conditions
    positive: list[tuple[Dim, int, Guard]] = field(default_factory=list)  # shape dims >= 1
    dot_dims: list[tuple[Dim, int, Guard]] = field(default_factory=list)  # tl.dot tile dims >= 16
    operand_dtypes: list[tuple[str, str, Guard]] = field(
        default_factory=list
    )  # descriptor, dtype dot_scaled needs


def _guards(fn: ast.FunctionDef) -> dict[int, Guard]:
    """id(node) -> the guard of the statement holding it."""
    out: dict[int, Guard] = {}

    def visit(stmts: list[ast.stmt], guard: Guard) -> None:
        for stmt in stmts:
            for node in ast.walk(stmt):
                out[id(node)] = guard  # deeper statements are revisited with their own guard below
            if isinstance(stmt, ast.If):
                visit(stmt.body, (*guard, (stmt.test, True)))
                visit(stmt.orelse, (*guard, (stmt.test, False)))
            elif isinstance(stmt, (ast.For, ast.While, ast.With)):
                visit(stmt.body, guard)
                visit(getattr(stmt, "orelse", []), guard)

    visit(fn.body, ())
    return out


def live(guard: Guard, env: Mapping[str, Any]) -> bool:
    """False only when the values rule the branch out (an unknown test keeps it)."""
    for test, outcome in guard:
        value = evaluate(test, env)
        if value is not UNKNOWN and bool(value) != outcome:
            return False
    return True


class _Shapes:
    def __init__(self, fn: ast.FunctionDef, descriptors: Mapping[str, int]) -> None:
        self.descriptors = descriptors
        self.assigned: dict[str, list[tuple[int, ast.expr]]] = {}
        for node in ast.walk(fn):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        self.assigned.setdefault(t.id, []).append((node.lineno, node.value))
        for values in self.assigned.values():
            values.sort(key=lambda lv: lv[0])

    def value_of(self, name: str, line: int) -> ast.expr | None:
        """The latest assignment of `name` above `line` (straight-line reading: good enough for shapes)."""
        before = [v for lv, v in self.assigned.get(name, []) if lv < line]
        return before[-1] if before else None

    def shape(self, expr: ast.expr, depth: int = 0) -> list[Dim] | None:
        if depth > 20:
            return None
        if isinstance(expr, ast.Name):
            value = self.value_of(expr.id, expr.lineno)
            return self.shape(value, depth + 1) if value is not None else None
        if isinstance(expr, ast.Attribute) and expr.attr == "T":
            inner = self.shape(expr.value, depth + 1)
            return list(reversed(inner)) if inner and len(inner) == 2 else None
        if isinstance(expr, ast.BinOp):  # elementwise: the tensor operand's shape (broadcasts not followed)
            left, right = self.shape(expr.left, depth + 1), self.shape(expr.right, depth + 1)
            if left and right and len(left) != len(right):
                return left if len(left) > len(right) else right  # the lower rank broadcasts
            return left or right
        if not isinstance(expr, ast.Call):
            return None
        name = call_name(expr.func)
        method_of = expr.func.value if isinstance(expr.func, ast.Attribute) else None
        if isinstance(method_of, ast.Name) and method_of.id in self.descriptors and name == "load":
            return [ast.Name(id=desc_dim(method_of.id, i)) for i in range(self.descriptors[method_of.id])]
        if name in _SHAPE_CALLS and expr.args and isinstance(expr.args[0], (ast.Tuple, ast.List)):
            return list(expr.args[0].elts)
        if name == "arange" and len(expr.args) == 2:
            return [ast.BinOp(left=expr.args[1], op=ast.Sub(), right=expr.args[0])]
        if name in ("reshape", "view"):
            return new_shape(expr)
        if name in ("trans", "permute"):
            inner, order = self._permuted(expr)
            base = self.shape(inner, depth + 1) if inner is not None else None
            if base is None:
                return None
            if not order:
                return list(reversed(base)) if len(base) == 2 else None
            return [base[i] for i in order] if sorted(order) == list(range(len(base))) else None
        if name in ("dot", "dot_scaled"):
            a, b = _dot_operands(expr)
            sa, sb = self.shape(a, depth + 1) if a else None, self.shape(b, depth + 1) if b else None
            if sa and sb and len(sa) == len(sb) == 2:
                return [sa[0], sb[1]]
            return None
        if (
            name == "load"
            and expr.args
            and method_of is not None
            and call_name(method_of) in ("tl", "triton")
        ):
            return self.shape(expr.args[0], depth + 1)  # a tile of pointers loads a tile of the same shape
        if name in ("where", "maximum", "minimum") and len(expr.args) > 1:
            return self.shape(expr.args[1], depth + 1)
        if name in _SAME_SHAPE_METHODS and method_of is not None:
            return self.shape(method_of, depth + 1)
        return None

    def _permuted(self, call: ast.Call) -> tuple[ast.expr | None, list[int]]:
        is_method = isinstance(call.func, ast.Attribute) and call_name(call.func.value) not in (
            "tl",
            "triton",
        )
        inner = call.func.value if is_method and isinstance(call.func, ast.Attribute) else None
        args = list(call.args)
        if inner is None and args:
            inner, args = args[0], args[1:]
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = list(args[0].elts)
        order = [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, int)]
        return inner, order if len(order) == len(args) else []

    def origin(self, expr: ast.expr, depth: int = 0) -> str | None:
        """The descriptor argument a value was loaded from (through reshapes and transposes, not casts)."""
        if depth > 20:
            return None
        if isinstance(expr, ast.Name):
            value = self.value_of(expr.id, expr.lineno)
            return self.origin(value, depth + 1) if value is not None else None
        if isinstance(expr, ast.Attribute) and expr.attr == "T":
            return self.origin(expr.value, depth + 1)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            inner = expr.func.value
            if expr.func.attr == "load" and isinstance(inner, ast.Name) and inner.id in self.descriptors:
                return inner.id
            if expr.func.attr in ("reshape", "view", "trans", "permute"):
                return self.origin(inner, depth + 1)
        return None


def new_shape(call: ast.Call) -> list[Dim] | None:
    """The shape a reshape/view call asks for (`x.reshape(a, b)`, `x.reshape((a, b))`, `tl.reshape(x, (a, b))`)."""
    is_function = isinstance(call.func, ast.Attribute) and call_name(call.func.value) in ("tl", "triton")
    args = [a for a in call.args[1 if is_function or isinstance(call.func, ast.Name) else 0 :]]
    if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
        return list(args[0].elts)
    if args and not any(isinstance(a, ast.Starred) for a in args):
        return args
    return None


def _reshaped(call: ast.Call) -> ast.expr | None:
    if isinstance(call.func, ast.Attribute) and call_name(call.func.value) not in ("tl", "triton"):
        return call.func.value
    return call.args[0] if call.args else None


def _dot_operands(call: ast.Call) -> tuple[ast.expr | None, ast.expr | None]:
    scaled = call_name(call.func) == "dot_scaled"
    positions = (0, 3) if scaled else (0, 1)
    args = call.args
    return (
        args[positions[0]] if len(args) > positions[0] else None,
        args[positions[1]] if len(args) > positions[1] else None,
    )


def _format(call: ast.Call, i: int) -> str | None:
    if len(call.args) > i and isinstance(call.args[i], ast.Constant) and isinstance(call.args[i].value, str):
        return call.args[i].value
    return None


_FORMAT_DTYPES = {"e4m3": "fp8e4nv", "e5m2": "fp8e5", "e2m1": "u8", "bf16": "bf16", "fp16": "fp16"}


def relations(fn: ast.FunctionDef, descriptors: Mapping[str, int]) -> Relations:
    """The shape relations of `fn`'s body; `descriptors` are its descriptor arguments and their ranks."""
    shapes = _Shapes(fn, descriptors)
    guards = _guards(fn)
    out = Relations()
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node.func)
        at = (node.lineno, guards.get(id(node), ()))
        if name in ("reshape", "view"):
            target = new_shape(node)
            inner = _reshaped(node)
            before = shapes.shape(inner) if inner is not None else None
            if target:
                out.positive += [(d, *at) for d in target if not isinstance(d, ast.Constant)]
                if before:
                    out.equal.append((before, target, *at))
        elif name in (*_SHAPE_CALLS, "arange"):
            dims = shapes.shape(node)
            out.positive += [(d, *at) for d in dims or [] if not isinstance(d, ast.Constant)]
        elif name == "static_assert" and node.args:
            out.true.append((node.args[0], *at))
        elif name in ("dot", "dot_scaled"):
            _dot_relations(node, shapes, out, at)
        elif (
            name == "store"
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in descriptors
            and len(node.args) > 1
        ):
            value = shapes.shape(node.args[1])
            desc = node.func.value.id
            if value and len(value) == descriptors[desc]:
                for i, d in enumerate(value):
                    out.equal.append(([ast.Name(id=desc_dim(desc, i))], [d], *at))
    return out


def _dot_relations(call: ast.Call, shapes: _Shapes, out: Relations, at: tuple[int, Guard]) -> None:
    a, b = _dot_operands(call)
    sa = shapes.shape(a) if a is not None else None
    sb = shapes.shape(b) if b is not None else None
    scaled = call_name(call.func) == "dot_scaled"
    acc_at = 6 if scaled else 2
    acc = call.args[acc_at] if len(call.args) > acc_at else None
    acc = acc or next((k.value for k in call.keywords if k.arg == "acc"), None)
    s_acc = shapes.shape(acc) if acc is not None else None
    pack_a = ast.Constant(value=2 if scaled and _format(call, 2) == "e2m1" else 1)
    pack_b = ast.Constant(value=2 if scaled and _format(call, 5) == "e2m1" else 1)
    if sa and sb and len(sa) == len(sb) == 2:
        out.dot_dims += [(d, *at) for d in (*sa, *sb) if not isinstance(d, ast.Constant)]
        out.equal.append(([sa[1], pack_a], [sb[0], pack_b], *at))  # the reduction sizes agree
        if s_acc and len(s_acc) == 2:
            out.equal += [([sa[0]], [s_acc[0]], *at), ([sb[1]], [s_acc[1]], *at)]
    if not scaled or len(call.args) < 6:
        return
    for operand, scale, fmt_at, pack, outer in (
        (a, call.args[1], 2, pack_a, 0),
        (b, call.args[4], 5, pack_b, 1),
    ):
        s_scale = shapes.shape(scale)
        s_op = shapes.shape(operand) if operand is not None else None
        if s_scale and s_op and len(s_scale) == len(s_op) == 2:
            out.equal.append(([s_scale[0]], [s_op[outer]], *at))
            out.equal.append(([s_scale[1], ast.Constant(value=_SCALE_BLOCK)], [s_op[1 - outer], pack], *at))
        fmt = _format(call, fmt_at)
        source = shapes.origin(operand) if operand is not None else None
        if source and fmt in _FORMAT_DTYPES:
            out.operand_dtypes.append((source, _FORMAT_DTYPES[fmt], at[1]))
        scale_source = shapes.origin(scale)
        if scale_source:
            out.operand_dtypes.append((scale_source, "u8", at[1]))  # e8m0 scales travel as uint8
