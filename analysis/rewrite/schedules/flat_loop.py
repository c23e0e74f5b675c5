"""A nest of loops around a tl.dot accumulation (taps around channel blocks) -> one flat loop (the emitter).

Read from the model: `acc = tl.dot(a, b, acc)` runs in a loop nested in loops whose bodies only compute indices
before the next loop (a direct convolution's `for kh: for kw: ih = ...; for c0 in range(0, C, BLOCK_C): ...`).
Triton's software pipeliner prefetches the next iterations' tiles within one loop: with 64 channels in blocks of
32 the inner loop has two iterations per tap, and nothing is in flight across taps. One flat loop over
taps x channel blocks gives it every iteration of the nest; each flat iteration decodes its loop indices
(innermost fastest, the loops' own order) and recomputes the index statements of the loops around (integer
arithmetic, no memory). Declines when a value other than the accumulator is carried from one iteration to the
next, when an outer loop body does more than compute indices, or when a loop's range is not `0..extent` (the
inner loop's step kept).

Used by schedule-loop-nest-flatten (the flat loop alone) and schedule-operand-relayout (over the packed operand).
"""

from __future__ import annotations

import ast

from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import reindent
from .emit import assigned_in, dot_accumulations, free_names

_RANGES = ("range", "static_range")


def flatten(recipe: SourceRecipe, ks: KernelSource) -> object:
    """The kernel with its tl.dot loop nest as one flat loop (a candidate of `recipe`), or Decline."""
    from ...computation import lift_kernel

    comp = lift_kernel(ks.ctx.module, ks.info)
    dots = dot_accumulations(ks, comp)
    if not dots:
        raise Decline("no loop accumulates tl.dot products")
    inner_var = comp.var(dots[0].loop)
    inner = next((n for n in ast.walk(ks.fn) if isinstance(n, ast.For) and n.lineno == inner_var.line), None)
    if inner is None:
        raise Decline(f"line {inner_var.line}: the tl.dot loop is not a for statement")
    nest = _enclosing_nest(ks, inner)
    if len(nest) < 2:
        raise Decline(f"line {inner.lineno}: the tl.dot loop is not nested in a loop (already one loop)")
    jump = next((n for n in ast.walk(nest[0]) if isinstance(n, (ast.Break, ast.Continue, ast.Return))), None)
    if jump is not None:
        raise Decline(f"line {jump.lineno}: `{type(jump).__name__.lower()}` in the nest would leave a different loop "
                      "once the nest is one loop")
    accs = {a.var for a in dots}
    set_inside = set().union(*(assigned_in(s) for s in ast.walk(inner) if isinstance(s, ast.stmt) and s is not inner))
    carried = set(free_names(inner.body)) & set_inside
    if carried - accs:
        raise Decline(f"line {inner.lineno}: the loop carries {', '.join(sorted(carried - accs))} from one "
                      "iteration to the next besides the accumulator (it would restart every flat iteration)")
    ranges = [_range(ks, loop) for loop in nest]
    prologue: list[list[ast.stmt]] = []
    for loop in nest[:-1]:
        stmts = loop.body[:-1]
        for s in stmts:
            if not isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)) or any(
                    (ks.tl_call(n) or "").startswith(("load", "store", "atomic")) or ks.tl_call(n) == "dot"
                    for n in ast.walk(s)):
                raise Decline(f"line {s.lineno}: the loop around the tl.dot loop does more than compute indices "
                              "(it would run again for every flat iteration)")
        own = set().union(*(assigned_in(s) for s in stmts)) if stmts else set()
        if own & set(free_names(stmts)) or own & accs:
            raise Decline(f"line {loop.lineno}: an index statement of the outer loop carries a value across its "
                          "iterations")
        prologue.append(stmts)
    after = ks.fn.body[ks.fn.body.index(nest[0]) + 1:] if nest[0] in ks.fn.body else None
    if after is None:
        raise Decline(f"line {nest[0].lineno}: the loop nest is not a statement of the kernel's body")
    inside = set().union(*(assigned_in(s) for p in prologue for s in p)) | {
        lp.target.id for lp in nest} | set_inside
    leaked = (inside - accs) & set(free_names(after))
    if leaked:
        raise Decline(f"{', '.join(sorted(leaked))} is set in the loop nest and read after it")
    return _emit(recipe, ks, nest, ranges, prologue, inner)


