"""Schedule: any loop that accumulates products over K -> tl.dot tiles in grouped program order, pipelined.

Works on the computation model, not the spelling: a K loop of scalar products (`acc += a * b`), of rank-1
updates (`acc += a[:, None] * b[None, :]`), of broadcast sums or of `tl.dot` on blocks all lift to "`acc`
accumulates products of A and B over the loop". The index roles (M, N, K, batch) and each operand's strides come
from the lifted accesses (transposed operands and batch strides included); the bounds from the kernel's own
comparisons (or, for an unmasked scalar kernel, the launch grid). The kernel body is re-emitted: a 1-D grid of
BLOCK_M x BLOCK_N tiles in GROUP_M-swizzled order (a batch program axis kept as axis 1), operand tiles advanced
by pointer increments, `tl.dot` into an fp32 accumulator under the user's name, then the user's own statements
after the loop (bias, activation, scaling, residual, casts, the store) with their index names rebound to the new
tiles and the tiles' bounds and-ed into their masks. The launch gets a grid computed from the block sizes and the
block sizes, num_warps and num_stages as literals (config search moves them). The user's fp32 precision is kept
(`input_precision="ieee"` where the draft multiplied exactly); TF32 is a separate candidate.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ...computation import classify
from ...computation.classify import MATMUL
from ...computation.model import PROGRAM
from ...computation.symbolic import Poly
from ...computation.values import Index
from ...core.targets import is_ascend_target
from ..kernel_patterns import is_zero, load_parts
from ..model import ANY_KERNEL
from ..recipe_edits import and_mask, append_argument, imported_as, paren
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from ..source_edit import Edit
from . import dot_emit as de
from .emit import append_constexprs, assigned_in, free_names
from .split_combine import Partial, combine_then_finish, indented_rest
from .static_casts import StaticCast, cast_branches, recast
from .targets import SMS_GUESS, DotTiles, dot_tiles, measured_grid, wide_dot_tiles

MAX_SPLIT_K = 16
MIN_K_PER_SLICE = 512  # K elements a slice multiplies at least (shorter slices pay the combine for little work)

CASTS = ("to", "T")
TL_OK = ("dot", "sum", "trans", "permute", "reshape", "view", "broadcast_to", "expand_dims", "cast")


def _kernel_loop(ks: KernelSource, line: int) -> tuple[ast.For, list[ast.stmt], list[ast.stmt]]:
    _, _, body = de.body_span(ks)
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.For) and stmt.lineno == line:
            return stmt, body[:i], body[i + 1:]
    raise Decline(f"the K loop (line {line}) is not a statement of the kernel's body (nested loops or branches)")


def _strip_casts(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CASTS:
        node = node.func.value
    return node


def _pure_product(ks: KernelSource, node: ast.AST) -> str | None:
    """None when the expression only multiplies, sums, casts, broadcasts or dots its operands; else the offender."""
    for n in ast.walk(node):
        if isinstance(n, (ast.Name, ast.Load, ast.Store, ast.keyword, ast.Tuple, ast.Slice, ast.Mult, ast.Add)):
            continue
        if isinstance(n, ast.Constant) and (n.value is None or isinstance(n.value, (int, str, bool))):
            continue
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Add)):
            continue
        if isinstance(n, ast.Subscript):
            continue
        if isinstance(n, ast.Attribute) and (ks.resolve(n) or "").startswith("triton.language"):
            continue
        if isinstance(n, ast.Attribute) and n.attr in CASTS:
            continue
        if isinstance(n, ast.Call) and (ks.tl_call(n) in TL_OK or (
                isinstance(n.func, ast.Attribute) and n.func.attr in CASTS)):
            continue
        return ks.segment(n) if hasattr(n, "lineno") else type(n).__name__
    return None


def _check_loop(ks: KernelSource, loop: ast.For, acc: str, operand_lines: dict[int, str], view: de.LoopView,
                after: list[ast.stmt]) -> tuple[dict[str, str], dict[str, str], bool, list[StaticCast]]:
    """The operand names loaded in the loop, the user's tl.dot precision keywords, whether the draft's products
    were exact (no TF32), and its static recasts of the operand tiles (`if UPCAST: a = a.to(tl.float32)`, carried
    after the schedule's loads); Decline for any other work in the K loop."""
    names: dict[str, str] = {}
    dot_kw: dict[str, str] = {}
    used_after = set(free_names(after))
    saw_dot = False
    data = set(operand_lines.values()) | {acc}  # names holding loaded values (the operands and what is made of them)
    casts = cast_branches(ks, loop.body)
    carried = {id(c.node) for c in casts}
    for stmt in loop.body:
        if id(stmt) in carried:
            if not {c.target for c in casts if c.node is stmt} <= set(names.values()):
                raise Decline(f"line {stmt.lineno}: the K loop recasts something other than a loaded operand")
            continue
        targets = assigned_in(stmt)
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)) else None
        load = _strip_casts(value) if value is not None else None
        if isinstance(load, ast.Call) and ks.is_tl(load, "load") and load.lineno in operand_lines:
            _, _, other = load_parts(ks, load)
            if other is not None and not is_zero(other):
                raise Decline(f"line {load.lineno}: the operand load fills masked lanes with a non-zero value")
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                names[operand_lines[load.lineno]] = stmt.targets[0].id
                data.add(stmt.targets[0].id)
            continue
        if value is not None and len(targets) == 1:
            (name,) = targets
            before = view.before_loop.get(name)
            if isinstance(before, Index) and name != acc:  # a pointer or offset advanced each step
                if name in used_after:
                    raise Decline(f"`{name}` is advanced in the K loop and read after it")
                continue
            reads = {x.id for x in ast.walk(value) if isinstance(x, ast.Name)}
            has_load = any(ks.is_tl(x, "load") for x in ast.walk(value))
            if not (reads & data) and not has_load:  # index or mask arithmetic of this step (re-derived)
                if name in used_after:
                    raise Decline(f"`{name}` is computed in the K loop and read after it")
                continue
            data.add(name)
            offender = _pure_product(ks, value)
            if offender is not None:
                raise Decline(f"line {stmt.lineno}: the K loop also computes `{offender}` (not a plain product "
                              "of the operands)")
            if name != acc and name in used_after:
                raise Decline(f"`{name}` is computed in the K loop and read after it")
            for call in ast.walk(value):
                if ks.is_tl(call, "dot"):
                    saw_dot = True
                    for kw in call.keywords:
                        if kw.arg in ("input_precision", "allow_tf32", "out_dtype", "max_num_imprecise_acc"):
                            dot_kw[kw.arg] = ks.segment(kw.value)
            continue
        raise Decline(f"line {stmt.lineno}: the K loop also does `{ks.segment(stmt).splitlines()[0]}`")
    exact = not saw_dot or dot_kw.get("input_precision", "").strip("'\"") == "ieee" or \
        dot_kw.get("allow_tf32") == "False"
    return names, dot_kw, exact, casts


