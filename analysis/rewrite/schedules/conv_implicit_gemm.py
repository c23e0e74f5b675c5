"""Schedule: a direct convolution (loops over input channels and taps accumulating input x weight) -> implicit GEMM.

Read from the model: `acc` accumulates products of two tensors over a perfect nest of loops (C_in and the taps,
or one flat loop whose index the draft splits with // and %). The weight is the operand none of the output's
position indices address; the output indices split into N (those that also address the weight: C_out) and M
(the rest: batch and output positions, each a "unit" of a program id and/or a lane, bounded by the draft's own
comparisons or, for a `pid // C` batch index, by the launch grid). K is the product of the loop extents.

The body is re-emitted: a 1-D grid of BLOCK_M x BLOCK_N tiles in GROUP_M order; the flat M index decoded into
the draft's units; the draft's own index statements (im2col: `ih = oh + kh - 1`, its padding masks) copied with
their inputs rebound to tiles: M names are [BLOCK_M, 1] columns, the K loop variables [1, BLOCK_K] rows decoded
from the flat K index, C_out names [BLOCK_N, 1] for the weight tile (used transposed) and [1, BLOCK_N] after the
loop, where the draft's epilogue (bias, store) runs with its masks and-ed with the tile bounds. Drafts that
already tile with broadcasts (`[:, None]`), depthwise/grouped convolutions (the channel index addresses input,
weight and output) and anything else outside this shape decline with the reason.
"""

from __future__ import annotations

import ast

from ...computation import classify
from ...computation.classify import MATMUL
from ...computation.model import LANE, LOOP, PROGRAM, derived_parts
from ...computation.symbolic import Poly
from ...computation.values import Index, Mask
from ..kernel_patterns import is_zero, load_parts
from ..model import ANY_KERNEL
from ..recipe_edits import and_mask, append_argument, imported_as
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit, reindent
from . import dot_emit as de
from .emit import append_constexprs
from .targets import dot_tiles

RANGES = ("range", "static_range")


def _loop_nest(ks: KernelSource, outer: ast.For) -> tuple[list[tuple[str, str]], list[ast.stmt]]:
    """[(loop variable, extent text)] outermost first, and the innermost body; Decline if not a perfect nest."""
    nest: list[tuple[str, str]] = []
    node: ast.stmt = outer
    while isinstance(node, ast.For):
        call = node.iter
        name = call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else (
            call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else "")
        if name not in RANGES or not isinstance(node.target, ast.Name) or node.orelse or call.keywords:
            raise Decline(f"line {node.lineno}: the loop is not `range(extent)` over one name")
        args = call.args
        if len(args) == 2 and isinstance(args[0], ast.Constant) and args[0].value == 0:
            args = args[1:]
        if len(args) != 1:
            raise Decline(f"line {node.lineno}: the loop does not run 0..extent in steps of 1")
        nest.append((node.target.id, ks.segment(args[0])))
        if len(node.body) == 1 and isinstance(node.body[0], ast.For):
            node = node.body[0]
            continue
        if any(isinstance(s, (ast.For, ast.While, ast.If)) for s in node.body):
            raise Decline(f"line {node.lineno}: the loop nest is not perfect (statements beside an inner loop)")
        return nest, list(node.body)
    raise Decline("no loop")


def _units(comp, out_vars: dict[str, Poly], m_vars: set[str], view) -> list[tuple[dict[str, Poly], Poly, Poly]]:  # noqa: ANN001
    """The M units (weights per variable, stride in the output, bound), outermost (largest stride) first."""
    lanes = [v for v in m_vars if comp.var(v).kind == LANE]
    left = set(m_vars)
    units = []
    for lane in lanes:
        stride = out_vars[lane]
        weights = {lane: Poly.of(1)}
        for v in list(left - {lane}):
            w = de.divide(out_vars[v], stride)
            extent = comp.var(lane).extent
            if w is not None and comp.var(v).kind == PROGRAM and extent.isidentifier() and w == Poly.of(extent):
                weights[v] = w  # the program's step is one block of the lane: pid * BLOCK + lanes
        left -= set(weights)
        b = de.bound(view, de.Role("M", weights, lane))
        if b is None:
            raise Decline(f"no comparison bounds the output positions along `{comp.var(lane).label or lane}`")
        units.append((weights, stride, b))
    for v in left:
        var = comp.var(v)
        if var.kind != PROGRAM or "//" not in v:
            raise Decline(f"the output index `{var.label or v}` is neither a lane nor a `pid // size` batch index")
        units.append(({v: Poly.of(1)}, out_vars[v], Poly.of(f"__batch__{v}")))
    units.sort(key=lambda u: not str(u[2]).startswith("__batch__"))  # batch outermost: positions stay adjacent
    return units


