"""Schedule: a tl.dot operand whose tile is strided along both of its axes -> a packed copy, its last axis contiguous.

Read from the model: a tensor only read, loaded in a loop into a tile that feeds `tl.dot`, whose address has no
tl.arange lane of stride 1. A direct convolution that reads PyTorch's (C_out, C_in, KH, KW) weights as a
[channels, C_out] tile per tap is the common case: stride KH*KW along the channels, C_in*KH*KW along C_out, so
every row of the tile is a gather. The address is split into axes: each lane with the indices a comparison of the
kernel bounds with it (`offs_n < CO`: the lane and `pid * BLOCK_N`, the bound CO), and each remaining loop index
(a static tap loop) on its own, with its extent. The wrapper copies the operand once per call into those axes'
order, loop axes outermost and the tile's last axis contiguous (`torch.as_strided` over the strides and extents the
kernel's own address shows, then `.contiguous()`), and the kernel addresses the copy with the same indices and
masks and the packed strides. The copy costs one read and one write of the operand per call; the gate times it with
the kernel. A grouped convolution's group (`g = pid % G`) is one more axis, outermost, of extent G. A stride passed
as a parameter packs where every launch in the file shows its value and none is 1 (`w.stride(1)` of a weight whose
shape the file shows). Declines with the reason when a stride or an extent cannot be read from the kernel.
"""

from __future__ import annotations

import ast
import math
from dataclasses import replace

from ...computation.model import LANE, LOOP, PROGRAM, Access, Computation, derived_parts
from ...computation.symbolic import Poly
from ...computation.values import Index
from ...kernels import parse_module
from ..model import ANY_KERNEL
from ..recipe_edits import imported_as
from ..recipe_kit import Decline, KernelSource, SourceRecipe, finish
from . import dot_emit as de
from .emit import dot_accumulations, launch_argument
from .flat_loop import flatten


class _Axis:
    """One axis of the operand: its index variables with their weights, stride in the old layout, extent."""

    def __init__(self, weights: dict[str, Poly], stride: Poly, extent: Poly, lane: str | None) -> None:
        self.weights, self.stride, self.extent, self.lane = weights, stride, extent, lane


def _build(recipe: SourceRecipe, ks: KernelSource) -> list:
    from ...computation import lift_kernel

    comp = lift_kernel(ks.ctx.module, ks.info)
    operands = {t for a in dot_accumulations(ks, comp) for t in a.product_of}
    if not operands:
        raise Decline("no loop accumulates tl.dot products")
    written = {a.tensor for a in comp.accesses if a.kind != "load"}
    reasons, out = [], []
    for tensor in sorted(operands - written):
        loads = [a for a in comp.loads if a.tensor == tensor]
        try:
            if len(loads) != 1:
                raise Decline(f"{tensor} is loaded {len(loads)} times")
            out.append(_relayout(recipe, ks, comp, loads[0]))
        except Decline as why:
            reasons.append(f"{tensor}: {why}")
    if not out:
        raise Decline("; ".join(reasons) or "every tl.dot operand is also written")
    return [c for packed in out for c in (packed, *_flattened(recipe, ks, packed))]


def _flattened(recipe: SourceRecipe, ks: KernelSource, packed: object) -> list:
    """The packed kernel with its tl.dot loop nest as one flat loop, verified after packing alone: packing reads
    the nest's loop extents, which the flat loop's decoded indices no longer show, so it comes first; on an H100
    packing alone was faster than both together on both tap-loop convolutions measured (bench/results/h100-blind8/),
    on an H200 probe both together gained 30% (bench/results/h200-conv-probe/)."""
    ctx = replace(ks.ctx, source=packed.source, module=parse_module(packed.source))
    try:
        both = flatten(recipe, KernelSource(ctx))
    except Decline:
        return []
    return [replace(both, title=f"{packed.title}, and flatten the loop nest around tl.dot",
                    rationale=f"{packed.rationale} {both.rationale}")]


