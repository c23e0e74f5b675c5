"""Fold a max pass into the pass that uses it: one online pass whose accumulators are rescaled when the max grows.

    for ...: <recompute x>; m = tl.maximum(m, R(x))
    for ...: <recompute x, more loads>; p = tl.exp(x - m) ...; l += tl.sum(p); acc += tl.dot(p, v)

becomes one loop that computes `m_new = max(m, R(x))`, uses it in every `tl.exp(. - m)`, and rescales every
accumulator by `alpha = exp(m - m_new)` before adding to it (`acc = acc * alpha + ...`): the first pass's loads
disappear. This is the step from a two-pass softmax-weighted sum (attention, softmax with a weighted output,
log-sum-exp with a payload) to the one-pass (flash) form. It is exact only for accumulators that are linear in the
exponentials, so every accumulator's update is checked to be linear (sums, products with values that do not depend
on the max, tl.dot, tl.where with a zero branch, casts) and to start from zero. All-masked blocks are safe (a max
of -inf is rescaled against 0, never -inf - -inf).

The max loop's other statements must be recomputed, in order and by the same text, by the second loop, or be
assignments only the max needs (e.g. scores masked with -inf): those are recomputed in the one loop under fresh
names. Declines: the max loop writes memory or cannot be recomputed that way;
the loops' headers differ; the max is read in the second loop outside `tl.exp(e - m)`, or between the loops; an
accumulator is not linear in the exponentials or not zero-initialised.
"""

from __future__ import annotations

import ast

from ..kernel_patterns import (
    additive_update,
    assigned_names,
    count_name,
    first_loop_match,
    is_zero,
    literal_init,
    loaded_names,
    previous_assignment,
)
from ..recipe_edits import substitute, substitute_all
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit

LINEAR_WRAPPERS = ("sum", "trans", "reshape", "expand_dims", "broadcast_to")


