"""Fuse the max pass and the sum-of-exponentials pass of a softmax / log-sum-exp into one online pass.

    for ...: <loads>; m = tl.maximum(m, tl.max(x, axis=0))
    for ...: <the same loads>; s += tl.sum(tl.exp(x - m), axis=0)

becomes one loop that rescales the running sum whenever the maximum grows (`s * exp(m_old - m_new)`), so the
input is read once instead of twice. Two candidates: scalar running values, and per-lane running values reduced
once after the loop (no block reduction inside the loop). Rows whose first blocks are all -inf are handled (the
rescale never computes -inf - -inf). It declines unless both loops have the same header and the same statements
before the update, the sum's argument is `tl.exp(y - m)`, and nothing between the loops reads the maximum.
"""

from __future__ import annotations

import ast

from ..kernel_patterns import (
    additive_update,
    arange_sizes,
    assigned_names,
    axis_zero,
    count_name,
    first_loop_match,
    literal_init,
    one_d_size,
    previous_assignment,
)
from ..recipe_edits import block_size_text
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit


def _max_update(ks: KernelSource, stmt: ast.stmt) -> tuple[str, ast.AST] | None:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    m, value = stmt.targets[0].id, stmt.value
    if ks.is_tl(value, "maximum") and len(value.args) == 2 and not value.keywords:
        for mine, other in ((value.args[0], value.args[1]), (value.args[1], value.args[0])):
            if isinstance(mine, ast.Name) and mine.id == m and ks.is_tl(other, "max") and axis_zero(ks, other):
                return m, other.args[0]
    return None


def _sum_update(ks: KernelSource, stmt: ast.stmt, m: str) -> tuple[str, ast.AST] | None:
    """(s, y) for `s += tl.sum(tl.exp(y - m), axis=0)` or `s = s + tl.sum(...)`."""
    found = additive_update(stmt)
    if found is None:
        return None
    s, call = found
    if not (ks.is_tl(call, "sum") and axis_zero(ks, call)):
        return None
    inner = call.args[0]
    if not (ks.is_tl(inner, "exp") and len(inner.args) == 1):
        return None
    diff = inner.args[0]
    if not (
        isinstance(diff, ast.BinOp)
        and isinstance(diff.op, ast.Sub)
        and isinstance(diff.right, ast.Name)
        and diff.right.id == m
        and not count_name([diff.left], m)
    ):
        return None
    return s, diff.left


def _same_prefix(ks: KernelSource, a: list[ast.stmt], b: list[ast.stmt]) -> bool:
    return len(a) == len(b) and all(ks.segment(x) == ks.segment(y) for x, y in zip(a, b, strict=True))


