"""NVIDIA checks on matrix products: how each `tl.dot` was lowered (tensor cores or FMA, MMA version, K
width) and whether its loop was software-pipelined."""

from __future__ import annotations

import re

from ...core.findings import Finding, Severity
from ...core.rules import Confirms, DependsOn, register_check
from ...core.targets import cuda_capability
from ..ir.mlir import MlirModule, MlirOp
from .context import DOT_OPS, Context, ptx_lines
from .dataflow import Dataflow, value_type
from .declare import _ACCEL, _PIPE, _TUTORIAL_MM, CHECK_FAMILY, cuda_rule


def _fp32_operands(high: Finding, low: Finding) -> bool:
    # TL305 also fires for small tiles or integer operands; with fp32 operands and `ieee` in the source
    # (TL111) its first branch, "fp32 with input_precision='ieee'", is the one taken.
    return high.data.get("operand_type") == "f32"


DOT_FMA = cuda_rule(
    "TL305",
    "dot-on-fma",
    "tl.dot runs on CUDA cores (FMA) instead of tensor cores",
    Severity.WARNING,
    "AccelerateMatmul rewrites `tt.dot` to an MMA/WGMMA layout only when operand types and tile shapes fit a "
    "tensor-core instruction: fp16/bf16/fp8/int8, or fp32 with `input_precision='tf32'`, and tiles of at least "
    "16 in every dimension. Otherwise the dot is unrolled into scalar FMAs (`fma.rn.f32`/`FFMA`), tens of times "
    "slower than tensor cores.\n\nFix: use tf32 (`input_precision='tf32'`, default) or cast operands to "
    "bf16/fp16, and keep BLOCK_M/N/K >= 16.",
    _ACCEL,
    _TUTORIAL_MM,
    confirms=(Confirms("TL111", "fp32 tl.dot with input_precision='ieee' runs on FMA", _fp32_operands),),
)


DOT_NOT_WGMMA = cuda_rule(
    "TL306",
    "dot-not-wgmma",
    "On Hopper, tl.dot uses mma.sync instead of warp-group MMA (wgmma)",
    Severity.INFO,
    "On sm_90 AccelerateMatmul selects MMA v3 (asynchronous `wgmma` reading operands from shared memory) only "
    "if a warp group (4 warps) can own at least a 64-row tile: BLOCK_M >= 64 and num_warps a multiple of 4, "
    "with supported operand types. Otherwise it falls back to Ampere-style `mma.sync` (v2), which reaches "
    "roughly half of Hopper's tensor-core throughput.\n\nFix: BLOCK_M >= 64 (per warp group) and num_warps=4/8.",
    _ACCEL,
)


NOT_PIPELINED = cuda_rule(
    "TL307",
    "loop-not-pipelined",
    "The loop's global loads are not software-pipelined",
    Severity.WARNING,
    "The pipeliner turns loads in a `tl.dot` loop into asynchronous copies (`cp.async`/TMA) issued "
    "`num_stages - 1` iterations ahead, hiding memory latency behind tensor-core work. It skips loops when "
    "num_stages <= 1, and loads it cannot make asynchronous: `cp.async` needs at least 4 contiguous, aligned "
    "bytes per thread, so unaligned or strided operands stay synchronous `ld.global`.\n\nFix: num_stages=3..4 "
    "for GEMM-like loops, and make the loaded operands contiguous and 16-byte aligned.\n\nWhether a load goes "
    "asynchronous depends on its bytes per thread, so on the element types the compile used: a compile of "
    "guessed pointer types or values that the loads read does not show the finding (it is listed in the TL002 "
    "hint until a recorded launch or a pragma gives the real ones); `num_stages <= 1` holds for every type.",
    _PIPE,
    _TUTORIAL_MM,
    depends_on=DependsOn.LOADS,
)



_MMA_VERSION_RE = re.compile(r"versionMajor\s*=\s*(\d+)")


