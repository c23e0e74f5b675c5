"""NVIDIA checks on global memory access: vector widths of loads/stores (from the TTGIR layouts and the PTX
instructions) and layout conversions through shared memory, with the evidence excerpts they attach."""

from __future__ import annotations

import re

from ...core.findings import Evidence, Finding, Severity
from ...core.rules import Confirms, DependsOn, register_check
from ..attribution import stage_lines
from ..ir.mlir import MlirModule, MlirOp
from .context import DOT_OPS, Context
from .dataflow import Dataflow, value_type
from .declare import _AXIS, _COALESCE, _GUIDE_MEM, _LOADSTORE, _RLC, CHECK_FAMILY, cuda_rule


def _strided(high: Finding, low: Finding) -> bool:
    return high.data.get("cause") == "stride"


def _scattered(high: Finding, low: Finding) -> bool:
    # Excess sectors come from lanes far apart (stride, gather); unaligned or masked but contiguous scalar
    # accesses (TL302/TL303) still coalesce, so they do not explain TL207.
    return high.data.get("cause") in ("stride", "gather")


NOT_CONTIGUOUS = cuda_rule(
    "TL301",
    "global-access-not-contiguous",
    "Global load/store is not vectorized: the address is not provably contiguous",
    Severity.WARNING,
    "Triton's AxisInfo analysis computes, for every pointer tensor, how many consecutive elements along the "
    "fastest dimension are contiguous. The coalesce pass gives each thread that many elements (up to 16 bytes) "
    "and the lowering emits one `ld.global.v4`/`LDG.E.128` per thread. When the offset is multiplied by a "
    "runtime stride or comes from a loaded index (a gather), contiguity is 1 and every element becomes its own "
    "32-bit (or narrower) transaction, multiplying instructions and, for strides, the memory sectors fetched.\n\n"
    "Fix: make the contiguous index the innermost one (`base + row * stride + cols`), pass unit strides so "
    "Triton specializes them to 1, or transpose the data once so gathers read whole rows.",
    _AXIS,
    _COALESCE,
    _GUIDE_MEM,
    confirms=(
        Confirms("TL109", "the innermost index is multiplied by a stride", _strided),
        Confirms("TL207", "neighbouring lanes access addresses far apart", _scattered),
        Confirms("TL131", "the innermost index is multiplied by the row length", _strided),
    ),
)


UNALIGNED = cuda_rule(
    "TL302",
    "global-access-unaligned",
    "Global load/store is not vectorized: alignment of the address is unknown",
    Severity.WARNING,
    "Vector loads need the first element of each thread's chunk to be 16-byte aligned. AxisInfo proves that "
    "from `tt.divisibility` on kernel arguments (Triton adds it at launch for pointers aligned to 16 bytes and "
    "integers divisible by 16). An integer argument without it (a row stride, an offset) used in the address "
    "makes the alignment unknown, and the lowering falls back to scalar accesses.\n\n"
    "Fix: make strides/sizes multiples of 16 elements (pad rows), or let Triton specialize them (do not mark "
    "them `do_not_specialize`); `tl.multiple_of(x, 16)` asserts it when you know it holds.",
    _AXIS,
    _LOADSTORE,
)


MASK = cuda_rule(
    "TL303",
    "mask-defeats-vectorization",
    "The mask's granularity forces scalar accesses",
    Severity.WARNING,
    "A masked load can only be vectorized if the mask is constant over each vector (AxisInfo 'constancy'). "
    "`offs < n` with `n` not known divisible by 16 gives constancy 1, so the lowering splits every vector "
    "access into scalar predicated ones even though the pointer itself is contiguous and aligned.\n\n"
    "Fix: let `n` be specialized as divisible by 16 (pad the tensor), or split off the ragged tail into a "
    "separate masked launch and use an unmasked (or `EVEN_N: tl.constexpr`) path for full blocks.",
    _AXIS,
    _LOADSTORE,
)