def _candidates(recipe: SourceRecipe, ks: KernelSource, body: list[ast.stmt], i: int) -> list | None:
    first, second = body[i], None
    for j in range(i + 1, len(body)):
        if isinstance(body[j], ast.For):
            second = body[j]
            break
    if second is None or not first.body or not second.body:
        return None
    found = _max_update(ks, first.body[-1])
    if found is None:
        return None
    m, x = found
    summed = _sum_update(ks, second.body[-1], m)
    if summed is None:
        return None
    s, y = summed
    if ks.segment(first.target) != ks.segment(second.target) or ks.segment(first.iter) != ks.segment(second.iter):
        raise Decline("the max loop and the sum loop have different headers")
    prefix, prefix2 = first.body[:-1], second.body[:-1]
    if not _same_prefix(ks, prefix, prefix2):
        raise Decline("the two loops do not compute the same values before their updates")
    if {m, s} & assigned_names(prefix) or count_name(prefix, s) or count_name(prefix, m):
        raise Decline("the loops' other statements read or write the running values")
    between = body[i + 1 : body.index(second)]
    if count_name(between, m):
        raise Decline(f"statements between the loops read {m}")
    m_init = previous_assignment(body, first, m)
    if not (isinstance(m_init, ast.Assign) and literal_init(m_init.value) is not None):
        raise Decline(f"{m} is not initialised with a literal before the max loop")
    s_init = previous_assignment(body, second, s)
    if not (isinstance(s_init, ast.Assign) and literal_init(s_init.value) == 0.0):
        raise Decline(f"{s} is not initialised to 0 before the sum loop")

    text, tl = ks.text, ks.tl
    ninf = 'float("-inf")'
    inner = text.indent(first.body[0])
    outer = text.indent(first)
    between_text = text.source[text.line_end(first.end_lineno) : text.line_start(second.lineno)]
    header = text.source[text.line_start(first.lineno) : text.line_start(first.body[0].lineno)]
    prefix_text = text.source[text.line_start(first.body[0].lineno) : text.line_start(first.body[-1].lineno)]
    x_text, y_text = ks.segment(x), ks.segment(y)
    m_new, m_use = ks.fresh(f"{m}_new"), ks.fresh(f"{m}_safe")

    scalar_body = [
        f"{m_new} = {tl('maximum')}({m}, {tl('max')}({x_text}, axis=0))",
        f"{m_use} = {tl('where')}({m_new} == {ninf}, 0.0, {m_new})",
        f"{s} = {s} * {tl('exp')}({m} - {m_use}) + {tl('sum')}({tl('exp')}({y_text} - {m_use}), axis=0)",
        f"{m} = {m_new}",
    ]
    start, end = text.statement_lines(first, second)
    scalar_text = between_text + header + prefix_text + "".join(f"{inner}{line}\n" for line in scalar_body)
    out = [
        finish(
            recipe, ks.ctx, [Edit(start, end, scalar_text)], "Fuse the max and sum passes into one online pass",
            f"The max pass (line {first.lineno}) and the sum pass (line {second.lineno}) read the same data. One "
            "pass now keeps a running maximum and rescales the running sum by exp(old max - new max) when it "
            "grows: the input is read once instead of twice.",
        )
    ]
    sizes = arange_sizes(ks)
    size = one_d_size(ks, x, sizes)
    if size is not None and size == one_d_size(ks, y, sizes):
        size = block_size_text(ks, size)
        m_vec, s_vec = ks.fresh(f"{m}_lanes"), ks.fresh(f"{s}_lanes")
        f32 = tl("float32")
        before = [
            f"{m_vec} = {tl('full')}([{size}], {ks.segment(m_init.value)}, dtype={f32})",
            f"{s_vec} = {tl('zeros')}([{size}], dtype={f32})",
        ]
        lanes = [
            f"{m_new} = {tl('maximum')}({m_vec}, {x_text})",
            f"{m_use} = {tl('where')}({m_new} == {ninf}, 0.0, {m_new})",
            f"{s_vec} = {s_vec} * {tl('exp')}({m_vec} - {m_use}) + {tl('exp')}({y_text} - {m_use})",
            f"{m_vec} = {m_new}",
        ]
        after = [
            f"{m} = {tl('max')}({m_vec}, axis=0)",
            f"{m_use} = {tl('where')}({m} == {ninf}, 0.0, {m})",
            f"{s} = {tl('sum')}({s_vec} * {tl('exp')}({m_vec} - {m_use}), axis=0)",
        ]
        vector_text = (
            between_text
            + "".join(f"{outer}{line}\n" for line in before)
            + header
            + prefix_text
            + "".join(f"{inner}{line}\n" for line in lanes)
            + "".join(f"{outer}{line}\n" for line in after)
        )
        out.append(
            finish(
                recipe, ks.ctx, [Edit(start, end, vector_text)],
                "Fuse the max and sum passes into one online pass with per-lane running values",
                f"The max pass (line {first.lineno}) and the sum pass (line {second.lineno}) read the same data. "
                "One pass now keeps a running maximum and a rescaled running sum per lane and combines the lanes "
                "once after the loop: one read of the input, no block reduction inside the loop.",
            )
        )
    return out


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    return first_loop_match(ks, lambda body, i: _candidates(recipe, ks, body, i), "no max loop followed by a sum-of-exponentials loop over the same data")


RECIPE = SourceRecipe(
    name="online-softmax",
    title="One online pass for the maximum and the sum of exponentials",
    keys=("TL108", "TL125", "TL314"),
    build=_build,
)
