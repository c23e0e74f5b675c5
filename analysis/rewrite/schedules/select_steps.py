"""A running choice made under one condition (an argmax or argmin: a best value and its index), split into slices.

Such a loop carries values that are replaced together whenever the block offers a better candidate:

    upd = <block's best value> > best          # a condition of the carried values and the block's candidates
    best = tl.where(upd, <block's best value>, best)
    best_idx = tl.where(upd, <the block's index of it>, best_idx)

No atomic combines the pair (the index must follow the value), but two states combine by the loop's own step, a
slice's (best, best_idx) standing in for the block's candidates. Each slice stores its state in its own slot; whoever
finishes walks the slots in slice order and applies the user's condition and selects (copied, so a tie rule or a
NaN rule stays the user's). The slices are contiguous and walked in ascending order, so the step meets the
candidates in the order the single loop met them: a strict `>` still keeps the first index. Pure: AST in, kernel
text out.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ...computation.model import Accumulation
from ..kernel_patterns import assigned_names
from ..recipe_edits import substitute_all
from ..recipe_kit import Decline, KernelSource
from .emit import names_in
from .online_pairs import single_assign


@dataclass(frozen=True)
class SelectStep:
    vars: tuple[str, ...]  # the carried values chosen together, in the loop's order
    cond: ast.expr  # the condition (a named condition's value, or the expression written in the selects)
    candidates: tuple[ast.expr, ...]  # per var: the block's candidate for it
    candidate_first: tuple[bool, ...]  # per var: tl.where(cond, candidate, var) (True) or (cond, var, candidate)
    selects: tuple[ast.Assign, ...]  # per var: its update


def select_steps(ks: KernelSource, loop: ast.For, accs: list[Accumulation]) -> list[SelectStep]:
    """The loop's carried values updated by `v = tl.where(cond, candidate, v)` under one condition, as one step
    ([] when there are none); Decline when such values are there but their step cannot be replayed on a slice's
    state."""
    chosen = [a.var for a in accs if a.op == "select"]
    if not chosen:
        return []
    updates, conds = [], []
    for var in chosen:
        update = single_assign(loop, var)
        parts = _select(ks, update.value, var) if update is not None else None
        if parts is None:
            raise Decline(f"`{var}` is carried by the loop on line {loop.lineno} but not set once by "
                          f"`{var} = tl.where(condition, candidate, {var})`")
        updates.append(update)
        conds.append(parts)
    keys = {ast.dump(c) for c, _, _ in conds}
    if len(keys) != 1:
        raise Decline(f"line {loop.lineno}: {', '.join(chosen)} are chosen under different conditions")
    cond = conds[0][0]
    body = loop.body
    order = {v: body.index(u) for v, u in zip(chosen, updates, strict=True)}
    if isinstance(cond, ast.Name):
        named = single_assign(loop, cond.id)
        if named is None or body.index(named) > min(order.values()):
            raise Decline(f"line {loop.lineno}: the condition `{cond.id}` is not set once, before the selects")
        cond = named.value
    elif any(order[v] < max(order.values()) for v in names_in(cond) & set(chosen)):
        raise Decline(f"line {loop.lineno}: a select changes a value that a later select's condition reads")
    candidates = tuple(c for _, c, _ in conds)
    block_names = {c.id for c in candidates if isinstance(c, ast.Name)}
    inside = assigned_names(body) | names_in(loop.target)
    foreign = (names_in(cond) & inside) - set(chosen) - block_names
    if foreign:
        raise Decline(f"line {loop.lineno}: the condition reads {', '.join(sorted(foreign))}, a value of the block "
                      "that no carried value keeps (a slice's state cannot stand in for it)")
    _reads_only_in_step(loop, chosen, updates, cond)
    return [SelectStep(tuple(chosen), cond, candidates, tuple(f for _, _, f in conds), tuple(updates))]


def _select(ks: KernelSource, value: ast.expr, var: str) -> tuple[ast.expr, ast.expr, bool] | None:
    """(condition, candidate, candidate first) of `tl.where(c, candidate, var)` / `tl.where(c, var, candidate)`."""
    if not (ks.is_tl(value, "where") and len(value.args) == 3 and not value.keywords):
        return None
    cond, a, b = value.args
    own = [isinstance(x, ast.Name) and x.id == var for x in (a, b)]
    if own.count(True) != 1:
        return None
    candidate = b if own[0] else a
    if var in names_in(candidate):
        return None
    return cond, candidate, not own[0]


def _reads_only_in_step(loop: ast.For, chosen: list[str], updates: list[ast.Assign], cond: ast.expr) -> None:
    """The carried values are read nowhere in the loop but by the condition and their own selects."""
    allowed = {id(n) for u in updates for n in ast.walk(u)} | {id(n) for n in ast.walk(cond)}
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and node.id in chosen and id(node) not in allowed:
            raise Decline(f"line {node.lineno}: `{node.id}` is read outside its select step")


def fold_selects(ks: KernelSource, step: SelectStep, inits: dict[str, str], loads: dict[str, str], slot_of: str,
                 k: str, busy: str) -> str:
    """Kernel text that rebuilds the chosen values from the slots of the `busy` slices (those that took a step), in
    slice order, with the loop's own condition and selects. `inits`: start values (text); `loads`: var -> the
    workspace pointer text; `slot_of`: the slot offsets with `{k}` for the slice's index."""
    tl = ks.tl
    own = {v: ks.fresh(f"{v}_slice") for v in step.vars}
    texts = {c.id: own[v] for v, c in zip(step.vars, step.candidates, strict=True) if isinstance(c, ast.Name)}
    picked, count, slot = ks.fresh("slice_wins"), ks.fresh("busy_slices"), slot_of.replace("{k}", k)
    lines = [*(f"{v} = {inits[v]}" for v in step.vars), f"{count} = {busy}  # the slices that took a step",
             f"for {k} in range(0, {count}):  # the loop's own select step, one slice's state at a time",
             *(f"    {own[v]} = {tl('load')}({loads[v]} + {slot}, cache_modifier=\".cg\")" for v in step.vars),
             f"    {picked} = {substitute_all(ks, step.cond, texts)}"]
    for v, first in zip(step.vars, step.candidate_first, strict=True):
        args = f"{own[v]}, {v}" if first else f"{v}, {own[v]}"
        lines.append(f"    {v} = {tl('where')}({picked}, {args})")
    return "".join(f"{x}\n" for x in lines)
