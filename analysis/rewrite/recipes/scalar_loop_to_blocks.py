"""Turn a scalar loop (one element per iteration) into a loop over blocks: a block scan or a block reduction.

    acc = 0.0
    for i in range(0, n):
        x = tl.load(x_row + i)
        acc += x
        tl.store(out_row + i, acc)          # optional: a running value makes it a scan

becomes a loop over blocks of BLOCK elements: every `i` turns into `offs = i + tl.arange(0, BLOCK)`, loads and
stores that depend on it are masked at the tail, the update's value is summed per block (`tl.sum`), and reads of
the running value after the update use `acc + tl.cumsum(part)` (an inclusive scan). A running product (`acc *= x`)
alike: masked lanes are 1, the scan is `acc * tl.cumprod(part)` and the carry its last lane. It declines on nested
control flow, reductions inside the loop, reads of the accumulator before its update (an exclusive scan) and
stores that do not depend on the loop index.
"""

from __future__ import annotations

import ast

from ..kernel_patterns import (
    REDUCTIONS,
    add_terms,
    count_name,
    literal_init,
    load_parts,
    previous_assignment,
    simple_range,
    walk_statements,
)
from ..recipe_edits import substitute
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit, SourceText, apply_edits

BLOCK = 1024
_WRITES = ("store", "atomic_add")


