"""Loops in index form: pointers a loop advances (or walks back) by a loop-invariant step, rewritten as offsets
from the loop index, and loops that count down by one counting up.

    ptrs = x_ptr + cols
    for i in range(0, n_rows):
        x = tl.load(ptrs, mask=cmask)
        ptrs += n_cols

becomes

    ptrs = x_ptr + cols
    for i in range(0, n_rows):
        x = tl.load(ptrs + i * n_cols, mask=cmask)

The two compute the same addresses, but only the second says which iteration reads what: a schedule that splits the
loop over programs or steps it by blocks moves the loop variable, and an advanced pointer would not move with it
(emit.reorderable_loop declines such loops). Likewise `for i in range(n - 1, -1, -1):` becomes
`for i_up in range(0, (n - 1) - (-1)):` with `i = (n - 1) - i_up` first in its body: a blocked scan steps an
index that rises. Schedules retry
in this form (emit.ScheduleRecipe). A pointer is
rewritten only when the loop's step is its one assignment in the loop, unconditional, the block the loop sits in
sets it before the loop (so an enclosing loop starts it over), and nothing reads it after the loop before setting it
afresh.
"""

from __future__ import annotations

import ast

from ..kernel_patterns import assigned_names, simple_range
from ..recipe_kit import KernelSource
from ..source_edit import Edit, apply_edits

_BARE = (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript)


def index_form(ks: KernelSource) -> str | None:
    """The file with every such pointer of the kernel's loops rewritten and every loop that counts down by one
    counting up, or None when there is none."""
    edits: list[Edit] = []
    parents = {id(c): p for p in ast.walk(ks.fn) for c in ast.iter_child_nodes(p)}
    for block in _blocks(ks.fn):
        for position, loop in enumerate(block):
            if isinstance(loop, ast.For):
                edits += _loop_edits(ks, loop, block[:position], block[position + 1:], parents)
                edits += _forward(ks, loop)
    if not edits:
        return None
    try:
        return apply_edits(ks.text.source, edits)
    except ValueError:
        return None


def _blocks(fn: ast.FunctionDef) -> list[list[ast.stmt]]:
    out = []
    for node in ast.walk(fn):
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                out.append(body)
    return out


def _iteration(ks: KernelSource, loop: ast.For) -> str | None:
    """The text of the iteration count at loop variable `v`: `v`, `(v - start)`, `(v - start) // step`."""
    parts = simple_range(loop)
    if parts is None or not isinstance(loop.target, ast.Name):
        return None
    start, _, step = parts
    var = loop.target.id
    zero = isinstance(start, ast.Constant) and start.value == 0
    count = var if zero else f"({var} - {_operand(ks, start)})"
    if step is not None:
        count = f"({count} // {_operand(ks, step)})"
    return count


def _loop_edits(ks: KernelSource, loop: ast.For, before: list[ast.stmt], after: list[ast.stmt],
                parents: dict[int, ast.AST]) -> list[Edit]:
    count = _iteration(ks, loop)
    if count is None or any(isinstance(n, (ast.Break, ast.Continue)) for n in ast.walk(loop)):
        return []
    set_in_loop = assigned_names(loop.body) | _names(loop.target)
    set_before = assigned_names(before)
    edits: list[Edit] = []
    for position, stmt in enumerate(loop.body):
        step = _advance(stmt)
        if step is None:
            continue
        name, delta, sign = step
        stores = sum(1 for s in loop.body for n in ast.walk(s)
                     if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store))
        if (stores != 1 or name not in set_before or _names(delta) & set_in_loop
                or _read_after(ks, loop, after, name) or len(loop.body) == 1):
            continue
        unit = isinstance(delta, ast.Constant) and delta.value == 1
        delta_text = _operand(ks, delta)
        for index, other in enumerate(loop.body):
            if other is stmt:
                continue
            steps = count if index < position else f"({count} + 1)"
            offset = steps if unit else f"{steps} * {delta_text}"
            for node in ast.walk(other):
                if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                    edits.append(ks.text.replace(node, _at(parents.get(id(node)), node, f"{name} {sign} {offset}")))
        start, end = ks.text.statement_lines(stmt)
        edits.append(Edit(start, end, ""))
    return edits


def _forward(ks: KernelSource, loop: ast.For) -> list[Edit]:
    """`for i in range(hi, lo, -1):` -> `for i_up in range(0, hi - lo):` with `i = hi - i_up` first in the body:
    the same indices in the same order, counted by an index that rises (what a blocked or split loop steps)."""
    parts = simple_range(loop)
    if parts is None or not isinstance(loop.target, ast.Name):
        return []
    start, stop, step = parts
    if not (isinstance(step, ast.UnaryOp) and isinstance(step.op, ast.USub) and isinstance(step.operand, ast.Constant)
            and step.operand.value == 1):
        return []
    var = loop.target.id
    up = ks.fresh(f"{var}_up")
    first = _operand(ks, start)
    header = Edit(ks.text.start(loop.target), ks.text.end(loop.iter),
                  f"{up} in range(0, {first} - {_operand(ks, stop)})")
    return [header, ks.text.insert_before(loop.body[0], f"{ks.text.indent(loop.body[0])}{var} = {first} - {up}\n")]


def _advance(stmt: ast.stmt) -> tuple[str, ast.expr, str] | None:
    """(name, step, "+" or "-") of `p += step`, `p -= step`, `p = p + step` or `p = p - step`."""
    signs = {ast.Add: "+", ast.Sub: "-"}
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and type(stmt.op) in signs:
        return stmt.target.id, stmt.value, signs[type(stmt.op)]
    if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.BinOp) and type(stmt.value.op) in signs
            and isinstance(stmt.value.left, ast.Name) and stmt.value.left.id == stmt.targets[0].id):
        return stmt.targets[0].id, stmt.value.right, signs[type(stmt.value.op)]
    return None


def _read_after(ks: KernelSource, loop: ast.For, after: list[ast.stmt], name: str) -> bool:
    """Whether code after the loop reads the advanced value: the block's later statements up to one that sets the
    name afresh (`a_ptr = b_ptr` before a second pass), else anything later in the kernel."""
    for stmt in after:
        if (isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)
                and name not in _names(stmt.value)):
            return False
        if name in _names(stmt):
            return True
    return any(isinstance(n, ast.Name) and n.id == name and n.lineno > (loop.end_lineno or loop.lineno)
               for n in ast.walk(ks.fn))


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _operand(ks: KernelSource, node: ast.expr) -> str:
    text = ks.segment(node)
    return text if isinstance(node, _BARE) else f"({text})"


def _at(parent: ast.AST | None, node: ast.Name, text: str) -> str:
    """`text` (a sum) where the name stood: bare as a call's argument or the left operand of a sum."""
    if isinstance(parent, (ast.Call, ast.keyword)) and node is not getattr(parent, "func", None):
        return text
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Add, ast.Sub)) and parent.left is node:
        return text
    if isinstance(parent, (ast.Assign, ast.AugAssign)):
        return text
    return f"({text})"
