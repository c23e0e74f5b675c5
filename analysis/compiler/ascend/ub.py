"""Checks on the unified buffer (UB): TL403 (live tiles over its capacity, estimated from the ttadapter),
TL405 (tail tiles not aligned to the vector/cube block) and TL407 (masked loads that make the compiler pad)."""

from __future__ import annotations

import ast
import math
import re
from dataclasses import replace

from ...core.findings import Evidence, Finding, Level, Severity
from ...core.rules import Rule, register, register_check
from ..ir.ttadapter_buffers import peak_live_bytes
from ..ir.ttadapter_model import Buffer
from .context import CUBE_ALIGN_BYTES, VECTOR_ALIGN_BYTES, AscendContext, kib
from .declare import ARCHITECTURE, ASCEND_FAMILY, PERFORMANCE_GUIDE, PROGRAMMING_GUIDE, UB_OVERFLOW
from .padding import care_padding_fix, masked_loads_without_other, padding_verdict

UB_OVERFLOW_RULE = register(
    Rule(
        code="TL403",
        name="ub-capacity-exceeded",
        title="Live tiles exceed the Unified Buffer",
        level=Level.COMPILER,
        severity=Severity.WARNING,
        platforms=("ascend",),
        rationale=(
            "Every loaded tile and every tile temporary lives in the vector core's Unified Buffer (192 KB on "
            "Atlas A2/A3). With multibuffer on (the default), tiles loaded inside a loop are double-buffered, "
            "halving the usable space. Above capacity bishengir fails with a UB overflow, or the tiling falls "
            "back to a slower schedule. The size comes from bishengir (`UB size = N bits`) when CANN is present, "
            "else from the ttadapter buffers: an estimate (padding and compiler temporaries not counted). "
            "Process the block in sub-tiles with an inner `for` loop (BLOCK_SUB), lower BLOCK, or use a smaller "
            "dtype."
        ),
        references=(PROGRAMMING_GUIDE, UB_OVERFLOW, ARCHITECTURE),
        escalates_to=Severity.ERROR,
        escalation="when bishengir measured the UB size (not an estimate)",
    )
)


TAIL_UNALIGNED = register(
    Rule(
        code="TL405",
        name="tail-axis-unaligned",
        title="The tile's last axis is not a multiple of 32 bytes (vector) / 512 bytes (cube)",
        level=Level.COMPILER,
        severity=Severity.INFO,
        platforms=("ascend",),
        rationale=(
            "The Unified Buffer is addressed in 32-byte blocks and the cube unit's fractal tiles are 512 bytes. "
            "A tile whose last axis is shorter (say a (2048, 3) fp16 tile: 6 bytes per row) is padded row by row "
            "on every move, multiplying UB use and data-mover work. Choose block sizes whose last axis is a "
            "multiple of 32 bytes (512 bytes for `tl.dot` operands), or load the data as a flat 1-D block and "
            "reshape/transpose on chip so the long axis is last."
        ),
        references=(PROGRAMMING_GUIDE,),
    )
)


MASKED_LOAD_PADDING = register(
    Rule(
        code="TL407",
        name="masked-load-padding-serializes",
        title="A masked load zero-fills the whole tile on the vector unit before copying",
        level=Level.COMPILER,
        severity=Severity.HINT,
        platforms=("ascend",),
        rationale=(
            "Triton leaves masked-off lanes undefined when `other` is not given; triton-ascend fills them with "
            "zeros anyway (to behave like GPUs): a vector `linalg.fill` of the entire on-chip buffer, and only "
            "then the MTE2 copy of the valid part, so the copy waits on the vector pipe and loads cannot overlap "
            "compute. Reported only when the kernel provably never observes those lanes (the value flows through "
            "elementwise math into stores with the same mask); then `care_padding=False` on the `tl.load` drops "
            "the fill and the quick fix adds it."
        ),
        references=(PERFORMANCE_GUIDE,),
        has_fix=True,
    )
)




def ub_estimate(ctx: AscendContext) -> tuple[int, list[Buffer]]:
    multibuffer = bool(ctx.metadata.get("multibuffer", True))
    peak, where = peak_live_bytes(ctx.module.buffers, multibuffer)
    if where is None:
        return 0, []
    live = [b for b in ctx.module.buffers if not b.feeds_cube and b.op.ir_line <= where <= b.last_use]
    return peak, live


