"""A running maximum and a sum kept relative to it (online softmax, logsumexp, a flash denominator), split into slices.

Such a loop carries `m` (the largest value so far) and `s` (a sum of terms relative to `m`), rescaling `s` whenever
`m` grows:

    m_new = tl.maximum(m, <block's max>)
    <statements of m and m_new alone: an -inf guard, the rescale factor>
    s = s * R + <block's terms>        # R rescales a sum relative to m to one relative to the new maximum
    m = m_new

Neither is a partial that atomics combine (the slices' sums are relative to different maxima), but two states
combine by the loop's own step, with a slice's (m_k, s_k) standing in for a block: its max is m_k and its terms
are s_k rescaled from m_k, that is `s_k * R` with m_k for m. Each slice stores its pair in its own slot; whoever
finishes walks the slots and folds them in with the user's statements (copied, so a guard or an exp2 stays the
user's). Several sums may be kept relative to one maximum (flash decoding: the denominator and the P@V
accumulator): they fold together, under one new maximum. Pure: AST in, kernel text out.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ...computation.model import Accumulation
from ..kernel_patterns import assigned_names
from ..recipe_edits import paren, substitute_all
from ..recipe_kit import Decline, KernelSource
from .emit import names_in


@dataclass(frozen=True)
class OnlinePair:
    max_var: str  # m
    sums: tuple[str, ...]  # the sums kept relative to m (s; or l and acc)
    new_max: ast.Assign  # m_new = tl.maximum(m, X)
    block_max: ast.expr  # X, the block's maximum
    derived: tuple[ast.Assign, ...]  # statements of m and m_new alone, in order (a guard, the rescale factor)
    rescales: tuple[ast.expr, ...]  # per sum, R in `s = s * R + E`

    @property
    def variables(self) -> tuple[str, ...]:
        return (self.max_var, *self.sums)


def online_pairs(ks: KernelSource, loop: ast.For, accs: list[Accumulation]) -> list[OnlinePair]:
    """Every running max of the loop's accumulators with the sums updated relative to it in the online form (one
    entry per max); [] when there is none."""
    found = _single_pairs(ks, loop, accs)
    merged: dict[str, OnlinePair] = {}
    for p in found:
        had = merged.get(p.max_var)
        if had is None:
            merged[p.max_var] = p
            continue
        merged[p.max_var] = OnlinePair(p.max_var, had.sums + p.sums, had.new_max, had.block_max, had.derived,
                                       had.rescales + p.rescales)
    return list(merged.values())


def _single_pairs(ks: KernelSource, loop: ast.For, accs: list[Accumulation]) -> list[OnlinePair]:
    maxes = {a.var for a in accs if a.op == "max"}
    out = []
    for acc in accs:
        if acc.op != "sum":
            continue
        update = single_assign(loop, acc.var)
        found = _rescaled(update, acc.var) if update is not None else None
        if found is None:
            continue
        rescale, terms = found
        if acc.var in names_in(terms):
            continue
        reads = _closure(loop, names_in(rescale))
        paired = [m for m in maxes if m in reads]
        if len(paired) != 1:
            continue
        out.append(_pair(ks, loop, paired[0], acc.var, update, rescale))
    return out


def single_assign(loop: ast.For, name: str) -> ast.Assign | None:
    """The one top-level statement of the loop body that sets `name` (and nothing else does, at any depth)."""
    top = [s for s in loop.body if isinstance(s, ast.Assign) and len(s.targets) == 1
           and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
    nested = [n for s in loop.body if s not in top for n in ast.walk(s)
              if isinstance(n, (ast.Assign, ast.AugAssign)) and name in assigned_names([n])]
    return top[0] if len(top) == 1 and not nested else None


def _rescaled(update: ast.Assign, var: str) -> tuple[ast.expr, ast.expr] | None:
    """(R, E) of `s = s * R + E` (any operand order of the sum and the product), else None."""
    value = update.value
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return None
    for product, terms in ((value.left, value.right), (value.right, value.left)):
        if isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult):
            for own, rescale in ((product.left, product.right), (product.right, product.left)):
                if isinstance(own, ast.Name) and own.id == var and var not in names_in(rescale):
                    return rescale, terms
    return None


def _closure(loop: ast.For, names: set[str]) -> set[str]:
    """`names` and every name the loop body's statements that set them read, transitively (what a value rests on)."""
    sets = {s.targets[0].id: names_in(s.value) for s in loop.body if isinstance(s, ast.Assign)
            and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)}
    out, todo = set(names), list(names)
    while todo:
        for n in sets.get(todo.pop(), set()) - out:
            out.add(n)
            todo.append(n)
    return out