def _relayout(recipe: SourceRecipe, ks: KernelSource, comp: Computation, load: Access) -> object:
    if load.offset is None or load.data_dependent:
        raise Decline(f"line {load.line}: the address is not affine over the iteration space")
    if not load.in_loops:
        raise Decline(f"line {load.line}: the tile is loaded once, outside the loop (a copy would not pay)")
    lanes = [d for d in load.dims if d is not None]
    if len(load.dims) != 2 or len(lanes) != 2:
        raise Decline(f"line {load.line}: the load is not a 2-D tile over two tl.arange lanes")
    if any(load.offset.coefficient(lane).constant == 1 for lane in lanes):
        raise Decline(f"line {load.line}: a tile axis is already contiguous in memory")
    shown: list[str] = []
    launches: list[dict[str, int]] | None = None
    for lane in lanes:
        stride = load.offset.coefficient(lane)
        if _never_one(stride):
            continue
        launches = _launch_values(ks) if launches is None else launches
        value = _launch_value(launches, stride)
        if value is None or value < 2:
            raise Decline(f"line {load.line}: the stride `{stride}` along a tile axis is read at run time and may "
                          "be 1 (the axis contiguous)" + ("" if value is None else f"; the launch passes {value}"))
        shown.append(f"`{stride}` = {value}")
    if not load.offset.const.is_zero:
        raise Decline(f"line {load.line}: the address has a constant offset {load.offset.const}")
    view = de.LoopView.of(ks, _outer_loop_line(comp, load))
    axes = [_lane_axis(comp, view, load, lane) for lane in lanes]
    taken = {v for ax in axes for v in ax.weights}
    loops, groups = [], []
    for var, coeff in load.offset.coeffs:
        if var in taken:
            continue
        info = comp.var(var)
        group = derived_parts(var, "%") if info is not None and info.kind == PROGRAM else None
        if group is not None:
            # `g = pid % G` (a grouped convolution's group): an axis of extent G, outermost in the copy
            groups.append(_Axis({var: Poly.of(1)}, coeff, _extent(group[1]), None))
            continue
        if info is None or info.kind != LOOP:
            raise Decline(f"line {load.line}: `{info.label if info else var}` addresses the operand outside its "
                          "tile axes and is no loop with an extent")
        extent = _extent(info.extent)
        loops.append(_Axis({var: Poly.of(1)}, coeff, extent, None))
    # loop axes outermost in the loops' nesting order, then the tile's first axis, its last axis contiguous
    loops.sort(key=lambda ax: load.in_loops.index(next(iter(ax.weights))))
    order = [*groups, *loops, axes[0], axes[1]]
    strides: list[Poly] = []
    inner = Poly.of(1)
    for ax in reversed(order):
        strides.insert(0, inner)
        inner = inner * ax.extent
    call = next((n for n in ast.walk(ks.fn) if isinstance(n, ast.Call) and getattr(n, "lineno", 0) == load.line
                 and ks.tl_call(n) == "load"), None)
    if call is None or not call.args:
        raise Decline(f"line {load.line}: the load's pointer argument cannot be found")
    scope = de.names_before(ks, ks.enclosing_statement(call).lineno)
    texts = [_user_name(scope, load, ax) or _index_text(ks, comp, load, ax) for ax in order]
    new_offset = " + ".join(_wrap(t) if s == Poly.of(1) else f"{_wrap(t)} * {_wrap(de.poly_text(s))}"
                            for t, s in zip(texts, strides, strict=True))
    edits = [ks.text.replace(call.args[0], f"{load.tensor} + {new_offset}")]
    packed = ks.fresh(f"{load.tensor.removesuffix('_ptr')}_packed")
    edits += _launch_edits(ks, load.tensor, packed, order)
    before = ", ".join(str(ax.stride) for ax in order)
    after = ", ".join(str(s) for s in strides)
    rationale = (
        f"The model reads `{load.tensor}` (line {load.line}) as a tl.dot operand whose tile is strided along both "
        f"of its axes (no tl.arange lane of stride 1): each row of the tile is a gather. Its address splits into "
        f"{len(order)} axes with strides ({before}) and extents ({', '.join(str(ax.extent) for ax in order)}), read "
        "from the kernel's own address and bounds. The wrapper now copies it once per call into that order, the "
        f"loop axes outermost and the tile's last axis contiguous (strides ({after})), with `torch.as_strided` over "
        "the kernel's strides and `.contiguous()`; the kernel reads the copy with the same indices and masks. The "
        "copy costs one read and one write of the operand per call, timed with the kernel by the gate.")
    if shown:
        rationale += (f" The strides read at run time are not 1 where the file launches the kernel ({', '.join(shown)}); "
                      "the packed copy is as correct for any other value, and the gate times it.")
    return finish(recipe, ks.ctx, edits, f"Pack the tl.dot operand {load.tensor} with its tile rows contiguous",
                  rationale)