@register_check(ASCEND_FAMILY, UB_OVERFLOW_RULE)
def check_ub_capacity(ctx: AscendContext) -> list[Finding]:
    if ctx.ub_decided:
        return []  # the estimate only where the compiler is silent
    if ctx.device is None:
        return []
    capacity = ctx.device.ub_bytes
    peak, live = ub_estimate(ctx)
    bits = ctx.resources.get("required_ub_bits") or ctx.metadata.get("required_ub_bits")
    exact = int(bits) // 8 if isinstance(bits, int) and bits > 0 else None
    used = exact if exact is not None else peak
    if used <= capacity:
        return []
    multibuffer = bool(ctx.metadata.get("multibuffer", True))
    biggest = max(live, key=lambda b: b.type.bytes or 0) if live else None
    line = biggest.op.line if biggest is not None and biggest.op.line else ctx.kernel_line()
    parts = sorted(live, key=lambda b: -(b.type.bytes or 0))[:5]
    listing = ", ".join(
        f"{b.type} (line {b.op.line}{', x2 multibuffer' if multibuffer and b.in_loop and b.from_copy else ''})"
        for b in parts
    )
    source = (
        "bishengir reports"
        if exact is not None
        else "estimate (bishengir's hivm stage did not run): the ttadapter buffers add up to"
    )
    message = (
        f"{source} {kib(used)} of Unified Buffer, above the {kib(capacity)} of {ctx.device.soc}; the largest "
        f"live tiles are {listing}. Split the block with an inner `for` loop over a BLOCK_SUB tile, lower the "
        "block size, or use a narrower dtype."
    )
    evidence = [
        ctx.ir_evidence(
            f"tiles live together at the peak ({kib(peak)} estimated)", [b.op.ir_line for b in live]
        )
    ]
    if exact is not None:
        evidence.append(
            Evidence(kind="resource", summary=f"bishengir: UB size = {int(bits)} bits", stage="npubin")
        )
    severity = Severity.ERROR if exact is not None else None
    gain = f"fits the {kib(capacity)} UB (today {kib(used)}, {used / capacity:.1f}x over)"
    # Reached only when bishengir's hivm stage did not run (compiler_ascend.py): then it is an estimate.
    data = {
        "ub_bytes": used,
        "ub_capacity": capacity,
        "exact": exact is not None,
        "estimate": peak,
        "source": "bishengir (npubin)" if exact is not None else "estimate from ttadapter buffers",
    }
    return [ctx.finding(UB_OVERFLOW_RULE, line, message, evidence, gain, data, severity)]


@register_check(ASCEND_FAMILY, TAIL_UNALIGNED)
def check_tail_alignment(ctx: AscendContext) -> list[Finding]:
    by_line: dict[int, list[tuple[Buffer, int]]] = {}
    for buf in ctx.module.buffers:
        if not buf.from_copy or buf.op.line is None:
            continue
        tail = buf.type.tail_bytes
        need = CUBE_ALIGN_BYTES if buf.feeds_cube else VECTOR_ALIGN_BYTES
        if tail is None or tail % need == 0:
            continue
        if buf.feeds_cube and _last_axis_fixed(ctx, buf.op.line):
            continue  # a head dim or an algorithm's literal block: no block size of the author's to change
        by_line.setdefault(buf.op.line, []).append((buf, need))
    out: list[Finding] = []
    for line, hits in sorted(by_line.items()):
        buf, need = hits[0]
        tail = buf.type.tail_bytes or 0
        unit = "cube (tl.dot operand)" if buf.feeds_cube else "vector"
        width = buf.type.bytes // (buf.type.numel or 1) if buf.type.bytes else 1
        want = math.ceil(need / width)
        message = (
            f"`{ctx.snippet(line)}` stages a {buf.type} tile whose last axis is {tail} B, not a multiple of the "
            f"{need} B the {unit} path moves: every row is padded on each transfer. Make the last block size a "
            f"multiple of {want} elements, or load a flat 1-D block and reshape on chip."
        )
        evidence = [
            ctx.ir_evidence(
                f"staged {unit} buffer with a {tail} B tail axis", [b.op.ir_line for b, _ in hits]
            )
        ]
        pad = math.ceil(tail / need) * need
        gain = (
            f"up to {pad / tail:.1f}x less on-chip space and data-mover traffic for this tile"
            if tail
            else None
        )
        data = {"tail_bytes": tail, "required": need, "type": str(buf.type), "cube": buf.feeds_cube}
        out.append(ctx.finding(TAIL_UNALIGNED, line, message, evidence, gain, data))
    return out