CONVERT = cuda_rule(
    "TL304",
    "layout-conversion-through-shared-memory",
    "A layout conversion round-trips through shared memory",
    Severity.INFO,
    "`ttg.convert_layout` between distributed layouts that move data across threads is lowered to a store to "
    "shared memory, a barrier and a load back. RemoveLayoutConversions removes the ones it can; the rest come "
    "from reductions (`tl.sum(axis=...)` results used with another layout), transposes, loads and stores whose "
    "coalesced layouts differ, or dot operands. Inside a loop this costs shared-memory bandwidth and a barrier "
    "every iteration.\n\nFix: keep producers and consumers in one layout (same access pattern for loads and "
    "stores, reduce along the contiguous axis, hoist conversions out of loops).",
    _RLC,
    depends_on=DependsOn.LINE,  # forced by the narrow access on its line
)



ELEM_BITS = {"f64": 64, "i64": 64, "f32": 32, "i32": 32, "f16": 16, "bf16": 16, "i16": 16, "i8": 8, "i1": 8}
_FP8 = re.compile(r"f8E\w+")
_SPT_RE = re.compile(r"sizePerThread\s*=\s*\[([\d,\s]+)\]")
_ORDER_RE = re.compile(r"order\s*=\s*\[([\d,\s]+)\]")
_LAYOUT_REF_RE = re.compile(r",\s*(#(?!smem|shared)[\w.]+)>")
_CONTIG_RE = re.compile(r"contiguity\s*=\s*(\d+)")


def elem_bits(elem: str) -> int:
    elem = elem.replace("!tt.ptr<", "").rstrip(">")
    if _FP8.match(elem):
        return 8
    return ELEM_BITS.get(elem, 32)


def _layout_bits(ttgir: MlirModule, op: MlirOp) -> int | None:
    """Bits per thread the TTGIR layout of a load/store gives along its contiguous dimension."""
    shape, elem = value_type(op)
    bits = elem_bits(elem)
    m = _CONTIG_RE.search(op.text)
    if m:
        return min(128, int(m[1]) * bits)
    ref = _LAYOUT_REF_RE.search(op.text.split(" : ", 1)[-1])
    if not ref:
        return bits if not shape else None
    layout = ttgir.aliases.get(ref[1], "")
    spt, order = _SPT_RE.search(layout), _ORDER_RE.search(layout)
    if not spt:
        return None
    per = [int(x) for x in spt[1].split(",")]
    fast = int(order[1].split(",")[0]) if order else len(per) - 1
    return min(128, per[fast] * bits)


