"""Replace a loop of rank-1 updates over K with tl.dot on K-tiles.

    for k in range(0, K):
        a = tl.load(a_ptr + offs_m * s_am + k * s_ak, mask=mask_m, other=0.0)
        b = tl.load(b_ptr + k * s_bk + offs_n * s_bn, mask=mask_n, other=0.0)
        acc += a[:, None] * b[None, :]

becomes a loop over K in steps of BLOCK_K that loads a (BLOCK_M, BLOCK_K) and a (BLOCK_K, BLOCK_N) tile (the
K tail masked with zeros) and accumulates `tl.dot(a, b)` on the tensor cores / cube unit. Every address term
with `k` must be `k` or `k * stride`; anything else in the loop body makes the recipe decline. fp32 operands go
through tl.dot's default (TF32 on NVIDIA): the rationale says so and the gate's tolerance decides.
"""

from __future__ import annotations

import ast

from ..kernel_patterns import (
    add_terms,
    additive_update,
    count_name,
    is_zero,
    load_parts,
    simple_range,
    uncast,
)
from ..recipe_edits import substitute
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit

BLOCK_K = 32


def _factor(node: ast.AST) -> tuple[str, str] | None:
    """('a', 'col') for `a[:, None]` (possibly inside `.to(...)` casts), ('b', 'row') for `b[None, :]`."""
    node = uncast(node)
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
        return None
    index = node.slice
    if not (isinstance(index, ast.Tuple) and len(index.elts) == 2):
        return None
    first, second = index.elts
    is_none = lambda n: isinstance(n, ast.Constant) and n.value is None  # noqa: E731
    is_all = lambda n: isinstance(n, ast.Slice) and n.lower is n.upper is n.step is None  # noqa: E731
    if is_all(first) and is_none(second):
        return node.value.id, "col"
    if is_none(first) and is_all(second):
        return node.value.id, "row"
    return None


def _update(stmt: ast.stmt) -> tuple[str, ast.BinOp] | None:
    found = additive_update(stmt)
    if found and isinstance(found[1], ast.BinOp) and isinstance(found[1].op, ast.Mult):
        return found
    return None


def _tile_load(ks: KernelSource, call: ast.Call, k: str, offs_k: str, stop: str, role: str) -> str:
    pointer, mask, other = load_parts(ks, call)
    if other is not None and not is_zero(other):
        raise Decline(f"line {call.lineno}: the load fills masked lanes with a non-zero value")
    if mask is not None and count_name([mask], k):
        raise Decline(f"line {call.lineno}: the mask depends on k")
    k_terms, rest = [], []
    for term in add_terms(pointer):
        if not count_name([term], k):
            rest.append(ks.segment(term))
            continue
        linear = isinstance(term, ast.Name) or (
            isinstance(term, ast.BinOp)
            and isinstance(term.op, ast.Mult)
            and sum(isinstance(side, ast.Name) and side.id == k for side in (term.left, term.right)) == 1
            and count_name([term], k) == 1
        )
        if not linear:
            raise Decline(f"line {call.lineno}: `{ks.segment(term)}` is not k or k * stride")
        k_terms.append(substitute(ks, term, k, offs_k))
    if not k_terms or not rest:
        raise Decline(f"line {call.lineno}: the address is not a base plus a k term")
    # the K axis is the row axis of the B tile and the column axis of the A tile
    k_axis, other_axis = ("[None, :]", "[:, None]") if role == "col" else ("[:, None]", "[None, :]")
    address = f"({' + '.join(rest)}){other_axis} + ({' + '.join(k_terms)}){k_axis}"
    k_mask = f"({offs_k} < {stop}){k_axis}"
    full_mask = k_mask if mask is None else f"({ks.segment(mask)}){other_axis} & {k_mask}"
    return f"{ks.tl('load')}({address}, mask={full_mask}, other=0.0)"


def _rewrite_loop(ks: KernelSource, loop: ast.For) -> list[Edit] | None:
    bounds = simple_range(loop)
    if bounds is None or (bounds[2] is not None and not (isinstance(bounds[2], ast.Constant) and bounds[2].value == 1)):
        return None
    updates = [(s, u) for s in loop.body if (u := _update(s)) is not None]
    if len(updates) != 1:
        return None
    stmt, (acc, product) = updates[0]
    factors = [_factor(product.left), _factor(product.right)]
    if None in factors or {f[1] for f in factors} != {"col", "row"}:
        return None
    roles = dict(factors)  # name -> "col" | "row"
    k = loop.target.id
    loads = {}
    for other in loop.body:
        if other is stmt:
            continue
        if not (
            isinstance(other, ast.Assign)
            and len(other.targets) == 1
            and isinstance(other.targets[0], ast.Name)
            and other.targets[0].id in roles
            and ks.is_tl(other.value, "load")
        ):
            raise Decline(f"line {other.lineno}: the K loop does more than load the two vectors and update")
        loads[other.targets[0].id] = other
    if set(loads) != set(roles):
        raise Decline("the outer-product operands are not loaded in the loop")
    for name in roles:
        if count_name(loop.body, name) != 2:  # its load and its use in the update
            raise Decline(f"{name} is used elsewhere in the loop")
    start, stop, _ = bounds
    offs_k = ks.fresh(f"offs_{k}")
    stop_text = ks.segment(stop)
    edits = [ks.text.replace(loop.iter, f"range({ks.segment(start)}, {stop_text}, {BLOCK_K})")]
    body_indent = ks.text.indent(loop.body[0])
    edits.append(
        ks.text.insert_before(loop.body[0], f"{body_indent}{offs_k} = {k} + {ks.tl('arange')}(0, {BLOCK_K})\n")
    )
    for name, load in loads.items():
        edits.append(ks.text.replace(load.value, _tile_load(ks, load.value, k, offs_k, stop_text, roles[name])))
    col = next(n for n, r in roles.items() if r == "col")
    row = next(n for n, r in roles.items() if r == "row")
    edits.append(ks.text.replace(product, f"{ks.tl('dot')}({col}, {row})"))
    return edits


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    edits: list[Edit] = []
    for loop in ast.walk(ks.fn):
        if isinstance(loop, ast.For):
            found = _rewrite_loop(ks, loop)
            if found:
                edits.extend(found)
    if not edits:
        raise Decline("no loop of rank-1 (outer-product) updates over K")
    rationale = (
        "The K loop added one outer product per iteration on the CUDA cores / vector unit. It now loads "
        f"K-tiles of {BLOCK_K} (the tail masked with zeros) and accumulates tl.dot on the matrix units. "
        "fp16/bf16 operands keep an fp32 accumulator; fp32 operands use tl.dot's default precision (TF32 on "
        "NVIDIA), which the verification tolerance must accept. tl.dot needs tiles of at least 16 x 16."
    )
    return [finish(recipe, ks.ctx, edits, f"Use tl.dot on K-tiles of {BLOCK_K} instead of rank-1 updates", rationale)]


RECIPE = SourceRecipe(
    name="dot-tiles",
    title="tl.dot on K-tiles instead of rank-1 updates",
    keys=("TL133", "TL107", "TL209"),
    build=_build,
)