def _rebind(value: Index, texts: dict[str, str], weights_of: dict[str, tuple[str, Poly]]) -> str | None:
    """Text of an affine index over the new tiles: each variable -> (its unit's text, its weight in the unit)."""
    if value.expr is None:
        return None
    parts: list[str] = []
    seen: set[str] = set()
    for var, coeff in value.expr.coeffs:
        if var not in weights_of:
            return None
        unit, weight = weights_of[var]
        if unit in seen:
            continue
        c = de.divide(coeff, weight)
        if c is None:
            return None
        seen.add(unit)
        parts.append(texts[unit] if c == Poly.of(1) else f"({de.poly_text(c)}) * {texts[unit]}")
    if not value.expr.const.is_zero:
        parts.append(f"({de.poly_text(value.expr.const)})")
    return " + ".join(parts) or "0"


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    from ...computation import lift_kernel

    comp = lift_kernel(ks.ctx.module, ks.info)
    kind = classify(comp)
    if kind.name != MATMUL:
        raise Decline(f"the model classifies the kernel as {kind.name}, not an accumulation of products")
    if ks.info.autotune is not None:
        raise Decline("the kernel is autotuned: its configs own the block sizes")
    accs = [a for a in comp.accumulations if a.op == "sum" and len(a.product_of) == 2]
    if not accs:
        raise Decline("no loop accumulates a product of two tensors with `+=`")
    outer_var = min((comp.var(a.loop) for a in accs), key=lambda v: v.line)
    acc = accs[0].var
    _, _, body = de.body_span(ks)
    idx = next((i for i, s in enumerate(body) if isinstance(s, ast.For) and s.lineno == outer_var.line), None)
    if idx is None:
        raise Decline(f"the loop on line {outer_var.line} is not a statement of the kernel's body")
    loop, prologue, epilogue = body[idx], body[:idx], body[idx + 1:]
    nest, inner = _loop_nest(ks, loop)
    if any(v.kind == LANE and v.line > loop.lineno and v.line <= loop.end_lineno for v in comp.index_vars):
        raise Decline("the loop body makes tl.arange lanes (it already tiles K)")
    view = de.LoopView.of(ks, loop.lineno)
    comp = view.comp
    loop_vars = {v.name for v in comp.index_vars if v.kind == LOOP and loop.lineno <= v.line <= loop.end_lineno}
    tensors = accs[0].product_of
    loads = {t: [a for a in comp.loads if a.tensor == t and set(a.in_loops) & loop_vars] for t in tensors}
    if any(len(x) != 1 for x in loads.values()):
        raise Decline("an operand is loaded more than once in the loop")
    stores = comp.stores
    if len(stores) != 1 or stores[0].in_loops or stores[0].offset is None:
        raise Decline("the kernel does not write one output after the loop at an affine index")
    out = stores[0]
    out_vars = out.offset.as_dict()
    # the weight: the operand addressed by no lane of the output (its index is C_out and the K loops only)
    weights = [t for t in tensors if loads[t][0].offset is not None and not (
        set(loads[t][0].offset.variables) & {v for v in out_vars if comp.var(v).kind == LANE})]
    if len(weights) != 1:
        raise Decline("cannot tell the weight from the input: both (or neither) are addressed by the output lanes")
    w_t = weights[0]
    x_t = next(t for t in tensors if t != w_t)
    w_vars = set(loads[w_t][0].offset.variables)
    n_vars = {v for v in out_vars if v in w_vars}
    m_vars = set(out_vars) - n_vars
    x_acc = loads[x_t][0]
    if x_acc.offset is not None and set(x_acc.offset.variables) & n_vars:
        raise Decline("the output channel also addresses the input: a depthwise or grouped convolution, whose "
                      "channels do not reduce over C_in (this schedule declines it)")
    if not w_vars & loop_vars:
        raise Decline("the weight does not move with the loop: no K axis")
    if len(n_vars) != 1:
        raise Decline(f"the output channel is {len(n_vars)} indices, not one program id or lane")
    (n_var,) = n_vars
    nv = comp.var(n_var)
    if nv.kind == LANE:
        raise Decline("the draft already tiles output channels with a tl.arange lane (a blocked, tl.dot draft)")
    modulo = derived_parts(n_var, "%")
    if modulo is None:
        raise Decline(f"the output channel `{nv.label or n_var}` is not a `pid % C_out` index with a known bound")
    n_bound = modulo[1]
    units = _units(comp, out_vars, m_vars, view)
    return _emit(recipe, ks, view, loop, prologue, epilogue, nest, inner, acc, loads, x_t, w_t, n_var, n_bound,
                 units)