def _enclosing_nest(ks: KernelSource, inner: ast.For) -> list[ast.For]:
    """The loops around `inner` (outermost first, `inner` last) that each end with the next loop as the last
    statement of their body."""
    nest = [inner]
    node = ks.parent(inner)
    while isinstance(node, ast.For) and node.body and node.body[-1] is nest[0] and not node.orelse:
        nest.insert(0, node)
        node = ks.parent(node)
    return nest


def _range(ks: KernelSource, loop: ast.For) -> tuple[str, str, str | None]:
    """(variable, extent text, step text or None) of `for v in range(extent)` / `range(0, extent[, step])`, also
    tl.range and tl.static_range."""
    call = loop.iter
    name = call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else (
        call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else "")
    if name not in _RANGES or not isinstance(loop.target, ast.Name) or call.keywords or loop.orelse:
        raise Decline(f"line {loop.lineno}: the loop is not `range(...)` over one name")
    args = list(call.args)
    if len(args) == 1:
        return loop.target.id, ks.segment(args[0]), None
    if not (isinstance(args[0], ast.Constant) and args[0].value == 0) or len(args) > 3:
        raise Decline(f"line {loop.lineno}: the loop does not start at 0")
    step = ks.segment(args[2]) if len(args) == 3 else None
    return loop.target.id, ks.segment(args[1]), None if step in (None, "1") else step


def _emit(recipe: SourceRecipe, ks: KernelSource, nest: list[ast.For], ranges: list[tuple[str, str, str | None]],
          prologue: list[list[ast.stmt]], inner: ast.For) -> object:
    tl = ks.tl
    indent = ks.text.indent(nest[0])
    body_indent = indent + "    "
    flat = ks.fresh("flat")
    for var, _, step in ranges[:-1]:
        if step is not None:
            raise Decline(f"the loop over `{var}` steps by {step}: only the innermost loop may step")
    counts = []
    lines = []
    for var, extent, step in ranges:
        if step is None:
            counts.append(extent if extent.isidentifier() or extent.isdigit() else f"({extent})")
        else:
            count = ks.fresh(f"{var}_steps")
            lines.append(f"{count} = {tl('cdiv')}({extent}, {step})")
            counts.append(count)
    decode = []
    for i, (var, _, step) in enumerate(ranges):
        inner_count = " * ".join(counts[i + 1:])
        q = (f"{flat} // {inner_count}" if i + 2 == len(ranges) else f"{flat} // ({inner_count})") \
            if inner_count else flat
        index = q if i == 0 else f"({q}) % {counts[i]}" if inner_count else f"{q} % {counts[i]}"
        decode.append(f"{var} = {index}" if step is None else f"{var} = ({index}) * {step}")
    header = "".join(f"{indent}{x}\n" for x in [
        "# tritonlens schedule: the loop nest flattened into one loop (the pipeliner then prefetches across its "
        "outer iterations too)", *lines, f"for {flat} in range(0, {' * '.join(counts)}):"])
    text = header + "".join(f"{body_indent}{x}\n" for x in decode)
    for stmts in prologue:
        if not stmts:
            continue
        start, end = ks.text.statement_lines(stmts[0], stmts[-1])
        text += _moved(ks, ks.text.source[start:end], ks.text.indent(stmts[0]), body_indent)
    start, end = ks.text.statement_lines(inner.body[0], inner.body[-1])
    text += _moved(ks, ks.text.source[start:end], ks.text.indent(inner.body[0]), body_indent)
    edits = [ks.text.replace_statements(nest[0], text)]
    loops = " x ".join(f"`{v}` ({e}{'' if s is None else f' in steps of {s}'})" for v, e, s in ranges)
    rationale = (
        f"The tl.dot accumulation on line {inner.lineno} runs in a nest of {len(nest)} loops ({loops}). Triton's "
        "software pipeliner prefetches the next iterations' tiles within one loop only, so each pass of the inner "
        "loop starts with nothing in flight. The nest is now one flat loop over every iteration, which decodes the "
        "loops' indices (innermost fastest, the same order) and recomputes the outer loops' index statements "
        "(integer arithmetic, no memory).")
    return finish(recipe, ks.ctx, edits, "Flatten the loop nest around the tl.dot accumulation into one loop",
                  rationale)


def _moved(ks: KernelSource, text: str, old: str, new: str) -> str:
    try:
        return reindent(text, old, new)
    except ValueError:
        raise Decline("a loop body is not indented uniformly") from None