def _operand_order(tensors: tuple[str, ...], loads: dict, out) -> tuple[str, str]:  # noqa: ANN001
    """(A, B): A is the operand whose index runs along the output tile's first axis (its rows)."""
    a_t, b_t = tensors
    first = out.dims[0] if len(out.dims) == 2 else None
    if first is not None and first in loads[b_t].offset.variables and first not in loads[a_t].offset.variables:
        return b_t, a_t
    return a_t, b_t


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    from ...computation import lift_kernel

    comp = lift_kernel(ks.ctx.module, ks.info)
    kind = classify(comp)
    if kind.name != MATMUL:
        raise Decline(f"the model classifies the kernel as {kind.name} ({'; '.join(kind.reasons)}), not an "
                      "accumulation of products over K")
    if ks.info.autotune is not None:
        raise Decline("the kernel is autotuned: its configs own the block sizes")
    acc = next(a for a in comp.accumulations if a.op in ("dot", "sum") and len(a.product_of) >= 2)
    if len(acc.product_of) != 2:
        raise Decline(f"`{acc.var}` accumulates products of {len(acc.product_of)} tensors")
    loop_var = comp.var(acc.loop)
    loop, prologue, epilogue = _kernel_loop(ks, loop_var.line)
    view = de.LoopView.of(ks, loop_var.line)
    comp = view.comp
    in_loop = [a for a in comp.loads if acc.loop in a.in_loops]
    loads = {}
    for t in acc.product_of:
        found = [a for a in in_loop if a.tensor == t]
        if len(found) != 1:
            raise Decline(f"{t} is loaded {len(found)} times in the K loop")
        if found[0].offset is None:
            raise Decline(f"the load of {t} (line {found[0].line}) is not affine: {found[0].why}")
        loads[t] = found[0]
    stores = [s for s in comp.stores if not s.in_loops]
    if len(stores) != 1 or stores[0].offset is None or any(s.in_loops for s in comp.stores):
        raise Decline(f"the kernel writes {len(comp.stores)} outputs; the schedule writes one tile after the loop")
    out = stores[0]
    a_t, b_t = _operand_order(acc.product_of, loads, out)
    roles = de.assign_roles(comp, loads[a_t], loads[b_t], out)
    if de.K not in roles.roles or acc.loop not in roles.roles[de.K].weights:
        raise Decline("the accumulation loop does not walk the operands' shared (K) axis")
    if any(comp.var(v).kind == PROGRAM for v in roles.roles[de.K].weights):
        raise Decline("the K axis is already split across programs")
    batch = roles.roles.get(de.BATCH)
    if batch is not None and (len(batch.weights) != 1 or comp.var(batch.unit).kind != PROGRAM
                              or not batch.unit[3:].isdigit()):
        raise Decline("the batch index is not one program id")
    op_a = de.operand(roles, loads[a_t], (de.M, de.K, de.BATCH))
    op_b = de.operand(roles, loads[b_t], (de.K, de.N, de.BATCH))
    bounds: dict[str, str] = {}
    bound_polys: dict[str, Poly] = {}
    for r in (de.M, de.N, de.K):
        role = roles.roles[r]
        b = de.bound(view, role)
        if b is None:
            b = de.loop_stop_bound(view, role, loop, ks) if r == de.K else de.grid_fallback(ks, role, view)
        if b is None:
            raise Decline(f"no bound for the {r} axis: no comparison masks it and no launch size covers it")
        bounds[r] = de.poly_text(b)
        bound_polys[r] = b
    operand_lines = {loads[a_t].line: a_t, loads[b_t].line: b_t}
    names, dot_kw, exact, casts = _check_loop(ks, loop, acc.var, operand_lines, view, epilogue)
    return _emit(recipe, ks, view, roles, op_a, op_b, bounds, bound_polys, acc.var, names, dot_kw, exact,
                 prologue, loop, epilogue, out, casts)


