"""Fuse two kernels launched back to back when the second only reads, element for element, what the first wrote.

    producer[grid](x, ..., tmp, n, BLOCK_SIZE=256)     # ... tl.store(tmp_ptr + offs, value, mask=mask)
    consumer[grid](tmp, out, n, BLOCK_SIZE=256)         # y = tl.load(tmp_ptr + offs, mask=mask) ...

becomes one kernel `producer_consumer_fused`: the producer's body with its store replaced by a local value, then
the consumer's body with its load replaced by that value, launched once. The intermediate never goes through
memory. It is sound only when every program of the consumer reads exactly the elements the same program of the
producer wrote, so the recipe requires: the same grid text, the producer's store as its last top-level statement
and the consumer's load at its top level, identical address and mask expressions built by textually identical
statements from parameters that both launches pass the same arguments, and parameter names that do not collide
with different arguments. The original kernels stay in the file (unused); the intermediate's allocation stays.
"""

from __future__ import annotations

import ast

from ...kernels import LaunchSite
from ..kernel_patterns import grid_node, load_parts, loaded_names
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit


def _function(ks: KernelSource, name: str) -> ast.FunctionDef:
    info = ks.ctx.module.kernel(name)
    for node in ast.walk(ks.tree):
        if isinstance(node, ast.FunctionDef) and info and node.name == name and node.lineno == info.def_span.line:
            return node
    raise Decline(f"cannot locate {name}")