def _launch_values(ks: KernelSource) -> list[dict[str, int]]:
    """Per launch of the kernel in this file, the ints it shows: runtime values the JIT does not make constants
    (`w.stride(1)` of a contiguous (C_out, C_in, 7) weight: 7) and constants, no guessed value among them."""
    from ...specialize.choose import specializations

    return [{**spec.shown, **{k: v for k, v in spec.constants.items()
                              if type(v) is int and not spec.provenance.get(k, "").startswith("assumed")}}
            for spec in specializations(ks.ctx.module, ks.ctx.kernel)]


def _launch_value(launches: list[dict[str, int]], stride: Poly) -> int | None:
    """The stride's least value over the launches; None without a launch, or where one does not show each of its
    parameters."""
    values = []
    for known in launches:
        if any(name not in known for mono, _ in stride.terms for name in mono):
            return None
        values.append(sum(coeff * math.prod(known[name] for name in mono) for mono, coeff in stride.terms))
    return min(values) if values else None


def _never_one(stride: Poly) -> bool:
    """A stride the text shows to exceed 1 for any sizes of at least 1: a literal >= 2 or a product with one
    (`9 * CI`), or a product of two sizes. A lone parameter (`stride_k`, `K`) may be 1 at run time."""
    if len(stride.terms) != 1:
        return False
    (mono, coeff), = stride.terms
    return coeff >= 2 or len(mono) >= 2


def _wrap(text: str) -> str:
    return text if text.replace("_", "a").replace("[:, None]", "").replace("[None, :]", "").isalnum() else f"({text})"


def _outer_loop_line(comp: Computation, load: Access) -> int:
    return comp.var(load.in_loops[0]).line


def _lane_axis(comp: Computation, view: de.LoopView, load: Access, lane: str) -> _Axis:
    """The axis of one lane: the indices a comparison of the kernel bounds together with it, each a multiple of
    the lane's stride in the address, and that comparison's bound as the extent."""
    stride = load.offset.coefficient(lane)
    for c in view.compares:
        if c.loose or c.op not in (ast.Lt, ast.LtE, ast.Gt, ast.GtE):
            continue
        d = c.left.expr + (-c.right.expr) if c.op in (ast.Lt, ast.LtE) else c.right.expr + (-c.left.expr)
        weights = d.as_dict()
        if weights.get(lane) != Poly.of(1):
            continue
        if any(load.offset.coefficient(v) != stride * w for v, w in weights.items()):
            continue
        bound = -d.const + (Poly.of(1) if c.op in (ast.LtE, ast.GtE) else Poly())
        return _Axis(weights, stride, bound, lane)
    label = comp.var(lane).label or lane
    raise Decline(f"no comparison of the kernel bounds the operand's axis along `{label}` (its extent is unknown)")


def _extent(text: str) -> Poly:
    text = text.strip()
    if text.isdigit():
        return Poly.of(int(text))
    if text.isidentifier():
        return Poly.of(text)
    raise Decline(f"the loop's extent `{text}` is not a literal or a parameter")


def _user_name(scope: dict, load: Access, axis: _Axis) -> str | None:
    """The kernel's own name for the axis's element index (`offs_n`, `kh`), broadcast to its tile axis."""
    for name, value in scope.items():
        if not (isinstance(value, Index) and value.expr is not None and value.expr.const.is_zero):
            continue
        if value.expr.as_dict() != axis.weights:
            continue
        dims = tuple(value.dims)
        if axis.lane is None:
            return name if not any(dims) else None
        if dims == tuple(load.dims):
            return name
        if [d for d in dims if d is not None] == [axis.lane] and len(dims) == 1:
            return f"{name}{'[:, None]' if load.dims.index(axis.lane) == 0 else '[None, :]'}"
    return None