@register_check(CHECK_FAMILY, NOT_CONTIGUOUS, UNALIGNED, MASK)
def check_vectorization(ctx: Context) -> None:
    ttir, ttgir = ctx.parsed.ttir, ctx.parsed.ttgir
    if ttir is None or ttgir is None or ctx.parsed.ptx is None:
        return
    flow = ctx.flow(ttir)
    gir_by_line: dict[tuple[int, str], list[MlirOp]] = {}
    for op in ttgir.ops:
        kind = _access_kind(op.name)
        line = ctx.line_of(op)
        if kind and line is not None:
            gir_by_line.setdefault((line, kind), []).append(op)
    reported: set[tuple[int, str]] = set()
    for op in ttir.ops:
        kind = _access_kind(op.name)
        line = ctx.line_of(op)
        if kind is None or line is None or (line, kind) in reported or not op.operands:
            continue
        shape, elem = value_type(op)
        bits = elem_bits(elem)
        numel = 1
        for d in shape:
            numel *= d
        threads = ctx.num_warps * 32
        if not shape or numel * bits < threads * 128 or bits >= 128:
            continue  # too few elements for every thread to move 16 bytes: scalar access is expected
        stats = ctx.lines.get(line)
        measured = (stats.global_load_bits if kind == "load" else stats.global_store_bits) if stats else []
        gir_ops = gir_by_line.get((line, kind), [])
        layout_bits = [b for b in (_layout_bits(ttgir, g) for g in gir_ops) if b]
        achieved = min(measured) if measured else (min(layout_bits) if layout_bits else None)
        if achieved is None or achieved >= 128:
            continue
        allowed = max(layout_bits) if layout_bits else achieved
        ptr = op.operands[0]
        facts = flow.address(ptr, len(shape))
        mask_args: list[str] = []
        if kind == "load" and len(op.operands) > 1:
            mask_args = flow.unaligned_args(op.operands[1])
        elif kind == "store" and len(op.operands) > 2:
            mask_args = flow.unaligned_args(op.operands[2])
        what = "load" if kind == "load" else "store"
        ptx_ev = _ptx_evidence(ctx, line, kind)
        sass_ev = _sass_evidence(ctx, line, kind)
        gir_ev = ctx.excerpt("ttgir", [g.ir_line for g in gir_ops])
        width = f"{achieved}-bit" if achieved else "scalar"
        per_thread = max(1, 128 // max(achieved, 1))
        gain = f"up to {per_thread}x fewer {what} instructions on this line"
        base = facts.base or "the pointer"
        if facts.gathered or facts.strided:
            culprit = (facts.gathered or facts.strided)[0]
            why = (
                f"its offsets come from the loaded values `{culprit}` (a gather), so AxisInfo cannot prove any "
                "contiguity"
                if facts.gathered
                else f"the contiguous index is multiplied by `{culprit}`, a runtime value, so AxisInfo proves "
                "contiguity 1 along the fastest dimension"
            )
            rewrite = (
                "sort or group the indices so each program reads whole contiguous rows"
                if facts.gathered
                else f"put the unit-stride index innermost, or pass `{culprit}`=1 so Triton specializes it away"
                if culprit.isidentifier()
                else "put the unit-stride index innermost (a copy whose tile's last axis is contiguous, if the "
                "layout is given)"
            )
            ctx.add(
                NOT_CONTIGUOUS,
                line,
                f"{what} from `{base}` is issued as {width} accesses per thread: {why}; the coalesce pass "
                f"gave each thread {allowed // bits} element(s).",
                [
                    Evidence("ast", f"offset built from `{culprit}`", None, ctx.source_text(line)),
                    gir_ev,
                    ptx_ev,
                    sass_ev,
                ],
                gain,
                rewrite,
                achieved_bits=achieved,
                culprit=culprit,
                cause="gather" if facts.gathered else "stride",
                runtime_multipliers=list(facts.multipliers),  # every stride argument of the address
                base=base,
                access=kind,
            )
        elif facts.unaligned:
            culprit = facts.unaligned[0]
            is_pointer = flow.args[culprit].type.startswith("!tt.ptr") if culprit in flow.args else False
            decider = "coalesce pass" if allowed < 128 else "load/store lowering"
            ctx.add(
                UNALIGNED,
                line,
                f"{what} from `{base}` is issued as {width} accesses: `{culprit}` carries no tt.divisibility "
                f"hint, so AxisInfo cannot prove each thread's chunk is 16-byte aligned and the {decider} "
                f"falls back to {width} accesses.",
                [_arg_evidence(ctx.stages.get("ttir", ""), culprit), gir_ev, ptx_ev, sass_ev],
                gain,
                f"pass a 16-byte aligned tensor for `{culprit}` (no odd-offset views) so Triton marks it aligned"
                if is_pointer
                else f"make `{culprit}` a multiple of 16 (pad) so Triton specializes it, or assert it with "
                f"tl.multiple_of({culprit}, 16)",
                achieved_bits=achieved,
                culprit=culprit,
            )
        elif mask_args:
            culprit = mask_args[0]
            ctx.add(
                MASK,
                line,
                f"{what} from `{base}` is contiguous and aligned (layout allows {allowed}-bit) but is issued "
                f"as {width} accesses: the mask depends on `{culprit}`, which is not known divisible by 16, so "
                "AxisInfo gives the mask constancy 1 and the lowering splits every vector.",
                [_arg_evidence(ctx.stages.get("ttir", ""), culprit), gir_ev, ptx_ev, sass_ev],
                gain,
                f"pad so `{culprit}` % 16 == 0, or add an unmasked fast path for full blocks",
                achieved_bits=achieved,
                allowed_bits=allowed,
                culprit=culprit,
            )
        reported.add((line, kind))


def _access_kind(name: str) -> str | None:
    if name in ("tt.load", "ttg.async_copy_global_to_local"):
        return "load"
    if name == "tt.store":
        return "store"
    return None


def _arg_evidence(ttir_text: str, arg: str) -> Evidence:
    """The kernel signature's entry for `arg` in TTIR: shows the missing tt.divisibility attribute."""
    for idx, line in enumerate(ttir_text.splitlines(), start=1):
        start = line.find(f"%{arg}:")
        if start >= 0 and ("tt.func" in line or "func.func" in line):
            end = line.find(" loc(", start)
            text = line[start:end] if end > 0 else line[start : start + 80]
            return Evidence("ir", f"argument `{arg}` has no tt.divisibility", "ttir", text, (idx,))
    return Evidence("ir", f"argument `{arg}` has no tt.divisibility", "ttir")


def _ptx_evidence(ctx: Context, line: int, kind: str) -> Evidence:
    ptx = ctx.parsed.ptx
    picked: list[int] = []
    if ptx is not None:
        prefix = ("ld.global", "cp.async") if kind == "load" else ("st.global",)
        for ins in ptx.instrs:
            if ins.opcode.startswith(prefix):
                frame = ins.loc.user_frame(ctx.is_user)
                if frame and frame.line == line:
                    picked.append(ins.ir_line)
    return Evidence(
        "ir",
        f"PTX {'loads' if kind == 'load' else 'stores'} on this line",
        "ptx",
        stage_lines(ctx.stages.get("ptx", ""), picked, 4),
        tuple(picked[:4]),
    )


def _sass_evidence(ctx: Context, line: int, kind: str) -> Evidence:
    stats = ctx.lines.get(line)
    wanted = ("LDG", "LDGSTS") if kind == "load" else ("STG",)
    picked: list[int] = []
    if stats is not None and ctx.parsed.sass is not None:
        at_line = set(stats.ir_lines.get("sass", []))
        picked = [i.ir_line for i in ctx.parsed.sass if i.ir_line in at_line and i.base in wanted]
    text = stage_lines(ctx.stages.get("sass", ""), picked, 4)
    return Evidence(
        "ir", f"SASS {'loads' if kind == 'load' else 'stores'} on this line", "sass", text, tuple(picked[:4])
    )


@register_check(CHECK_FAMILY, CONVERT)
def check_layout_conversions(ctx: Context) -> None:
    ttgir = ctx.parsed.ttgir
    if ttgir is None:
        return
    flow = ctx.flow(ttgir)
    users: dict[str, list[MlirOp]] = {}
    for op in ttgir.ops:
        for o in op.operands:
            users.setdefault(o, []).append(op)
    has_dot = any(op.name in DOT_OPS for op in ttgir.ops)
    for op in ttgir.ops:
        if op.name != "ttg.convert_layout" or not op.results:
            continue
        line = ctx.line_of(op)
        if line is None:
            continue
        src, _, dst = op.text.split(" : ", 1)[-1].partition(" -> ")
        if "#ttg.dot_op" in dst and "#mma" in src:
            continue  # accumulator -> dot operand with the same MMA parent stays in registers
        only_store = all(u.name == "tt.store" for u in users.get(op.results[0], []))
        if only_store and not op.loops and has_dot:
            continue  # a GEMM epilogue: one conversion per output tile, amortized over the K loop
        shape, elem = value_type(op)
        numel = 1
        for d in shape:
            numel *= d
        if only_store and not op.loops and _after_loop(flow, op):
            continue  # a tile accumulated over a loop, re-laid out once for its store: amortized over the loop
        if _loaded(flow, op) and _feeds_dot(users, op):
            continue  # a loaded tile staged for a dot operand: how mma operands are fed, nothing to remove
        if not op.loops and numel <= ctx.num_warps * 32:
            continue  # at most one value per thread, once per program (hoisted out of any loop): negligible
        if only_store and not op.loops and _reduced(flow, op):
            # A reduction's result stored once per program: a small
            # fraction of the data the kernel moved, and no rewrite avoids it.
            continue
        stats = ctx.lines.get(line)
        shared = (
            stats is not None and (stats.count("ptx", "shared_store") + stats.count("ptx", "shared_load")) > 0
        )
        if not shared:
            continue
        in_loop = bool(op.loops)
        cause = _convert_cause(flow, op)
        ctx.add(
            CONVERT,
            line,
            f"`ttg.convert_layout` of a {'x'.join(map(str, shape)) or 'scalar'} {elem} tensor {cause} survives "
            f"RemoveLayoutConversions and is lowered through shared memory (st.shared + barrier + ld.shared)"
            f"{' on every loop iteration' if in_loop else ' once per program, outside any loop'}.",
            [ctx.excerpt("ttgir", [op.ir_line]), _shared_evidence(ctx, line)],
            "removes a shared-memory round trip and a barrier" + (" per iteration" if in_loop else ""),
            "use the same index expression (and so the same coalesced layout) for producer and consumer, or "
            "reduce along the contiguous axis",
            in_loop=in_loop,
        )


_STAGING = ("tt.trans", "tt.reshape", "ttg.local_alloc", "ttg.local_load", "ttg.convert_layout", "tt.fp_to_fp")


def _feeds_dot(users: dict[str, list[MlirOp]], op: MlirOp) -> bool:
    """Does the converted value reach a dot operand through transposes, shared-memory staging and casts?"""
    frontier, seen = list(op.results[:1]), set()
    for _ in range(8):
        nxt = []
        for value in frontier:
            for user in users.get(value, []):
                if user.name in DOT_OPS:
                    return True
                if (user.name in _STAGING or user.name.startswith("arith.")) and user.ir_line not in seen:
                    seen.add(user.ir_line)
                    nxt.extend(user.results)
        frontier = nxt
    return False


def _loaded(flow: Dataflow, op: MlirOp) -> bool:
    """Is the converted value a loaded tile (through casts and elementwise scaling)?"""
    value, depth = (op.operands[0] if op.operands else None), 0
    while value is not None and depth < 8:
        producer = flow.defs.get(flow.resolve(value))
        if producer is None:
            return False
        if producer.name in ("tt.load", "tt.descriptor_load", "ttg.local_load"):
            return True
        if not (producer.name.startswith(("arith.", "math.")) or producer.name == "tt.fp_to_fp"):
            return False
        value, depth = next((o for o in producer.operands if not flow._is_constant(o)), None), depth + 1
    return False


def _after_loop(flow: Dataflow, op: MlirOp) -> bool:
    """Is the converted value a result of a loop (an accumulator), through elementwise ops?"""
    value, depth = (op.operands[0] if op.operands else None), 0
    while value is not None and depth < 8:
        producer = flow.defs.get(flow.resolve(value))
        if producer is None:
            return False
        if producer.name in ("scf.for", "scf.while"):
            return True
        if not producer.name.startswith(("arith.", "math.")):
            return False
        value, depth = next((o for o in producer.operands if not flow._is_constant(o)), None), depth + 1
    return False


def _reduced(flow: Dataflow, op: MlirOp) -> bool:
    """Is the converted value a reduction result (through elementwise ops, casts and constants)?"""
    return bool(op.operands) and _from_reduce(flow, op.operands[0], 0)


def _from_reduce(flow: Dataflow, value: str, depth: int) -> bool:
    producer = flow.defs.get(flow.resolve(value))
    if producer is None or depth > 16:
        return False
    if producer.name == "tt.reduce":
        return True
    if producer.name.startswith(("arith.", "math.")) and producer.operands:
        return all(flow._is_constant(o) or _from_reduce(flow, o, depth + 1) for o in producer.operands)
    return False


def _convert_cause(flow: Dataflow, op: MlirOp) -> str:
    producer = flow.defs.get(flow.resolve(op.operands[0])) if op.operands else None
    if producer is None:
        return ""
    if producer.name == "tt.reduce":
        return "(a reduction result re-laid out for its consumer)"
    if producer.name in ("tt.trans", "tt.reshape"):
        return f"(after {producer.name})"
    if producer.name in DOT_OPS:
        return "(a dot result)"
    return f"(produced by {producer.name}, consumed with another layout)"


def _shared_evidence(ctx: Context, line: int) -> Evidence:
    ptx = ctx.parsed.ptx
    picked = []
    if ptx is not None:
        for ins in ptx.instrs:
            if ins.opcode.startswith(("st.shared", "ld.shared", "bar.", "stmatrix", "ldmatrix")):
                frame = ins.loc.user_frame(ctx.is_user)
                if frame and frame.line == line:
                    picked.append(ins.ir_line)
    return Evidence(
        "ir",
        "shared-memory traffic on this line",
        "ptx",
        stage_lines(ctx.stages.get("ptx", ""), picked, 4),
        tuple(picked[:4]),
    )