def _max_update(ks: KernelSource, stmt: ast.stmt) -> tuple[str, ast.AST] | None:
    """(m, other) for `m = tl.maximum(m, other)`."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    m, value = stmt.targets[0].id, stmt.value
    if ks.is_tl(value, "maximum") and len(value.args) == 2 and not value.keywords:
        for mine, other in ((value.args[0], value.args[1]), (value.args[1], value.args[0])):
            if isinstance(mine, ast.Name) and mine.id == m and not count_name([other], m):
                return m, other
    return None


def _exp_of_m(ks: KernelSource, node: ast.AST, m: str) -> bool:
    """`tl.exp(e - m)` with m not inside e."""
    if not (ks.is_tl(node, "exp") and len(node.args) == 1 and not node.keywords):
        return False
    diff = node.args[0]
    return (
        isinstance(diff, ast.BinOp) and isinstance(diff.op, ast.Sub) and isinstance(diff.right, ast.Name)
        and diff.right.id == m and not count_name([diff.left], m)
    )


class _Linearity:
    """Degree of an expression in the exponentials `tl.exp(e - m)` (0, 1, or None when not polynomial-linear)."""

    def __init__(self, ks: KernelSource, m: str) -> None:
        self.ks, self.m = ks, m
        self.linear: set[str] = set()  # names holding degree-1 values

    def degree(self, node: ast.AST) -> int | None:
        ks = self.ks
        if _exp_of_m(ks, node, self.m):
            return 1
        if isinstance(node, ast.Name):
            return 1 if node.id in self.linear else 0
        names = loaded_names(node)
        if not names & (self.linear | {self.m}):
            return 0
        if isinstance(node, ast.BinOp):
            left, right = self.degree(node.left), self.degree(node.right)
            if left is None or right is None:
                return None
            if isinstance(node.op, ast.Mult):
                return left + right if left + right <= 1 else None
            if isinstance(node.op, ast.Div):
                return left if right == 0 else None
            if isinstance(node.op, ast.Add | ast.Sub):
                return left if left == right else None
            return None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self.degree(node.operand)
        if isinstance(node, ast.Subscript):  # x[:, None]: a view of the same values
            return self.degree(node.value) if self.degree(node.slice) == 0 else None
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and ks.tl_call(node) is None and node.func.attr == "to":
                return self.degree(node.func.value)
            if ks.is_tl(node, *LINEAR_WRAPPERS) and node.args:
                rest = [self.degree(a) for a in [*node.args[1:], *(k.value for k in node.keywords)]]
                return self.degree(node.args[0]) if all(d == 0 for d in rest) else None
            if ks.is_tl(node, "dot") and len(node.args) == 2:
                a, b = self.degree(node.args[0]), self.degree(node.args[1])
                return a + b if a is not None and b is not None and a + b <= 1 else None
            if ks.is_tl(node, "where") and len(node.args) == 3:
                cond, a, b = (self.degree(x) for x in node.args)
                if cond != 0:
                    return None
                if a == 1 and (b == 1 or is_zero(node.args[2])):
                    return 1
                if b == 1 and is_zero(node.args[1]):
                    return 1
                return 0 if a == b == 0 else None
        return None


def _zero_init(ks: KernelSource, stmt: ast.stmt | None) -> bool:
    if not isinstance(stmt, ast.Assign):
        return False
    value = stmt.value
    if literal_init(value) == 0.0:
        return True
    if ks.is_tl(value, "zeros", "zeros_like"):
        return True
    return ks.is_tl(value, "full") and len(value.args) >= 2 and literal_init(value.args[1]) == 0.0


def _candidate(recipe: SourceRecipe, ks: KernelSource, body: list[ast.stmt], i: int) -> list | None:
    first = body[i]
    second = next((s for s in body[i + 1 :] if isinstance(s, ast.For)), None)
    if second is None or not isinstance(first, ast.For) or not first.body:
        return None
    found = _max_update(ks, first.body[-1])
    if found is None:
        return None
    m, other = found
    if not any(_exp_of_m(ks, n, m) for n in ast.walk(second)):
        return None
    if ks.segment(first.target) != ks.segment(second.target) or ks.segment(first.iter) != ks.segment(second.iter):
        raise Decline("the max loop and the loop using the max have different headers")
    # every other statement of the max loop is recomputed, in order and by the same text, by the second loop, or
    # (a value only the max needs, e.g. the scores masked with -inf) recomputed there under a fresh name
    texts = [ks.segment(s) for s in second.body]
    at = -1
    renamed: dict[str, str] = {}
    extras: list[str] = []
    for stmt in first.body[:-1]:
        text_of = ks.segment(stmt)
        if not loaded_names(stmt) & set(renamed) and text_of in texts[at + 1 :]:
            at = texts.index(text_of, at + 1)
            continue
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            raise Decline(f"line {stmt.lineno}: the second loop does not recompute `{text_of[:50]}`")
        if any(ks.is_tl(n, "store", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas")
               for n in ast.walk(stmt)):
            raise Decline(f"line {stmt.lineno}: the max loop writes memory")
        value = substitute_all(ks, stmt.value, renamed)
        renamed[stmt.targets[0].id] = ks.fresh(f"{stmt.targets[0].id}_for_max")
        extras.append(f"{renamed[stmt.targets[0].id]} = {value}")
    needed = (loaded_names(other) | {n for e in extras for n in loaded_names(ast.parse(e))}) - set(renamed.values())
    for name in needed & assigned_names(first.body):
        if name not in renamed and len([s for s in second.body[: at + 1] if name in assigned_names([s])]) != 1:
            raise Decline(f"the second loop assigns {name} more than once before the max can be computed")
    if m in assigned_names(first.body[:-1]) or count_name(first.body[:-1], m):
        raise Decline(f"the max loop's other statements use {m}")
    between = body[i + 1 : body.index(second)]
    if count_name(between, m):
        raise Decline(f"statements between the loops read {m}")
    m_init = previous_assignment(body, first, m)
    if not (isinstance(m_init, ast.Assign) and m_init.value is not None):
        raise Decline(f"{m} is not initialised before the max loop")
    # in the second loop the max appears only inside tl.exp(e - m), after the recomputed statements
    exps = [n for n in ast.walk(second) if _exp_of_m(ks, n, m)]
    uses = count_name(second.body, m)
    if uses != len(exps) or m in assigned_names(second.body):
        raise Decline(f"the second loop uses {m} outside tl.exp(... - {m})")
    first_use = next(j for j, s in enumerate(second.body) if count_name([s], m))
    if first_use <= at:
        raise Decline(f"the second loop reads {m} before it has recomputed the max's operand")
    lin = _Linearity(ks, m)
    updates: list[tuple[ast.stmt, str, ast.AST]] = []
    for stmt in second.body[first_use:]:
        upd = additive_update(stmt)
        value = upd[1] if upd else getattr(stmt, "value", None)
        degree = lin.degree(value) if value is not None else 0
        if upd is not None and degree == 1:
            acc = upd[0]
            if not _zero_init(ks, previous_assignment(body, second, acc)):
                raise Decline(f"the accumulator {acc} does not start from zero right before the loop")
            updates.append((stmt, acc, upd[1]))
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            if degree is None:
                raise Decline(f"line {stmt.lineno}: `{stmt.targets[0].id}` is not linear in the exponentials")
            if degree == 1:
                lin.linear.add(stmt.targets[0].id)
        elif degree != 0:
            raise Decline(f"line {stmt.lineno}: a use of the exponentials this recipe cannot rescale")
    if not updates:
        raise Decline("no accumulator of the exponentials in the second loop")
    for acc in {a for _, a, _ in updates}:
        if sum(1 for _, a, _ in updates if a == acc) != 1 or count_name(
            [s for s in second.body if all(s is not u for u, _, _ in updates)], acc
        ):
            raise Decline(f"the accumulator {acc} is read or updated more than once in the loop")

    text, tl = ks.text, ks.tl
    m_new, m_use, alpha = ks.fresh(f"{m}_new"), ks.fresh(f"{m}_safe"), ks.fresh("alpha")
    ninf = 'float("-inf")'
    anchor = second.body[at] if at >= 0 else None
    indent = text.indent(second.body[0])
    fold = "".join(f"{indent}{line}\n" for line in extras) + (
        f"{indent}{m_new} = {tl('maximum')}({m}, {substitute_all(ks, other, renamed)})\n"
        f"{indent}{m_use} = {tl('where')}({m_new} == {ninf}, 0.0, {m_new})\n"
        f"{indent}{alpha} = {tl('exp')}({m} - {m_use})\n"
    )
    start, end = text.statement_lines(first)
    edits = [
        Edit(start, end, ""),  # the max pass goes
        text.insert_after(anchor, fold) if anchor is not None else text.insert_before(second.body[0], fold),
    ]
    in_updates = {id(n) for stmt, _, _ in updates for n in ast.walk(stmt)}
    for node in exps:
        if id(node) not in in_updates:
            edits.append(text.replace(node.args[0].right, m_use))
    for stmt, acc, value in updates:
        edits.append(text.replace(stmt, f"{acc} = {acc} * {alpha} + {substitute(ks, value, m, m_use)}"))
    edits.append(text.insert_after(second.body[-1], f"{indent}{m} = {m_new}\n"))
    names = ", ".join(sorted({a for _, a, _ in updates}))
    return [finish(
        recipe, ks.ctx, edits, "Fold the max pass into one online pass (rescaled accumulators)",
        f"The loop at line {first.lineno} only finds the maximum that the loop at line {second.lineno} subtracts "
        f"before exponentiating. One pass now keeps a running maximum and rescales {names} by exp(old max - new "
        "max) whenever it grows (exact: every accumulator is linear in the exponentials), so the data the first "
        "loop read is read once.",
    )]


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    return first_loop_match(ks, lambda body, i: _candidate(recipe, ks, body, i), "no max loop followed by a loop that exponentiates against that max")


RECIPE = SourceRecipe(
    name="online-rescale",
    title="One online pass: running max with rescaled accumulators (flash form)",
    keys=("TL108", "TL125", "TL314"),
    build=_build,
)