def _emit(recipe, ks, view, roles, op_a, op_b, bounds, bound_polys, acc, names, dot_kw, exact,  # noqa: ANN001, PLR0913
          prologue, loop, epilogue, out, casts) -> list:  # noqa: ANN001
    comp = view.comp
    tiles_cfg = dot_tiles(ks.ctx.target)
    fresh = ks.fresh
    tl = ks.tl
    # block sizes: the user's constexpr where a role's lanes were sized by one, new parameters otherwise
    params = {p.name: p for p in ks.info.params}
    user_blocks: dict[str, str] = {}
    blocks: dict[str, str] = {}
    added: list[str] = []
    for r, base in ((de.M, "BLOCK_M"), (de.N, "BLOCK_N"), (de.K, "BLOCK_K")):
        ext = roles.roles[r].lane_extent
        if ext and ext in params and params[ext].is_constexpr and ext not in blocks.values():
            blocks[r] = user_blocks[r] = ext
        else:
            blocks[r] = fresh(base)
            while blocks[r] in added:
                blocks[r] = blocks[r] + "_"
            added.append(blocks[r])
    group = fresh("GROUP_M")
    added.append(group)
    literal = {blocks[de.M]: tiles_cfg.block_m, blocks[de.N]: tiles_cfg.block_n, blocks[de.K]: tiles_cfg.block_k,
               group: tiles_cfg.group_m}
    n = {k: fresh(k) for k in ("pid", "num_tiles_m", "num_tiles_n", "tiles_in_group", "first_tile_m",
                               "group_rows", "tile_m", "tile_n", "lane_m", "lane_n", "lane_k", "rows", "cols",
                               "k_start", "a_tile_ptrs", "b_tile_ptrs")}
    pid_b = fresh("pid_batch") if de.BATCH in roles.roles else None
    a_user, b_user = names.get(op_a.access.tensor), names.get(op_b.access.tensor)  # the draft's operand tiles
    a_name = a_user or fresh("a")
    b_name = b_user or fresh("b")
    tiles = de.Tiles({de.M: n["rows"], de.N: n["cols"]}, {de.M: n["tile_m"], de.N: n["tile_n"]},
                     {de.M: n["lane_m"], de.N: n["lane_n"]}, blocks, pid_b)

    # the user's statements after the loop, and the prologue names they read, rebound to the new tiles
    needed = [x for x in free_names(epilogue) if x != acc]
    loop_assigned = assigned_in(loop)
    rebound: list[str] = []
    copied: list[ast.stmt] = []
    seen: set[str] = set()
    while needed:
        name = needed.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if name in loop_assigned and name != acc:
            raise Decline(f"`{name}` is assigned in the K loop and read after it")
        writers = [s for s in prologue if name in assigned_in(s)]
        if not writers:
            continue  # a parameter, a module name or a builtin
        value = view.before_loop.get(name)
        if isinstance(value, Index) and value.expr is not None and value.expr.coeffs:
            text = de.rebind(value, roles, tiles, user_blocks)
            if text is None:
                raise Decline(f"`{name}` (read after the loop) has no counterpart in the new tiles")
            rebound.append(f"{name} = {text}")
            continue
        for w in writers:
            if not isinstance(w, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                raise Decline(f"line {w.lineno}: `{name}` is set by a compound statement")
            if w not in copied:
                copied.append(w)
            needed.extend(x for x in free_names([w]) if x not in seen)
    copied.sort(key=lambda s: s.lineno)

    # the tiles' bounds and-ed into every memory access the kept statements make
    edits: list[Edit] = []
    kept = copied + epilogue
    for stmt in kept:
        for call in ast.walk(stmt):
            kind = ks.tl_call(call)
            if kind not in ("load", "store") and not (kind or "").startswith("atomic_"):
                continue
            access = next((x for x in comp.accesses if x.line == call.lineno and
                           (x.kind == "load") == (kind == "load")), None)
            if access is None or access.offset is None:
                raise Decline(f"line {call.lineno}: an access after the loop could not be modelled")
            mask = de.mask_for(access, roles, tiles, bounds)
            if mask:
                edits.append(and_mask(ks, call, mask))

    indent = ks.text.indent(loop)
    inner = ks.text.indent(loop.body[0])
    start, end, _ = de.body_span(ks)

    def addr(op: de.Operand, tensor: str, rows_part: str, cols_part: str) -> str:
        parts = [tensor]
        if not op.const.is_zero:
            parts.append(f"({de.poly_text(op.const)})")
        if de.BATCH in op.strides:
            parts.append(f"{pid_b} * ({de.poly_text(op.strides[de.BATCH])})")
        return " + ".join([*parts, rows_part, cols_part])

    s = {r: de.poly_text(p) for r, p in op_a.strides.items()}
    t = {r: de.poly_text(p) for r, p in op_b.strides.items()}
    bm, bn, bk = blocks[de.M], blocks[de.N], blocks[de.K]
    kb = f"({bounds[de.K]})" if not bounds[de.K].isidentifier() else bounds[de.K]

    def kernel_text(precision: str, split: SplitK | None = None) -> str:
        k_first = f"({split.first} + {n['lane_k']})" if split else n["lane_k"]
        lines = [
            "# tritonlens schedule: tl.dot tiles in grouped program order over K, the epilogue fused after it",
            f"{n['pid']} = {tl('program_id')}(0)",
            f"{n['num_tiles_m']} = {tl('cdiv')}({bounds[de.M]}, {bm})",
            f"{n['num_tiles_n']} = {tl('cdiv')}({bounds[de.N]}, {bn})",
            f"{n['tiles_in_group']} = {group} * {n['num_tiles_n']}",
            f"{n['first_tile_m']} = ({n['pid']} // {n['tiles_in_group']}) * {group}",
            f"{n['group_rows']} = min({n['num_tiles_m']} - {n['first_tile_m']}, {group})",
            f"{n['tile_m']} = {n['first_tile_m']} + (({n['pid']} % {n['tiles_in_group']}) % {n['group_rows']})",
            f"{n['tile_n']} = ({n['pid']} % {n['tiles_in_group']}) // {n['group_rows']}",
        ]
        if pid_b:
            lines.append(f"{pid_b} = {tl('program_id')}(1)")
        lines += [
            f"{n['lane_m']} = {tl('arange')}(0, {bm})",
            f"{n['lane_n']} = {tl('arange')}(0, {bn})",
            f"{n['lane_k']} = {tl('arange')}(0, {bk})",
            f"{n['rows']} = {n['tile_m']} * {bm} + {n['lane_m']}",
            f"{n['cols']} = {n['tile_n']} * {bn} + {n['lane_n']}",
        ]
        if split:
            lines += [
                f"# split-K: the K loop is cut into tl.num_programs({split.axis}) slices; this program multiplies one",
                f"{split.size} = {tl('cdiv')}({tl('cdiv')}({bounds[de.K]}, {bk}), {tl('num_programs')}({split.axis}))"
                f" * {bk}",
                f"{split.first} = {tl('program_id')}({split.axis}) * {split.size}",
            ]
        k_range = (f"range({split.first}, {tl('minimum')}({split.first} + {split.size}, {bounds[de.K]}), {bk})"
                   if split else f"range(0, {bounds[de.K]}, {bk})")
        lines += [
            f"{n['a_tile_ptrs']} = " + addr(op_a, op_a.access.tensor, f"{n['rows']}[:, None] * ({s[de.M]})",
                                           f"{k_first}[None, :] * ({s[de.K]})"),
            f"{n['b_tile_ptrs']} = " + addr(op_b, op_b.access.tensor, f"{k_first}[:, None] * ({t[de.K]})",
                                           f"{n['cols']}[None, :] * ({t[de.N]})"),
            f"{acc} = {tl('zeros')}(({bm}, {bn}), dtype={tl('float32')})",
            f"for {n['k_start']} in {k_range}:",
        ]
        body = [
            f"{a_name} = {tl('load')}({n['a_tile_ptrs']}, mask=({n['rows']}[:, None] < {bounds[de.M]}) & "
            f"({n['lane_k']}[None, :] < {kb} - {n['k_start']}), other=0.0)",
            f"{b_name} = {tl('load')}({n['b_tile_ptrs']}, mask=({n['lane_k']}[:, None] < {kb} - {n['k_start']}) & "
            f"({n['cols']}[None, :] < {bounds[de.N]}), other=0.0)",
            *recast(casts, a_user, a_name),
            *recast(casts, b_user, b_name),
            f"{acc} = {tl('dot')}({a_name}, {b_name}, {acc}{precision})",
            f"{n['a_tile_ptrs']} += {bk} * ({s[de.K]})",
            f"{n['b_tile_ptrs']} += {bk} * ({t[de.K]})",
        ]
        text = "".join(f"{indent}{x}\n" for x in lines) + "".join(f"{inner}{x}\n" for x in body)
        rest = "".join(f"{indent}{x}\n" for x in rebound)
        for stmt in copied:
            a, b = ks.text.statement_lines(stmt)
            rest += de.shifted(ks.text.source, a, b, edits)
        if epilogue:
            a = ks.text.line_end(loop.end_lineno)
            rest += de.shifted(ks.text.source, a, end, edits)
        if split is None:
            return text + rest
        within = f"({n['rows']}[:, None] < {bounds[de.M]}) & ({n['cols']}[None, :] < {bounds[de.N]})"
        slot = f"{n['rows']}[:, None] * ({bounds[de.N]}) + {n['cols']}[None, :]"  # the output's own coordinates
        partial = Partial(acc, "sum", split.workspace, slot, within)
        names = {"finishes": split.finishes, acc: split.slot}
        return (text + combine_then_finish(ks, indent, [partial], split.arrivals, n["pid"], split.axis, names)
                + indented_rest(rest, indent))

    launch_edits = _launch_edits(ks, blocks, user_blocks, added, literal, tiles_cfg, bound_polys, roles)
    sig = append_constexprs(ks, added)
    extra = {k: v for k, v in dot_kw.items() if k != "allow_tf32"}
    if exact and "input_precision" not in extra:
        extra["input_precision"] = '"ieee"'
    variants: list[tuple[str, dict, SplitK | None, DotTiles]] = [("", extra, None, tiles_cfg)]
    wide = wide_dot_tiles(ks.ctx.target)
    if wide is not None:  # config search moves one knob a step; the wide tile is three steps away
        variants.append((f" ({wide.block_m}x{wide.block_n}x{wide.block_k} tiles)", extra, None, wide))
    if exact:
        variants.append((" (TF32)", {**extra, "input_precision": '"tf32"'}, None, tiles_cfg))
    few = _few_tiles(ks)
    if few and de.BATCH not in roles.roles and not is_ascend_target(ks.ctx.target):
        names = {k: fresh(k) for k in ("k_slice", "k_first", "finishes", "slot", "acc_partials", "arrivals",
                                       "k_splits")}
        split = SplitK(1, names["k_slice"], names["k_first"], names["finishes"], names["slot"],
                       names["acc_partials"], names["arrivals"], names["k_splits"], few)
        tf32 = variants[-1][1].get("input_precision") == '"tf32"'
        variants.append((" (TF32, split-K)" if tf32 and exact else " (split-K)", variants[-1][1], split, tiles_cfg))
    out_list = []
    for suffix, kw, split, tiles_here in variants:
        precision = "".join(f", {k}={v}" for k, v in kw.items())
        body_edit = Edit(start, end, kernel_text(precision, split))
        edits_here = [body_edit, sig, *launch_edits]
        lit = literal  # this candidate's block literals (the wide tile has its own; the others share the default)
        if tiles_here is not tiles_cfg:
            lit = {blocks[de.M]: tiles_here.block_m, blocks[de.N]: tiles_here.block_n,
                   blocks[de.K]: tiles_here.block_k, group: tiles_here.group_m}
            edits_here = [body_edit, sig, *_launch_edits(ks, blocks, user_blocks, added, lit, tiles_here,
                                                         bound_polys, roles)]
        if split is not None:
            edits_here = [body_edit, sig, append_constexprs(ks, [split.workspace, split.arrivals], constexpr=False),
                          *_launch_edits(ks, blocks, user_blocks, added, literal, tiles_cfg, bound_polys, roles,
                                         split.splits),
                          *_split_launch_edits(ks, split, bound_polys, op_a.access.tensor)]
        rationale = (
            f"The model reads this kernel as `{acc}` accumulating products of {op_a.access.tensor} and "
            f"{op_b.access.tensor} over K (strides from the lifted accesses). The body is re-emitted as "
            f"{lit[bm]}x{lit[bn]} output tiles over K-steps of {lit[bk]} on the matrix units "
            f"(`tl.dot` into an fp32 accumulator), programs in groups of {lit[group]} tile rows so that "
            "concurrent programs share operand tiles in L2, operand pointers advanced per step and "
            f"{tiles_here.num_stages or 'default'} pipeline stages; the statements after the loop are the "
            "draft's own, rebound to the new tiles and masked at their bounds."
        )
        if tiles_here is wide:
            rationale += (f" Wide tiles ({wide.block_m}x{wide.block_n}x{wide.block_k}, {wide.num_warps} warps): on "
                          "an H100 they reached 0.90x of cuBLAS on a 4096^3 fp16 product where 128x128x32 reached "
                          "0.74x (bench/results/h100-dot-probe); fp32 operands may not fit shared memory (then the "
                          "compile check rejects this candidate).")
        if exact and kw.get("input_precision") == '"tf32"':
            rationale += (" **TF32**: this candidate rounds the fp32 operands to TF32 (10-bit mantissa) on the "
                          "tensor cores, unlike the draft's exact fp32 products; it is only acceptable where the "
                          "gate's TF32 tolerance applies.")
        elif exact:
            rationale += " fp32 operands stay exact (`input_precision=\"ieee\"`), as the draft multiplied them."
        if split is not None:
            rationale += (
                f" **Split-K**: the profiled launch had {split.measured} programs, fewer than the device's "
                f"{SMS_GUESS} SMs (**guess:** the sm_9x entry of the device table), so the K loop is also cut into "
                "slices over grid axis 1 (as many as fill the SMs with 128x128 tiles, at most "
                f"{MAX_SPLIT_K}, each at least {MIN_K_PER_SLICE} deep); the slices add their fp32 tiles into a "
                "workspace and the last one to arrive runs the epilogue (split_combine.py)."
            )
        out_list.append(finish(recipe, ks.ctx, edits_here,
                               f"tl.dot tiles with grouped program order and pipelining{suffix}", rationale,
                               config=dict(lit)))
    return out_list


@dataclass(frozen=True)
class SplitK:
    """Names of the split-K form: the grid axis of the slices and the new kernel names."""

    axis: int
    size: str  # K elements per slice
    first: str  # this slice's first K index
    finishes: str
    slot: str
    workspace: str
    arrivals: str
    splits: str  # the wrapper's number of slices (grid axis `axis`)
    measured: int  # the profiled grid that asked for it


def _few_tiles(ks: KernelSource) -> int | None:
    """The profiled grid's programs when they are fewer than the SMs (a product with few output tiles), else None."""
    measured = measured_grid(ks.ctx)
    return measured if measured is not None and measured < SMS_GUESS else None


def _split_launch_edits(ks: KernelSource, split: SplitK, bound_polys: dict[str, Poly], operand: str) -> list[Edit]:
    """Each launch: the number of K slices (fill the SMs with nominal 128x128 tiles), the fp32 workspace of the
    output's size and one arrival counter per possible tile (16x16 the smallest), all only when K is split."""
    triton, torch = imported_as(ks, "triton"), imported_as(ks, "torch")
    positional = [p.name for p in ks.info.params if p.kind == "positional"]
    out: list[Edit] = []
    splits = split.splits
    for site in ks.launches():
        call = ks.node_at(site)
        args = {**dict(zip(positional, call.args, strict=False)), **{k.arg: k.value for k in call.keywords}}
        try:
            m, n, k = (de.poly_text(bound_polys[r], lambda p, args=args: paren(ks.segment(args[p])))
                       for r in (de.M, de.N, de.K))
        except KeyError as missing:
            raise Decline(f"line {call.lineno}: the launch does not pass {missing} where split-K can read it") from None
        statement = ks.enclosing_statement(call)
        ind = ks.text.indent(statement)
        if operand not in args:
            raise Decline(f"line {call.lineno}: the launch does not pass {operand} where split-K can read it")
        device = f"{paren(ks.segment(args[operand]))}.device"
        out.append(ks.text.insert_before(statement, (
            f"{ind}# split-K when the output has too few 128x128 tiles to fill the {SMS_GUESS} SMs (a guess: the "
            "sm_9x entry)\n"
            f"{ind}{splits} = max(1, min({MAX_SPLIT_K}, {SMS_GUESS} // ({triton}.cdiv({m}, 128) * "
            f"{triton}.cdiv({n}, 128)), {k} // {MIN_K_PER_SLICE}))\n"
            f"{ind}{split.workspace} = {torch}.zeros({m} * {n} if {splits} > 1 else 1, device={device}, "
            f"dtype={torch}.float32)\n"
            f"{ind}{split.arrivals} = {torch}.zeros({triton}.cdiv({m}, 16) * {triton}.cdiv({n}, 16) if {splits} > 1 "
            f"else 1, device={device}, dtype={torch}.int32)\n")))
        out.append(append_argument(ks, call, f"{split.workspace}={split.workspace}, {split.arrivals}={split.arrivals}"))
    return out


def _launch_edits(ks: KernelSource, blocks, user_blocks, added, literal, tiles_cfg, bound_polys, roles,  # noqa: ANN001
                  extra_axis: str | None = None) -> list[Edit]:
    triton = imported_as(ks, "triton")
    sites = ks.launches()
    if not sites:
        raise Decline("no launch of the kernel in this file")
    positional = [p.name for p in ks.info.params if p.kind == "positional"]
    edits: list[Edit] = []
    options = {"num_warps": tiles_cfg.num_warps, "num_stages": tiles_cfg.num_stages}
    batch = roles.roles.get(de.BATCH)
    for site in sites:
        call = ks.node_at(site)
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            raise Decline("a launch passes *args or **kwargs")
        grid = de.grid_elts(ks, call)
        meta = (grid[1] if grid and grid[1] else "META")
        key = lambda p, meta=meta: f'{meta}["{p}"]'  # noqa: E731 (a launch argument by name)
        mt, nt = de.poly_text(bound_polys[de.M], key), de.poly_text(bound_polys[de.N], key)
        axes = [f'{triton}.cdiv({mt}, {meta}["{blocks[de.M]}"]) * {triton}.cdiv({nt}, {meta}["{blocks[de.N]}"])']
        if batch is not None:
            axis = int(batch.unit[3:])
            if grid is None or axis >= len(grid[0]):
                raise Decline("the launch grid has no batch axis to keep")
            axes.append(ks.segment(grid[0][axis]))
        if extra_axis is not None:
            axes.append(extra_axis)
        edits.append(ks.text.replace(call.func.slice, f"lambda {meta}: ({', '.join(axes)}{',' if len(axes) == 1 else ''})"))
        bound_args = {**dict(zip(positional, call.args, strict=False)), **{k.arg: k.value for k in call.keywords}}
        for name in user_blocks.values():
            node = bound_args.get(name)
            if node is None:
                raise Decline(f"a launch does not pass {name}")
            edits.append(ks.text.replace(node, str(literal[name])))
        appended = [f"{name}={literal[name]}" for name in added]
        for opt, value in options.items():
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
    name="schedule-dot-tiles",
    title="Re-emit a K accumulation as tl.dot tiles (grouped order, pipelined, epilogue fused)",
    keys=(ANY_KERNEL,),
    build=_build,
    summary="any loop accumulating products over K -> tl.dot tiles, GROUP_M order, num_stages, fused epilogue",
)