@register_check(CHECK_FAMILY, DOT_FMA, DOT_NOT_WGMMA)
def check_dots(ctx: Context) -> None:
    ttgir, ttir = ctx.parsed.ttgir, ctx.parsed.ttir
    if ttgir is None:
        return
    cap = cuda_capability(ctx.target) or 0
    for op in ttgir.ops:
        if op.name not in ("tt.dot", "ttng.warp_group_dot", "tt.dot_scaled"):
            continue
        line = ctx.line_of(op)
        if line is None:
            continue
        result_layout = op.text.rsplit("->", 1)[-1]
        shape, _ = value_type(op)
        operand_elems = re.findall(
            r"tensor<(?:\d+x)+(\w+)|memdesc<(?:\d+x)+(\w+)", op.text.split(" : ", 1)[-1]
        )
        a_elem = next((a or b for a, b in operand_elems), "?")
        ttir_dot = _ttir_dot_at(ttir, ctx, line)
        # TTIR omits inputPrecision when it is the default for the operands: ieee for fp32 with
        # input_precision="ieee", which is the only way an fp32 dot keeps it off the tensor cores.
        found = re.search(r"inputPrecision\s*=\s*(\w+)", (ttir_dot.text if ttir_dot else op.text))
        precision = found[1] if found else "ieee"
        if op.name == "tt.dot" and "#mma" not in result_layout:
            k = _dot_k(op)
            if a_elem == "f32" and precision == "ieee":
                why = "operands are fp32 with input_precision='ieee'; tensor cores need tf32/bf16/fp16"
                fix = "use input_precision='tf32' (the default) or cast the tiles to bf16"
            elif a_elem in ("f64",) or a_elem.startswith("i") and a_elem not in ("i8",):
                why = f"operand type {a_elem} has no tensor-core instruction here"
                fix = "cast operands to fp16/bf16 (or int8 for integer GEMMs)"
            elif min(shape + (k,)) < 16:
                why = f"the tile {shape} x K={k} is smaller than 16 in some dimension"
                fix = "use BLOCK_M, BLOCK_N, BLOCK_K >= 16"
            else:
                why = f"AccelerateMatmul found no MMA instruction for {a_elem} operands on {ctx.target}"
                fix = "use fp16/bf16 operands and tiles >= 16"
            fma = ctx.lines.get(line)
            ctx.add(
                DOT_FMA,
                line,
                f"`tl.dot` is lowered to scalar FMAs ({fma.count('ptx', 'fma') if fma else '?'} fma.rn.f32 in PTX on "
                f"this line) instead of tensor cores: {why}.",
                [
                    ctx.excerpt("ttgir", [op.ir_line]),
                    ctx.excerpt("ptx", ptx_lines(ctx, line, ("fma.",))[:4]),
                ],
                "typically 8-16x more dot throughput on tensor cores",
                fix,
                operand_type=a_elem,
            )
        elif op.name == "tt.dot" and cap >= 90:
            version = _mma_version(ttgir, result_layout)
            if version == 2:
                m_dim = shape[0] if shape else 0
                if m_dim <= _DECODE_ROWS and _rows_fixed_across_loop(ctx.flow(ttgir), op, 0):
                    continue  # a few query rows against streamed keys (decode / a GQA head group): no 64 rows
                reasons = []
                if m_dim < 64:
                    reasons.append(f"the dot's M tile (rows of its first operand) is {m_dim} < 64 (a warp group "
                                   "needs a 64-row tile)")
                if ctx.num_warps % 4:
                    reasons.append(f"num_warps={ctx.num_warps} is not a multiple of 4")
                why = "; ".join(reasons) or "the operands or layout do not fit wgmma"
                ctx.add(
                    DOT_NOT_WGMMA,
                    line,
                    f"`tl.dot` uses Ampere-style mma.sync (MMA v2) on {ctx.target}, not {'tcgen05' if cap >= 100 else 'wgmma'}: {why}.",
                    [ctx.excerpt("ttgir", [op.ir_line])],
                    "up to ~2x tensor-core throughput with wgmma",
                    "size the rows of the dot's first operand to >= 64 (whichever constexpr sets them) with "
                    "num_warps=4 (or 8)",
                    block_m=m_dim,
                )


# At most this many rows that stay fixed while the loop streams the other operand: decode (one query per head,
# or a GQA head group); a 64-row wgmma tile would be mostly padding.
_DECODE_ROWS = 16
_STAGING = ("ttg.local_load", "ttg.local_alloc", "ttg.convert_layout", "tt.trans", "tt.fp_to_fp")


def _rows_fixed_across_loop(flow: Dataflow, dot: MlirOp, depth: int) -> bool:
    """Is the dot's A operand (its M rows) the same on every iteration of its loop: defined before the loop,
    or computed in it from a dot whose rows are (the P of attention, from Q against K)?"""
    if not dot.loops or not dot.operands or depth > 3:
        return False
    value = dot.operands[0]
    for _ in range(12):
        producer = flow.defs.get(flow.resolve(value))
        if producer is None:
            return True  # a function argument or a loop-carried value set before the loop
        if dot.loops[-1] not in producer.loops:
            return True  # defined outside the dot's loop
        if producer.name in DOT_OPS:
            return _rows_fixed_across_loop(flow, producer, depth + 1)
        if producer.name in ("tt.load", "tt.descriptor_load") or not producer.operands:
            return False  # new rows every iteration: a GEMM's K loop
        if not (producer.name in _STAGING or producer.name.startswith(("arith.", "math."))):
            return False
        value = next((o for o in producer.operands if not flow._is_constant(o)), producer.operands[0])
    return False