def _update(stmt: ast.stmt) -> tuple[str, list[ast.AST], str] | None:
    """(accumulator, the terms combined into it, "add" | "mul") for `acc += e`, `acc = acc + e1 + e2`, `acc *= e`."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add | ast.Mult) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, [stmt.value], "add" if isinstance(stmt.op, ast.Add) else "mul"
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        acc = stmt.targets[0].id
        terms = add_terms(stmt.value)
        mine = [t for t in terms if isinstance(t, ast.Name) and t.id == acc]
        if len(terms) > 1 and len(mine) == 1:
            return acc, [t for t in terms if t is not mine[0]], "add"
    return None


def _statement_text(ks: KernelSource, stmt: ast.AST, i: str, offs: str, mask: str, run: dict[str, str]) -> str:
    """The statement with i -> offs, the accumulator -> its running value, masks added to i-dependent memory ops."""
    local = SourceText(ks.segment(stmt))
    base = ks.text.start(stmt)
    edits: list[Edit] = []

    def span(node: ast.AST) -> tuple[int, int]:
        return ks.text.start(node) - base, ks.text.end(node) - base

    for node in ast.walk(stmt):
        if ks.is_tl(node, "load", *_WRITES):
            name = ks.tl_call(node)
            if name == "load":
                pointer, old_mask, other = load_parts(ks, node)
            else:
                if len(node.args) != 2 or node.keywords:
                    raise Decline(f"line {node.lineno}: tl.{name} with a mask or options")
                pointer, old_mask, other = node.args[0], None, None
            if not count_name([pointer], i):
                if name != "load":
                    raise Decline(f"line {node.lineno}: a store that does not depend on {i}")
                continue
            if old_mask is not None:
                raise Decline(f"line {node.lineno}: the access already has a mask")
            def sub(part: ast.AST) -> str:
                text = substitute(ks, part, i, offs)
                for target, new in run.items():
                    text = _swap(text, target, new)
                return text

            lo, hi = span(node)
            head = local.source[lo:hi]
            head = head[: head.index("(") + 1]
            if name == "load":
                rest = f"mask={mask}, other={sub(other) if other is not None else '0.0'}"
                edits.append(Edit(lo, hi, f"{head}{sub(pointer)}, {rest})"))
            else:
                edits.append(Edit(lo, hi, f"{head}{sub(pointer)}, {sub(node.args[1])}, mask={mask})"))
    outer = list(edits)
    taken = [(e.start, e.end) for e in outer]
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and (node.id == i or node.id in run):
            lo, hi = span(node)
            if any(a <= lo and hi <= b for a, b in taken):
                continue
            outer.append(Edit(lo, hi, offs if node.id == i else run[node.id]))
    return apply_edits(local.source, outer)


def _swap(text: str, name: str, new: str) -> str:
    tree = ast.parse(text, mode="eval")
    spans = sorted(
        (n.col_offset, n.end_col_offset) for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
    )
    for lo, hi in reversed(spans):
        text = text[:lo] + new + text[hi:]
    return text


def _rewrite(ks: KernelSource, loop: ast.For, body_of_loop: list[ast.stmt]) -> tuple[list[Edit], str] | None:
    bounds = simple_range(loop)
    if bounds is None or (bounds[2] is not None and not (isinstance(bounds[2], ast.Constant) and bounds[2].value == 1)):
        return None
    updates = [(n, u) for n, s in enumerate(loop.body) if (u := _update(s)) is not None]
    if len(updates) != 1:
        return None
    position, (acc, terms, op) = updates[0]
    init = previous_assignment(body_of_loop, loop, acc)
    if not (isinstance(init, ast.Assign) and literal_init(init.value) is not None):
        return None
    i = loop.target.id
    if not count_name([loop], i) > 1:
        return None  # the index is never used: not a scalar walk
    for stmt in loop.body:
        if not isinstance(stmt, ast.Assign | ast.AugAssign | ast.Expr):
            raise Decline(f"line {stmt.lineno}: control flow inside the scalar loop")
        if isinstance(stmt, ast.Expr) and not ks.is_tl(stmt.value, *_WRITES):
            raise Decline(f"line {stmt.lineno}: an expression statement other than a store")
        for node in ast.walk(stmt):
            if ks.is_tl(node, *REDUCTIONS, "dot", "cumsum", "associative_scan", "arange"):
                raise Decline(f"line {stmt.lineno}: a block operation inside the scalar loop")
    if count_name(loop.body[:position], acc) or count_name(terms, acc):
        raise Decline(f"{acc} is read before its update (an exclusive scan)")
    if not any(ks.is_tl(n, "load") and count_name([n], i) for n in ast.walk(loop)):
        return None
    offs, mask = ks.fresh(f"offs_{i}"), ks.fresh(f"mask_{i}")
    part = ks.fresh(f"{acc}_part")
    scan = bool(count_name(loop.body[position + 1 :], acc))
    running = ks.fresh(f"{acc}_scan") if scan else None
    indent = ks.text.indent(loop.body[0])
    tl = ks.tl
    lines = [f"{offs} = {i} + {tl('arange')}(0, {BLOCK})", f"{mask} = {offs} < {ks.segment(bounds[1])}"]
    for n, stmt in enumerate(loop.body):
        if n == position:
            value_text = " + ".join(_statement_text(ks, term, i, offs, mask, {}) for term in terms)
            identity = "0.0" if op == "add" else "1.0"  # masked tail lanes leave the sum / product unchanged
            lines.append(f"{part} = {tl('where')}({mask}, {value_text}, {identity})")
            if scan and op == "add":
                lines.append(f"{running} = {acc} + {tl('cumsum')}({part}, axis=0)")
            elif op == "mul":  # no tl.prod: the block product is the last lane of the inclusive product scan
                running = running or ks.fresh(f"{acc}_scan")
                lines.append(f"{running} = {acc} * {tl('cumprod')}({part}, axis=0)")
        else:
            lines.append(_statement_text(ks, stmt, i, offs, mask, {acc: running} if scan and n > position else {}))
    if op == "add":
        lines.append(f"{acc} += {tl('sum')}({part}, axis=0)")
    else:
        last = f"{tl('arange')}(0, {BLOCK}) == {BLOCK - 1}"
        lines.append(f"{acc} = {tl('sum')}({tl('where')}({last}, {running}, 0.0), axis=0)")
    if any("\n" in line for line in lines):
        raise Decline("a statement of the loop spans several lines")
    start, stop, _ = bounds
    edits = [
        ks.text.replace(loop.iter, f"range({ks.segment(start)}, {ks.segment(stop)}, {BLOCK})"),
        ks.text.replace_statements(loop.body[0], "".join(f"{indent}{line}\n" for line in lines), loop.body[-1]),
    ]
    return edits, "scan" if scan else "reduction"


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    edits: list[Edit] = []
    kinds = []
    for stmt, body in walk_statements(ks.fn.body):
        if isinstance(stmt, ast.For):
            found = _rewrite(ks, stmt, body)
            if found:
                edits.extend(found[0])
                kinds.append(f"{found[1]} at line {stmt.lineno}")
    if not edits:
        raise Decline("no scalar loop accumulating one loaded element per iteration")
    rationale = (
        f"A scalar loop walked one element per iteration ({', '.join(kinds)}). It now walks blocks of {BLOCK}: "
        "loads and stores are vectors masked at the tail, the block's contribution is tl.sum-med, and a running "
        "value read after the update becomes the carry plus tl.cumsum (times tl.cumprod for a running product)."
    )
    return [finish(recipe, ks.ctx, edits, f"Process blocks of {BLOCK} instead of one element per iteration", rationale)]


RECIPE = SourceRecipe(
    name="scalar-loop-to-blocks",
    title="Blocks instead of one element per loop iteration (block scan / block reduction)",
    keys=("TL134", "TL107", "TL104", "TL105"),
    build=_build,
)