@register_check(ASCEND_FAMILY, MASKED_LOAD_PADDING)
def check_masked_padding(ctx: AscendContext) -> list[Finding]:
    out: list[Finding] = []
    func = ctx.kernel_def()
    if func is None:
        return out
    candidates: dict[int, list[ast.Call]] = {}
    for call in masked_loads_without_other(func):
        candidates.setdefault(call.lineno, []).append(call)
    for line, stats in sorted(ctx.module.lines.items()):
        if not stats.pad_fills or line not in candidates:
            continue  # with `other=` the fill is the requested semantics, not overhead
        verdicts = [padding_verdict(func, call) for call in candidates[line]]
        if not all(v.safe for v in verdicts):
            continue  # some padded lane can reach a result: the zeros are needed
        ops = ctx.module.ops_on(line)
        fills = [o for o in ops if o.name == "linalg.fill" and any(t.kind == "memref" for t in o.types)]
        copies = [o for o in ops if o.name == "memref.copy"]
        guards = [o for o in ops if o.name == "scf.if" and "hivm.unlikely_condition" in o.markers]
        ir = [o.ir_line for o in (*guards, *fills, *copies)] + [
            g.end_ir_line for g in guards if g.end_ir_line
        ]
        message = (
            f"`{ctx.snippet(line)}` is a masked load without `other`: to mimic GPUs, triton-ascend's "
            "--triton-to-linalg pass zero-fills the whole buffer on the vector unit before the MTE2 copy of the "
            "valid part, so the copy waits for the vector pipe. Here the masked-off lanes only reach stores under "
            "the same mask, so `care_padding=False` drops the fill without changing results."
        )
        evidence = [
            ctx.ir_evidence("vector fill of the load buffer, then the partial copy", ir),
            Evidence(kind="ast", summary=verdicts[0].reason),
        ]
        fix = care_padding_fix(candidates[line][0], ctx.source_lines) if len(candidates[line]) == 1 else None
        data = {"fills": len(fills)}
        finding = ctx.finding(
            MASKED_LOAD_PADDING, line, message, evidence, "the load overlaps compute again", data
        )
        out.append(replace(finding, fix=fix) if fix else finding)
    return out


# Names that conventionally hold a tile size the author picks (BLOCK_K, BLOCK_SIZE_N, TILE_N, XBLOCK, Br, BK, BT).
_TILE_NAME = re.compile(r"BLOCK|TILE|BLK|^B[A-Za-z]?$|^[A-Z]BLOCK$")


def _last_axis_fixed(ctx: AscendContext, line: int) -> bool:
    """Are the last axes of the loads on `line` sized by something other than a tile-size parameter (a literal,
    or a problem dimension such as the head dim)? Then the 512 B cube advice cannot be applied."""
    func = ctx.kernel_def()
    if func is None:
        return False
    values = {t.id: n.value for n in ast.walk(func) if isinstance(n, ast.Assign) for t in n.targets
              if isinstance(t, ast.Name)}  # fmt: skip
    ends: list[ast.AST] = []
    for call in ast.walk(func):
        if (
            isinstance(call, ast.Call)
            and getattr(call, "lineno", 0) == line
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "load"
            and call.args
        ):
            ends.extend(_last_axis_ends(call.args[0], values, 0))
    if not ends:
        return False
    return all(
        isinstance(e, ast.Constant) or (isinstance(e, ast.Name) and not _TILE_NAME.search(e.id)) for e in ends
    )


def _last_axis_ends(expr: ast.AST, values: dict[str, ast.AST], depth: int) -> list[ast.AST]:
    """The `end` of each tl.arange that indexes the last axis of a 2-D address (`cols[None, :]`)."""
    out: list[ast.AST] = []
    for node in ast.walk(expr):
        if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple):
            continue
        elts = node.slice.elts
        if len(elts) == 2 and isinstance(elts[0], ast.Constant) and elts[0].value is None:
            out.extend(_arange_ends(node.value, values, depth))
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id in values and depth < 4:
            out.extend(_last_axis_ends(values[node.id], values, depth + 1))
    return out


def _arange_ends(expr: ast.AST, values: dict[str, ast.AST], depth: int) -> list[ast.AST]:
    out: list[ast.AST] = []
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "arange":
            if len(node.args) >= 2:
                out.append(node.args[1])
        elif isinstance(node, ast.Name) and node.id in values and depth < 4:
            out.extend(_arange_ends(values[node.id], values, depth + 1))
    return out