def _emit(recipe, ks, view, loop, prologue, epilogue, nest, inner, acc, loads, x_t, w_t, n_var, n_bound,  # noqa: ANN001, PLR0913
          units) -> list:  # noqa: ANN001
    tl, fresh = ks.tl, ks.fresh
    cfg = dot_tiles(ks.ctx.target)
    bm, bn, bk, group = fresh("BLOCK_M"), fresh("BLOCK_N"), fresh("BLOCK_K"), fresh("GROUP_M")
    literal = {bm: cfg.block_m, bn: cfg.block_n, bk: cfg.block_k, group: cfg.group_m}
    n = {k: fresh(k) for k in ("pid", "num_tiles_m", "num_tiles_n", "tiles_in_group", "first_tile_m", "group_rows",
                               "tile_m", "tile_n", "rows", "cols", "k_start", "k_idx", "M_total", "K_total")}
    batch_params: dict[str, str] = {}  # new kernel parameter -> the derived program variable it bounds
    bound_text: list[str] = []
    for w, _, b in units:
        if b.terms and b.terms[0][0] and b.terms[0][0][0].startswith("__batch__"):
            p = fresh("CONV_BATCH")
            batch_params[p] = next(iter(w))
            bound_text.append(p)
        else:
            bound_text.append(f"({de.poly_text(b)})")
    k_ext = [f"({e})" for _, e in nest]
    texts: dict[str, str] = {}
    weights_of: dict[str, tuple[str, Poly]] = {}
    decode: list[str] = []
    for i, (w, _, _) in enumerate(units):
        name = fresh(f"unit{i}")
        inner_size = " * ".join(bound_text[i + 1:])
        q = f"({n['rows']} // ({inner_size}))" if inner_size else n["rows"]
        decode.append(f"{name} = {q} % {bound_text[i]}" if i else f"{name} = {q}")
        texts[name] = name
        for v, wt in w.items():
            weights_of[v] = (name, wt)
    # the output channel: [BLOCK_N, 1] for the weight tile, [1, BLOCK_N] after the loop
    weights_of[n_var] = ("__cols__", Poly.of(1))
    texts_in = {**texts, "__cols__": f"{n['cols']}[:, None]"}
    texts_out = {**texts, "__cols__": f"{n['cols']}[None, :]"}

    indent = ks.text.indent(loop)
    acc_init = None
    pro_in: list[str] = []
    pro_out: list[str] = []
    n_dependent: set[str] = set()
    unbound: set[str] = set()
    for stmt in prologue:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
            raise Decline(f"line {stmt.lineno}: `{ks.segment(stmt).splitlines()[0]}` is not one assignment")
        name = stmt.targets[0].id
        if name == acc:
            if not (isinstance(stmt.value, ast.Call) and ks.is_tl(stmt.value, "zeros")):
                raise Decline(f"line {stmt.lineno}: `{acc}` does not start at tl.zeros")
            acc_init = stmt
            continue
        _no_broadcasts(ks, stmt)
        value = view.before_loop.get(name)
        reads = {x.id for x in ast.walk(stmt.value) if isinstance(x, ast.Name)}
        if isinstance(value, Index) and value.expr is not None and value.expr.coeffs:
            a, b = _rebind(value, texts_in, weights_of), _rebind(value, texts_out, weights_of)
            if a is None:  # e.g. the raw program id: only what is derived from it is used (checked below)
                unbound.add(name)
                continue
            pro_in.append(f"{name} = {a}")
            if n_var in value.expr.variables:
                n_dependent.add(name)
                pro_out.append(f"{name} = {b}")
            continue
        if isinstance(value, (Index, Mask)) or (value is not None and not reads & {acc}):
            _reads_unbound(stmt, unbound)
            text = ks.segment(stmt)
            pro_in.append(text)
            if reads & n_dependent:
                n_dependent.add(name)
                pro_out.append(text)
            continue
        raise Decline(f"line {stmt.lineno}: `{name}` is computed from loaded values before the loop")
    if acc_init is None:
        raise Decline(f"`{acc}` is not initialised in the kernel's body before the loop")
    loop_names = [v for v, _ in nest]
    # the innermost body: index statements copied, the two loads masked, the product accumulation -> tl.dot
    names = {}
    body_lines: list[str] = []
    for stmt in inner:
        _no_broadcasts(ks, stmt)
        _reads_unbound(stmt, unbound)
        text = ks.segment(stmt)
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == acc:
            continue
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and ks.is_tl(stmt.value, "load"):
            t = next((t for t in (x_t, w_t) if loads[t][0].line == stmt.value.lineno), None)
            if t is not None:
                _, _, other = load_parts(ks, stmt.value)
                mask = f"({n['k_idx']} < {n['K_total']})" if t == x_t else \
                    f"({n['k_idx']} < {n['K_total']}) & ({n['cols']}[:, None] < ({n_bound}))"
                if t == x_t:
                    mask += f" & ({n['rows']} < {n['M_total']})"
                edit = and_mask(ks, stmt.value, mask)
                s0 = ks.text.start(stmt)
                text = de.shifted(ks.text.source, s0, ks.text.end(stmt), [edit])
                if other is not None and not is_zero(other):
                    raise Decline(f"line {stmt.lineno}: the operand load fills masked lanes with a non-zero value")
                if other is None:
                    text = text.rstrip()[:-1] + ", other=0.0)"
                names[t] = stmt.targets[0].id
        body_lines.append(text)
    accum = [s for s in inner if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and s.target.id == acc]
    if len(accum) != 1 or not isinstance(accum[0].op, ast.Add) or not isinstance(accum[0].value, ast.BinOp) or \
            not isinstance(accum[0].value.op, ast.Mult):
        raise Decline(f"`{acc}` is not updated once per step by `{acc} += a * b`")
    prod = {x.id for x in (accum[0].value.left, accum[0].value.right) if isinstance(x, ast.Name)}
    if set(names) != {x_t, w_t} or prod != set(names.values()):
        raise Decline(f"`{acc}` does not accumulate exactly the product of the two loaded operands")
    x_name, w_name = names[x_t], names[w_t]
    # decode the flat K index into the loop variables, innermost fastest
    k_decode = []
    for i, var in enumerate(loop_names):
        inner_size = " * ".join(k_ext[i + 1:])
        q = f"({n['k_idx']} // ({inner_size}))" if inner_size else n["k_idx"]
        k_decode.append(f"{var} = {q} % {k_ext[i]}" if i else f"{var} = {q}")

    epi_edits = []
    for stmt in epilogue:
        _no_broadcasts(ks, stmt)
        _reads_unbound(stmt, unbound)
        for call in ast.walk(stmt):
            kind = ks.tl_call(call)
            if kind not in ("load", "store"):
                continue
            access = next((a for a in view.comp.accesses if a.line == call.lineno), None)
            touch = set(access.offset.variables) if access is not None and access.offset is not None else None
            parts = []
            if touch is None or touch & set(weights_of) - {n_var} or kind == "store":
                parts.append(f"({n['rows']} < {n['M_total']})")
            if touch is None or n_var in touch or kind == "store":
                parts.append(f"({n['cols']}[None, :] < ({n_bound}))")
            epi_edits.append(and_mask(ks, call, " & ".join(parts)))
    inner_indent = indent + "    "

    def kernel_text(precision: str) -> str:
        lines = [
            "# tritonlens schedule: implicit GEMM (M = output positions, N = output channels, K = C_in x taps),",
            "# the input tile gathered in-kernel with the draft's own im2col indices and padding masks",
            f"{n['M_total']} = " + " * ".join(bound_text),
            f"{n['K_total']} = " + " * ".join(k_ext),
            f"{n['pid']} = {tl('program_id')}(0)",
            f"{n['num_tiles_m']} = {tl('cdiv')}({n['M_total']}, {bm})",
            f"{n['num_tiles_n']} = {tl('cdiv')}({n_bound}, {bn})",
            f"{n['tiles_in_group']} = {group} * {n['num_tiles_n']}",
            f"{n['first_tile_m']} = ({n['pid']} // {n['tiles_in_group']}) * {group}",
            f"{n['group_rows']} = min({n['num_tiles_m']} - {n['first_tile_m']}, {group})",
            f"{n['tile_m']} = {n['first_tile_m']} + (({n['pid']} % {n['tiles_in_group']}) % {n['group_rows']})",
            f"{n['tile_n']} = ({n['pid']} % {n['tiles_in_group']}) // {n['group_rows']}",
            f"{n['rows']} = ({n['tile_m']} * {bm} + {tl('arange')}(0, {bm}))[:, None]",
            f"{n['cols']} = {n['tile_n']} * {bn} + {tl('arange')}(0, {bn})",
            *decode, *pro_in,
            f"{acc} = {tl('zeros')}(({bm}, {bn}), dtype={tl('float32')})",
            f"for {n['k_start']} in range(0, {n['K_total']}, {bk}):",
        ]
        loop_body = [f"{n['k_idx']} = ({n['k_start']} + {tl('arange')}(0, {bk}))[None, :]", *k_decode]
        text = "".join(f"{indent}{x}\n" for x in lines) + "".join(f"{inner_indent}{x}\n" for x in loop_body)
        for x in body_lines:
            text += "".join(f"{inner_indent}{line.strip() if i == 0 else line}\n"
                            for i, line in enumerate(x.splitlines()))
        text += f"{inner_indent}{acc} = {tl('dot')}({x_name}, {tl('trans')}({w_name}), {acc}{precision})\n"
        text += "".join(f"{indent}{x}\n" for x in pro_out)
        if epilogue:
            a = ks.text.line_end(loop.end_lineno)  # from the loop's end: the comments above the epilogue too
            _, end, _ = de.body_span(ks)
            text += reindent(de.shifted(ks.text.source, a, end, epi_edits), ks.text.indent(epilogue[0]), indent)
        return text

    start, end, _ = de.body_span(ks)
    launch = _launch_edits(ks, [bm, bn, bk, group], literal, cfg, n_bound, units, bound_text, batch_params)
    sig = append_constexprs(ks, [bm, bn, bk, group])
    extra_sig = []
    if batch_params:
        at = ks.text.end(ks.fn.args.args[-1])
        extra_sig = [Edit(at, at, "".join(f", {p}" for p in batch_params))]
    out = []
    for suffix, precision in (("", ', input_precision="ieee"'), (" (TF32)", ', input_precision="tf32"')):
        rationale = (
            f"The model reads this kernel as a direct convolution: `{acc}` accumulates products of {x_t} and "
            f"{w_t} over the loops {', '.join(loop_names)} (K = {' * '.join(k_ext)}). Re-emitted as an implicit "
            f"GEMM: {literal[bm]}x{literal[bn]} tiles of (output positions) x (output channels) over K-steps of "
            f"{literal[bk]}, the input tile gathered with the draft's own im2col index statements and padding "
            "masks, `tl.dot` into an fp32 accumulator, programs in groups of "
            f"{literal[group]} tile rows; the draft's epilogue runs on the tile, masked at its bounds.")
        rationale += (" **TF32**: this candidate rounds the fp32 operands to TF32 on the tensor cores, unlike the "
                      "draft's exact products; acceptable only under the gate's TF32 tolerance." if suffix else
                      " fp32 operands stay exact (`input_precision=\"ieee\"`), as the draft multiplied them.")
        out.append(finish(recipe, ks.ctx, [Edit(start, end, kernel_text(precision)), sig, *extra_sig, *launch],
                          f"implicit GEMM with tl.dot tiles{suffix}", rationale, config=dict(literal)))
    return out