def _index_text(ks: KernelSource, comp: Computation, load: Access, axis: _Axis) -> str:
    """Kernel text of the axis's element index: its lane (broadcast to its tile axis), program and loop indices."""
    parts = []
    for var, weight in axis.weights.items():
        info = comp.var(var)
        if info.kind == LANE:
            node = _node_at(ks, var)
            at = load.dims.index(var)
            parts.append(f"{ks.segment(node)}{'[:, None]' if at == 0 else '[None, :]'}")
            continue
        if info.kind == PROGRAM and var.startswith("pid") and var[3:].isdigit():
            parts.append(f"{ks.tl('program_id')}({var[3:]}) * ({de.poly_text(weight)})")
            continue
        group = derived_parts(var, "%") if info.kind == PROGRAM and weight == Poly.of(1) else None
        if group is not None and group[0].startswith("pid") and group[0][3:].isdigit():
            parts.append(f"({ks.tl('program_id')}({group[0][3:]}) % ({group[1]}))")
            continue
        if info.kind == LOOP:
            name, step = _loop_value(ks, info.line)
            unit = de.divide(weight, step)
            if unit is None:
                raise Decline(f"line {info.line}: the loop's step {step} does not divide its weight {weight}")
            parts.append(name if unit == Poly.of(1) else f"{name} * ({de.poly_text(unit)})")
            continue
        raise Decline(f"`{info.label or var}` in the operand's index is neither a lane, a program id nor a loop")
    return " + ".join(parts)


def _node_at(ks: KernelSource, lane: str) -> ast.Call:
    line, col = (int(x) for x in lane.split("@", 1)[1].split(":"))
    for n in ast.walk(ks.fn):
        if isinstance(n, ast.Call) and n.lineno == line and n.col_offset == col and ks.tl_call(n) == "arange":
            return n
    raise Decline(f"the tl.arange of lane {lane} cannot be found")


def _loop_value(ks: KernelSource, line: int) -> tuple[str, Poly]:
    """(loop variable, step) of the loop on `line`, which must count up from 0."""
    loop = next((n for n in ast.walk(ks.fn) if isinstance(n, ast.For) and n.lineno == line), None)
    if loop is None or not isinstance(loop.target, ast.Name) or not isinstance(loop.iter, ast.Call):
        raise Decline(f"line {line}: the loop is not `for name in range(...)`")
    args = loop.iter.args
    start = args[0] if len(args) >= 2 else None
    if start is not None and not (isinstance(start, ast.Constant) and start.value == 0):
        raise Decline(f"line {line}: the loop does not start at 0")
    step = args[2] if len(args) == 3 else None
    if step is None:
        return loop.target.id, Poly.of(1)
    if isinstance(step, ast.Constant) and isinstance(step.value, int):
        return loop.target.id, Poly.of(step.value)
    if isinstance(step, ast.Name):
        return loop.target.id, Poly.of(step.id)
    raise Decline(f"line {line}: the loop's step `{ks.segment(step)}` is not a literal or a parameter")


def _launch_edits(ks: KernelSource, tensor: str, packed: str, order: list[_Axis]) -> list:
    torch = imported_as(ks, "torch")
    sites = ks.launches()
    if not sites:
        raise Decline("no launch of the kernel in this file")
    params = {p.name for p in ks.info.params}
    edits = []
    for site in sites:
        call = ks.node_at(site)
        arg = launch_argument(ks, call, tensor)

        def host(name: str, call: ast.Call = call) -> str:
            if name in params:
                return f"({ks.segment(launch_argument(ks, call, name))})"
            return name

        sizes = ", ".join(de.poly_text(ax.extent, host) for ax in order)
        strides = ", ".join(de.poly_text(ax.stride, host) for ax in order)
        statement = ks.enclosing_statement(call)
        indent = ks.text.indent(statement)
        edits.append(ks.text.insert_before(statement, (
            f"{indent}# the tl.dot operand packed once per call: loop axes outermost, the tile's last axis contiguous\n"
            f"{indent}{packed} = {torch}.as_strided({ks.segment(arg)}, ({sizes},), ({strides},)).contiguous()\n")))
        edits.append(ks.text.replace(arg, packed))
    return edits


RECIPE = SourceRecipe(
    name="schedule-operand-relayout",
    title="Pack a tl.dot operand whose tile is strided along both axes (a copy with the tile's rows contiguous)",
    keys=(ANY_KERNEL, "TL109", "TL207", "TL301", "TL307"),  # strided or uncoalesced loads: evidence when found
    build=_build,
    summary="tl.dot operand gathered along both tile axes -> a packed copy per call, its last tile axis contiguous",
)