def _slice(fn: ast.FunctionDef, upto: int, names: set[str], ks: KernelSource) -> list[str]:
    """Texts of the top-level statements before index `upto` that (transitively) define `names`."""
    needed, out = set(names), []
    for stmt in reversed(fn.body[:upto]):
        if not isinstance(stmt, ast.Assign):
            continue
        targets = {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if targets & needed:
            out.append(ks.segment(stmt))
            needed |= loaded_names(stmt.value)
    return list(reversed(out))


def _pair(ks: KernelSource) -> tuple[LaunchSite, LaunchSite]:
    launches = sorted(ks.ctx.module.launches, key=lambda s: (s.span.line, s.span.col))
    for first, second in zip(launches, launches[1:], strict=False):
        if ks.ctx.kernel in (first.kernel, second.kernel) and first.kernel != second.kernel:
            a, b = ks.enclosing_statement(ks.node_at(first)), ks.enclosing_statement(ks.node_at(second))
            parent = ks.parent(a)
            body = getattr(parent, "body", [])
            if parent is ks.parent(b) and any(s is a for s in body) and body.index(a) + 1 == body.index(b):
                return first, second
    raise Decline("the kernel is not launched right before or after another kernel in the same function")


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    first, second = _pair(ks)
    mod = ks.ctx.module
    k1, k2 = mod.kernel(first.kernel), mod.kernel(second.kernel)
    if k1.autotune or k2.autotune or k1.heuristics or k2.heuristics or k1.is_helper or k2.is_helper:
        raise Decline("autotuned, heuristic or helper kernels are not fused")
    f1, f2 = _function(ks, k1.name), _function(ks, k2.name)
    c1, c2 = ks.node_at(first), ks.node_at(second)
    g1, g2 = grid_node(ks, c1), grid_node(ks, c2)
    if ks.segment(g1) != ks.segment(g2):
        raise Decline("the two launches use different grids")
    b1, b2 = first.bind(k1), second.bind(k2)
    extra1 = {k.name: k.text for k in first.kwargs if k.name not in b1}
    extra2 = {k.name: k.text for k in second.kwargs if k.name not in b2}
    if extra1 != extra2 or len(b1) != len(k1.params) or len(b2) != len(k2.params):
        raise Decline("the launches differ in launch options or do not bind every parameter")
    # the intermediate: an argument the first kernel stores to and the second loads from
    store = f1.body[-1]
    if not (isinstance(store, ast.Expr) and ks.is_tl(store.value, "store") and len(store.value.args) >= 2):
        raise Decline(f"{k1.name} does not end with a tl.store")
    call = store.value
    pointer_terms = loaded_names(call.args[0]) & {p.name for p in k1.params}
    out_params = [p for p in pointer_terms if ks.segment(call.args[0]).startswith(p)]
    if len(out_params) != 1:
        raise Decline(f"cannot tell which parameter {k1.name} stores to")
    p1 = out_params[0]
    tmp = b1[p1].text
    loads = [
        (i, s) for i, s in enumerate(f2.body)
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
        and ks.is_tl(s.value, "load")
        and any(b2[p].text == tmp for p in loaded_names(s.value.args[0] if s.value.args else s.value) & set(b2))
    ]
    if len(loads) != 1:
        raise Decline(f"{k2.name} does not load `{tmp}` exactly once at its top level")
    index, load_stmt = loads[0]
    p2 = next(p for p in loaded_names(load_stmt.value) & set(b2) if b2[p].text == tmp)
    if sum(1 for n in ast.walk(f1) if isinstance(n, ast.Name) and n.id == p1) != 1 or sum(
        1 for n in ast.walk(f2) if isinstance(n, ast.Name) and n.id == p2
    ) != 1:
        raise Decline("the intermediate's pointer is used elsewhere in a kernel")
    pointer2, mask2, _other = load_parts(ks, load_stmt.value)
    mask1 = call.args[2] if len(call.args) > 2 else next((k.value for k in call.keywords if k.arg == "mask"), None)
    address1 = ks.segment(call.args[0]).replace(p1, "\0", 1)
    address2 = ks.segment(pointer2).replace(p2, "\0", 1)
    if address1 != address2 or (mask1 is None) != (mask2 is None) or (
        mask1 is not None and ks.segment(mask1) != ks.segment(mask2)
    ):
        raise Decline("the store and the load use different addresses or masks")
    used = (loaded_names(call.args[0]) | (loaded_names(mask1) if mask1 is not None else set())) - {p1}
    s1 = _slice(f1, len(f1.body) - 1, used, ks)
    s2 = _slice(f2, index, (loaded_names(pointer2) | (loaded_names(mask2) if mask2 is not None else set())) - {p2}, ks)
    if s1 != s2:
        raise Decline("the offsets and masks are computed differently in the two kernels")
    params1 = {p.name for p in k1.params}
    for name in used | {n for text in s1 for n in loaded_names(ast.parse(text))}:
        if name in params1 and name in b2 and b1[name].text != b2[name].text:
            raise Decline(f"`{name}` is passed different arguments to the two kernels")
    # a parameter name both kernels use for different arguments is renamed in the consumer's part
    rename = {
        p.name: ks.fresh(f"{p.name}_2")
        for p in k2.params
        if p.name in params1 and p.name != p2 and b1[p.name].text != b2[p.name].text
    }
    if any(loaded_names(ast.parse(text)) & set(rename) for text in s2):
        raise Decline("the shared offsets use a parameter the two launches pass differently")

    def consumer_text(stmt: ast.stmt) -> str:
        # from the end of the previous statement: comment lines above the statement come along
        i = next(n for n, s in enumerate(f2.body) if s is stmt)
        offset = ks.text.line_end(f2.body[i - 1].end_lineno) if i else ks.text.line_start(stmt.lineno)
        text = ks.text.source[offset : ks.text.line_end(stmt.end_lineno)].rstrip("\n")
        if not rename:
            return text
        spans = sorted(
            (ks.text.start(n) - offset, ks.text.end(n) - offset, rename[n.id])
            for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id in rename
        )
        for lo, hi, new in reversed(spans):
            text = text[:lo] + new + text[hi:]
        return text

    fused = ks.fresh(f"{k1.name.removesuffix('_kernel')}_{k2.name}_fused")
    value = ks.fresh("fused_value")
    params = [(p.name, p.name, f1) for p in k1.params if p.name != p1] + [
        (p.name, rename.get(p.name, p.name), f2)
        for p in k2.params
        if p.name != p2 and (p.name not in params1 or p.name in rename)
    ]
    signature = []
    for old_name, new_name, fn in params:
        node = next(a for a in fn.args.args if a.arg == old_name)
        signature.append((_constexpr(node), new_name + ks.segment(node)[len(old_name) :]))
    signature = [t for c, t in signature if not c] + [t for c, t in signature if c]  # constexprs last
    indent = ks.text.indent(f1.body[0])
    lines = [f"def {fused}({', '.join(signature)}):"]
    for stmt in f1.body[:-1]:
        lines.append(ks.text.source[slice(*ks.text.statement_lines(stmt))].rstrip("\n"))
    lines.append(f"{indent}{value} = {ks.segment(call.args[1])}")
    for i, stmt in enumerate(f2.body):
        if i == index:
            lines.append(f"{indent}{load_stmt.targets[0].id} = {value}")
        elif ks.segment(stmt) in s2 and i < index:
            continue  # already computed, identically, by the producer's part
        else:
            lines.append(consumer_text(stmt))
    decorator = ks.text.source[ks.text.line_start(f1.decorator_list[0].lineno) : ks.text.line_start(f1.lineno)]
    kernel_text = "\n\n" + decorator + "\n".join(lines) + "\n"
    args = [f"{new}={(b1 if fn is f1 else b2)[old].text}" for old, new, fn in params]
    args += [f"{k}={v}" for k, v in extra1.items()]
    launch = f"{ks.segment(c1.func)}".replace(first.kernel, fused, 1) + f"({', '.join(args)})"
    s_first, s_second = ks.enclosing_statement(c1), ks.enclosing_statement(c2)
    launch_indent = ks.text.indent(s_first)
    edits = [
        ks.text.replace_statements(s_first, f"{launch_indent}{launch}\n", s_second),
        Edit(ks.text.line_end(f2.end_lineno), ks.text.line_end(f2.end_lineno), kernel_text),
    ]
    rationale = (
        f"`{tmp}` was written by {k1.name} and read back, element for element, by {k2.name}. The fused kernel "
        f"`{fused}` keeps the value in registers and runs both bodies in one launch: one write and one read of "
        f"`{tmp}` and one launch fewer. ({k1.name}, {k2.name} and the allocation of `{tmp}` stay in the file.)"
    )
    return [finish(recipe, ks.ctx, edits, f"Fuse {k1.name} and {k2.name} into one launch", rationale)]


def _constexpr(arg: ast.arg) -> bool:
    return arg.annotation is not None and "constexpr" in ast.unparse(arg.annotation)


RECIPE = SourceRecipe(
    name="fuse-launch-chain",
    title="Fuse two back-to-back launches that pass an intermediate",
    keys=("TL128",),
    build=_build,
)