def _reads_unbound(stmt: ast.stmt, unbound: set[str]) -> None:
    used = {x.id for x in ast.walk(stmt) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)} & unbound
    if used:
        raise Decline(f"line {stmt.lineno}: `{sorted(used)[0]}` (a whole program index) has no counterpart in the "
                      "implicit-GEMM tiles")


def _no_broadcasts(ks: KernelSource, stmt: ast.stmt) -> None:
    for x in ast.walk(stmt):
        if isinstance(x, ast.Subscript) or (isinstance(x, ast.Call) and ks.tl_call(x) in (
                "sum", "reshape", "trans", "dot", "broadcast_to", "expand_dims", "view", "permute")):
            raise Decline(f"line {stmt.lineno}: the draft already shapes tiles (`{ks.segment(x)}`); this schedule "
                          "re-tiles scalar-channel direct convolutions only")


def _launch_edits(ks, blocks, literal, cfg, n_bound, units, bound_text, batch_params) -> list[Edit]:  # noqa: ANN001, PLR0913
    triton = imported_as(ks, "triton")
    sites = ks.launches()
    if not sites:
        raise Decline("no launch of the kernel in this file")
    positional = [p.name for p in ks.info.params if p.kind == "positional"]
    edits: list[Edit] = []
    for site in sites:
        call = ks.node_at(site)
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            raise Decline("a launch passes *args or **kwargs")
        grid = de.grid_elts(ks, call)
        bound_args = {**dict(zip(positional, call.args, strict=False)), **{k.arg: k.value for k in call.keywords}}
        meta = "META"
        m_parts = []
        extra_args = []
        for text, (_, _, b) in zip(bound_text, units, strict=True):
            if text in batch_params:
                var = batch_params[text]
                program, divisor = derived_parts(var, "//") or (var, "")
                axis = int(program[3:])
                if grid is None or axis >= len(grid[0]) or divisor not in bound_args:
                    raise Decline("the batch extent cannot be read from the launch grid")
                batch = f"({ks.segment(grid[0][axis])}) // ({ks.segment(bound_args[divisor])})"
                extra_args.append(f"{text}={batch}")
                m_parts.append(f'{meta}["{text}"]')
            else:
                m_parts.append("(" + de.poly_text(b, lambda p, meta=meta: f'{meta}["{p}"]') + ")")
        n_text = f'{meta}["{n_bound}"]' if n_bound.isidentifier() else n_bound
        axes = f'{triton}.cdiv({" * ".join(m_parts)}, {meta}["{blocks[0]}"]) * {triton}.cdiv({n_text}, ' \
               f'{meta}["{blocks[1]}"])'
        edits.append(ks.text.replace(call.func.slice, f"lambda {meta}: ({axes},)"))
        appended = extra_args + [f"{b}={literal[b]}" for b in blocks]
        for opt, value in (("num_warps", cfg.num_warps), ("num_stages", cfg.num_stages)):
            if value is None:
                continue
            kw = next((k for k in call.keywords if k.arg == opt), None)
            if kw is not None:
                edits.append(ks.text.replace(kw.value, str(value)))
            else:
                appended.append(f"{opt}={value}")
        if appended:
            edits.append(append_argument(ks, call, ", ".join(appended)))
    return edits


RECIPE = SourceRecipe(
    name="schedule-conv-implicit-gemm",
    title="Re-emit a direct convolution as an implicit GEMM (tl.dot tiles, im2col indices in-kernel)",
    keys=(ANY_KERNEL,),
    build=_build,
    summary="direct convolution loops over C_in and taps -> implicit GEMM tl.dot tiles, grouped order",
)