def _ttir_dot_at(ttir: MlirModule | None, ctx: Context, line: int) -> MlirOp | None:
    if ttir is None:
        return None
    for op in ttir.ops:
        if op.name == "tt.dot" and ctx.line_of(op) == line:
            return op
    return None


def _dot_k(op: MlirOp) -> int:
    m = re.search(r"(?:tensor|memdesc)<(\d+)x(\d+)x", op.text.split(" : ", 1)[-1])
    return int(m[2]) if m else 0


def _mma_version(ttgir: MlirModule, layout_text: str) -> int | None:
    ref = re.search(r"(#mma\d*)", layout_text)
    if not ref:
        return None
    m = _MMA_VERSION_RE.search(ttgir.aliases.get(ref[1], ""))
    return int(m[1]) if m else None


@register_check(CHECK_FAMILY, NOT_PIPELINED)
def check_pipelining(ctx: Context) -> None:
    ttgir = ctx.parsed.ttgir
    if ttgir is None:
        return
    loops = {op.ir_line: op for op in ttgir.ops if op.name == "scf.for"}
    for loop_line, loop in loops.items():
        body = [op for op in ttgir.ops if loop_line in op.loops]
        has_dot = any(op.name in DOT_OPS for op in body)
        # the loads of this loop's own body: a loop around it (a conv's taps around its channel blocks) is not
        # what the pipeliner skipped, and reporting it too repeats the inner loop's finding
        sync_loads = [op for op in body if op.name == "tt.load" and value_type(op)[0] and op.loops[-1] == loop_line]
        if not has_dot or not sync_loads:
            continue
        line = ctx.line_of(loop) or ctx.line_of(sync_loads[0])
        if line is None:
            continue
        load_lines = sorted({ln for ln in (ctx.line_of(op) for op in sync_loads) if ln})
        narrow: list[int] = []
        if ctx.num_stages <= 1:
            why = f"num_stages={ctx.num_stages}, so the pipeliner leaves the loop alone"
            fix = "launch with num_stages=3 (or 4 on Hopper)"
        else:
            narrow = [
                ln
                for ln in load_lines
                if (st := ctx.lines.get(ln)) and st.global_load_bits and min(st.global_load_bits) < 32
            ]
            if narrow:
                why = (
                    f"the loads on line(s) {', '.join(map(str, narrow))} move fewer than 4 bytes per thread, "
                    "below cp.async's minimum, so the pipeliner keeps them synchronous"
                )
                fix = ("make the loaded tiles contiguous and 16-byte aligned, or load at least 4 bytes per thread "
                       "(1-byte masks and flags: load them as wider words or once outside the loop)")
            else:
                why = "the pipeliner could not schedule these loads asynchronously"
                fix = "check that the loads' addresses are loop-carried pointer increments"
        ctx.add(
            NOT_PIPELINED,
            line,
            f"The loop's {len(sync_loads)} global load(s) (line(s) {', '.join(map(str, load_lines))}) stay "
            f"synchronous `tt.load`s next to the dot: {why}. Each iteration waits for memory before the "
            "tensor cores can start.",
            [ctx.excerpt("ttgir", [loop.ir_line] + [op.ir_line for op in sync_loads])],
            "often 1.5-2x for memory-latency-bound GEMM loops",
            fix,
            num_stages=ctx.num_stages,
            load_lines=load_lines,
            narrow_lines=narrow,
            rests_on_loads=ctx.num_stages > 1,  # num_stages <= 1 leaves every loop alone, whatever the types
        )


def pipelined_tensor_core_loop(ctx: Context) -> bool:
    """A loop whose dot runs on tensor cores and whose global loads all went asynchronous."""
    ttgir = ctx.parsed.ttgir
    if ttgir is None:
        return False
    for loop in (op for op in ttgir.ops if op.name == "scf.for"):
        body = [op for op in ttgir.ops if loop.ir_line in op.loops]
        tensor_core = any(
            op.name in ("ttng.warp_group_dot", "ttng.tc_gen5_mma")
            or (op.name == "tt.dot" and "#mma" in op.text.rsplit("->", 1)[-1])
            for op in body
        )
        sync_loads = any(op.name == "tt.load" and value_type(op)[0] for op in body)
        if tensor_core and not sync_loads:
            return True
    return False