def _pair(ks: KernelSource, loop: ast.For, m: str, s: str, update: ast.Assign, rescale: ast.expr) -> OnlinePair:
    body = loop.body
    m_update = single_assign(loop, m)
    if m_update is None or not isinstance(m_update.value, ast.Name):
        raise Decline(f"`{m}` and `{s}` look like an online max and sum, but `{m}` is not set once from a new "
                      "maximum (`m = m_new`)")
    new = single_assign(loop, m_update.value.id)
    block_max = _other_argument(ks, new.value, m) if new is not None else None
    if new is None or block_max is None:
        raise Decline(f"line {m_update.lineno}: `{ks.segment(m_update)}` does not take the maximum of `{m}` "
                      "and a block's")
    if not body.index(new) < body.index(update) < body.index(m_update):
        raise Decline(f"line {update.lineno}: the sum is not rescaled between the new maximum and `{m}`'s update")
    # statements between the new maximum and the sum's update that read only the two maxima (and values set
    # before the loop): they are the step's own arithmetic, run again for every slice's state
    inside = assigned_names(body) | names_in(loop.target)  # the loop variable is the block's, too
    known = {m, new.targets[0].id}
    derived = []
    for st in body[body.index(new) + 1: body.index(update)]:
        if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                and names_in(st.value) & inside <= known):
            derived.append(st)
            known.add(st.targets[0].id)
    if names_in(rescale) & inside - known:
        raise Decline(f"line {update.lineno}: the factor that rescales `{s}` reads values of the block, not only "
                      f"the old and new maximum")
    return OnlinePair(m, (s,), new, block_max, tuple(derived), (rescale,))


def _other_argument(ks: KernelSource, value: ast.expr, m: str) -> ast.expr | None:
    if not (ks.is_tl(value, "maximum") and len(value.args) == 2 and not value.keywords):
        return None
    own = [isinstance(a, ast.Name) and a.id == m for a in value.args]
    return value.args[own.index(False)] if own.count(True) == 1 else None


def fold_slices(ks: KernelSource, pair: OnlinePair, inits: dict[str, str], loads: dict[str, str],
                slot_of: dict[str, str], k: str, busy: str) -> str:
    """Kernel text that rebuilds (m, s...) from the slots of the `busy` slices (those that took a step: an empty
    slice's -inf maximum could meet the user's step unguarded), the loop's own step folding one state at a time.
    `inits`: the group's start values (text); `loads`: var -> the workspace pointer text; `slot_of`: var -> its
    slot offsets with `{k}` for the slice's index."""
    tl, m = ks.tl, pair.max_var
    m_k = ks.fresh(f"{m}_slice")
    s_k = {s: ks.fresh(f"{s}_slice") for s in pair.sums}
    call = pair.new_max.value
    args = [m_k if arg is pair.block_max else ks.segment(arg) for arg in call.args]
    new = f"{pair.new_max.targets[0].id} = {ks.segment(call.func)}({', '.join(args)})"
    # the slice's factor: the user's text, the step's own names spelled out, the slice's maximum for the old one
    texts = {m: m_k}
    for d in pair.derived:
        texts[d.targets[0].id] = paren(substitute_all(ks, d.value, texts))
    count = ks.fresh("busy_slices")
    lines = [*(f"{v} = {inits[v]}" for v in pair.variables), f"{count} = {busy}  # the slices that took a step",
             f"for {k} in range(0, {count}):  # the loop's own step, one slice's state at a time",
             f"    {m_k} = {tl('load')}({loads[m]} + {slot_of[m].replace('{k}', k)}, cache_modifier=\".cg\")",
             *(f"    {s_k[s]} = {tl('load')}({loads[s]} + {slot_of[s].replace('{k}', k)}, cache_modifier=\".cg\")"
               for s in pair.sums),
             f"    {new}",
             *(f"    {ks.segment(d)}" for d in pair.derived)]
    for s, rescale in zip(pair.sums, pair.rescales, strict=True):
        terms = substitute_all(ks, rescale, texts)
        lines.append(f"    {s} = {s} * {paren(ks.segment(rescale))} + {s_k[s]} * {paren(terms)}")
    lines.append(f"    {m} = {pair.new_max.targets[0].id}")
    return "".join(f"{x}\n" for x in lines)
