"""NVIDIA levels 3-4: attribute every stage to source lines, then explain the compiler's decisions (TL3xx).

Each check reads what the compiler decided from its own output (TTGIR layouts and ops, PTX/SASS instructions,
ptxas resources) and uses the TTIR def-use chains to name the source construct that caused it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from . import compiler_cuda_rules as R
from . import rules
from .attribution import (
    LineStats,
    ParsedStages,
    attribute,
    stage_lines,
    user_files_for,
)
from .compiler_cuda_dataflow import Dataflow, value_type
from .compiler_cuda_limits import SmLimits, capability, limits_for, occupancy
from .compiler_report import CompilerReport
from .findings import Evidence, Finding, Span
from .ir.mlir_loc import MlirModule, MlirOp, UserFiles
from .ir.sass import parse_ptxas_verbose, parse_res_usage
from .rules import Rule
from .source_lines import source_lines as split_source_lines

CHECK_FAMILY = "cuda"  # rules.register_check family: the TL3xx checks run over one NVIDIA compile
DOT_OPS = ("tt.dot", "ttng.warp_group_dot", "ttng.tc_gen5_mma", "tt.dot_scaled")
ELEM_BITS = {"f64": 64, "i64": 64, "f32": 32, "i32": 32, "f16": 16, "bf16": 16, "i16": 16, "i8": 8, "i1": 8}
_FP8 = re.compile(r"f8E\w+")
_SPT_RE = re.compile(r"sizePerThread\s*=\s*\[([\d,\s]+)\]")
_ORDER_RE = re.compile(r"order\s*=\s*\[([\d,\s]+)\]")
_LAYOUT_REF_RE = re.compile(r",\s*(#(?!smem|shared)[\w.]+)>")
_CONTIG_RE = re.compile(r"contiguity\s*=\s*(\d+)")
_MMA_VERSION_RE = re.compile(r"versionMajor\s*=\s*(\d+)")


def elem_bits(elem: str) -> int:
    elem = elem.replace("!tt.ptr<", "").rstrip(">")
    if _FP8.match(elem):
        return 8
    return ELEM_BITS.get(elem, 32)


@dataclass
class Context:
    stages: dict[str, str]
    parsed: ParsedStages
    is_user: UserFiles
    lines: dict[int, LineStats]
    source_lines: list[str]
    kernel: str
    target: str
    limits: SmLimits | None
    num_warps: int
    num_stages: int
    resources: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)
    _flows: dict[int, Dataflow] = field(default_factory=dict)

    def flow(self, module: MlirModule) -> Dataflow:
        """Def-use index of a module, built once per analysis."""
        got = self._flows.get(id(module))
        if got is None:
            func = self.kernel if self.kernel in module.funcs else None
            got = self._flows[id(module)] = Dataflow(module, func)
        return got

    def span(self, line: int) -> Span:
        text = self.source_lines[line - 1] if 0 < line <= len(self.source_lines) else ""
        start = len(text) - len(text.lstrip())
        return Span(line, start, line, len(text.rstrip()))

    def source_text(self, line: int) -> str:
        return self.source_lines[line - 1].strip() if 0 < line <= len(self.source_lines) else ""

    def excerpt(self, stage: str, ir_lines: list[int]) -> Evidence:
        text = self.stages.get(stage, "")
        return Evidence(
            "ir",
            f"{stage} at this line",
            stage,
            stage_lines(text, ir_lines),
            tuple(sorted(set(ir_lines))[:6]),
        )

    def add(
        self,
        rule: Rule,
        line: int,
        message: str,
        evidence: list[Evidence],
        gain: str | None,
        rewrite: str,
        **data: Any,
    ) -> None:
        self.findings.append(
            rule.finding(
                message,
                self.span(line),
                kernel=self.kernel,
                platforms=("cuda",),
                evidence=evidence,
                gain=gain,
                data={"rewrite": rewrite, "target": self.target, **data},
            )
        )

    def line_of(self, op: MlirOp) -> int | None:
        frame = op.loc.user_frame(self.is_user)
        return frame.line if frame else None


def analyze_cuda(
    stages: dict[str, str],
    metadata: dict[str, Any],
    resources: dict[str, Any],
    target: str,
    source: str,
    kernel: str,
    path: str,
) -> CompilerReport:
    stages = {k: v for k, v in stages.items() if isinstance(v, str)}
    parsed = ParsedStages.parse(stages)
    is_user = user_files_for(path, parsed, kernel)
    attrib = attribute(parsed, is_user)
    resources = normalize_resources(resources, metadata, kernel)
    module_attrs = parsed.ttgir.attributes if parsed.ttgir else {}
    num_warps = _int(metadata.get("num_warps"), _int(module_attrs.get("ttg.num-warps"), 4))
    ctx = Context(
        stages=stages,
        parsed=parsed,
        is_user=is_user,
        lines=attrib.lines,
        source_lines=split_source_lines(source),
        kernel=kernel,
        target=target,
        limits=limits_for(target),
        num_warps=num_warps,
        num_stages=_int(metadata.get("num_stages"), 3),
        resources=resources,
    )
    notes: list[str] = []
    if parsed.ttir is None or parsed.ttgir is None:
        notes.append("TTIR/TTGIR missing: compiler-grounded findings need both stages")
    if parsed.ptx is None:
        notes.append("PTX missing: vector widths cannot be measured")
    if not attrib.lines:
        notes.append(
            f"no IR location points into {path or 'the source file'}: was it compiled with line info?"
        )
    for check in rules.checks(CHECK_FAMILY):
        try:
            check.run(ctx)
        except (ValueError, KeyError, IndexError, AttributeError, TypeError) as exc:
            # One check tripping over unexpected IR must not hide the others.
            notes.append(f"{check.name} skipped: {type(exc).__name__}: {exc}")
    return CompilerReport(
        findings=sorted(ctx.findings, key=lambda f: (f.span.line, f.code)),
        lines=attrib.lines,
        summary=summarize(ctx),
        line_maps=attrib.line_maps,
        notes=notes,
    )


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def normalize_resources(resources: dict[str, Any], metadata: dict[str, Any], kernel: str) -> dict[str, Any]:
    """One shape for resources from the compile worker or from raw ptxas/cuobjdump reports."""
    out = dict(resources)
    for key, parser in (("res_usage", parse_res_usage), ("ptxas_log", parse_ptxas_verbose)):
        text = resources.get(key)
        if isinstance(text, str) and text:
            table = parser(text)
            entry = table.get(kernel) or (next(iter(table.values())) if table else {})
            for k, v in entry.items():
                out.setdefault(k, v)
    if "stack" not in out and "stack_frame" in out:
        out["stack"] = out["stack_frame"]
    out.setdefault("shared", _int(metadata.get("shared"), 0))
    return out


# --- checks -----------------------------------------------------------------------------------------------


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
        facts = flow.address(ptr)
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
            )
            ctx.add(
                R.NOT_CONTIGUOUS,
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
            )
        elif facts.unaligned:
            culprit = facts.unaligned[0]
            is_pointer = flow.args[culprit].type.startswith("!tt.ptr") if culprit in flow.args else False
            decider = "coalesce pass" if allowed < 128 else "load/store lowering"
            ctx.add(
                R.UNALIGNED,
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
                R.MASK,
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


def _ptx_lines(ctx: Context, line: int, prefixes: tuple[str, ...]) -> list[int]:
    """PTX lines of instructions with one of the opcode prefixes, attributed to `line`."""
    ptx = ctx.parsed.ptx
    if ptx is None:
        return []
    out = []
    for ins in ptx.instrs:
        if ins.opcode.startswith(prefixes):
            frame = ins.loc.user_frame(ctx.is_user)
            if frame and frame.line == line:
                out.append(ins.ir_line)
    return out


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
        if only_store and not op.loops and (_reduced(flow, op) or numel <= ctx.num_warps * 32):
            # A reduction's result (or at most one value per thread) stored once per program: a small
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
            R.CONVERT,
            line,
            f"`ttg.convert_layout` of a {'x'.join(map(str, shape)) or 'scalar'} {elem} tensor {cause} survives "
            f"RemoveLayoutConversions and is lowered through shared memory (st.shared + barrier + ld.shared)"
            f"{' on every loop iteration' if in_loop else ''}.",
            [ctx.excerpt("ttgir", [op.ir_line]), _shared_evidence(ctx, line)],
            "removes a shared-memory round trip and a barrier" + (" per iteration" if in_loop else ""),
            "use the same index expression (and so the same coalesced layout) for producer and consumer, or "
            "reduce along the contiguous axis",
            in_loop=in_loop,
        )


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


def check_dots(ctx: Context) -> None:
    ttgir, ttir = ctx.parsed.ttgir, ctx.parsed.ttir
    if ttgir is None:
        return
    cap = capability(ctx.target) or 0
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
                R.DOT_FMA,
                line,
                f"`tl.dot` is lowered to scalar FMAs ({fma.count('ptx', 'fma') if fma else '?'} fma.rn.f32 in PTX on "
                f"this line) instead of tensor cores: {why}.",
                [
                    ctx.excerpt("ttgir", [op.ir_line]),
                    ctx.excerpt("ptx", _ptx_lines(ctx, line, ("fma.",))[:4]),
                ],
                "typically 8-16x more dot throughput on tensor cores",
                fix,
                operand_type=a_elem,
            )
        elif op.name == "tt.dot" and cap >= 90:
            version = _mma_version(ttgir, result_layout)
            if version == 2:
                m_dim = shape[0] if shape else 0
                reasons = []
                if m_dim < 64:
                    reasons.append(f"BLOCK_M={m_dim} < 64 (a warp group needs a 64-row tile)")
                if ctx.num_warps % 4:
                    reasons.append(f"num_warps={ctx.num_warps} is not a multiple of 4")
                why = "; ".join(reasons) or "the operands or layout do not fit wgmma"
                ctx.add(
                    R.DOT_NOT_WGMMA,
                    line,
                    f"`tl.dot` uses Ampere-style mma.sync (MMA v2) on {ctx.target}, not {'tcgen05' if cap >= 100 else 'wgmma'}: {why}.",
                    [ctx.excerpt("ttgir", [op.ir_line])],
                    "up to ~2x tensor-core throughput with wgmma",
                    "raise BLOCK_M to >= 64 with num_warps=4 (or 8)",
                    block_m=m_dim,
                )


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


def check_pipelining(ctx: Context) -> None:
    ttgir = ctx.parsed.ttgir
    if ttgir is None:
        return
    loops = {op.ir_line: op for op in ttgir.ops if op.name == "scf.for"}
    for loop_line, loop in loops.items():
        body = [op for op in ttgir.ops if loop_line in op.loops]
        has_dot = any(op.name in DOT_OPS for op in body)
        sync_loads = [op for op in body if op.name == "tt.load" and value_type(op)[0]]
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
                fix = "make the loaded tiles contiguous and 16-byte aligned (see the TL301/TL302 findings)"
            else:
                why = "the pipeliner could not schedule these loads asynchronously"
                fix = "check that the loads' addresses are loop-carried pointer increments"
        ctx.add(
            R.NOT_PIPELINED,
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
        )


def check_spills(ctx: Context) -> None:
    stores = _int(ctx.resources.get("spill_stores"), 0)
    loads = _int(ctx.resources.get("spill_loads"), 0)
    spill_lines = sorted(
        ln
        for ln, st in ctx.lines.items()
        if st.count("sass", "local_store") or st.count("sass", "local_load")
    )
    if not stores and not loads and not spill_lines:
        return
    regs = _int(ctx.resources.get("registers"), 0)
    line = _def_line(ctx)
    where = (
        f"; spill code is attributed to line(s) {', '.join(map(str, spill_lines[:8]))}" if spill_lines else ""
    )
    ev = [
        Evidence(
            "resource",
            f"ptxas: {regs} registers, {stores} bytes spill stores, {loads} bytes spill loads",
            "ptxas",
        )
    ]
    if spill_lines:
        st = ctx.lines[spill_lines[0]]
        ev.append(ctx.excerpt("sass", st.ir_lines.get("sass", [])[:6]))
    ctx.add(
        R.SPILLS,
        line,
        f"ptxas register allocation ran out of registers ({regs} used, limit 255) and spilled {stores} bytes "
        f"to local memory (reloading {loads} bytes){where}.",
        ev,
        "removing spills typically gains 10-50% on compute-bound kernels",
        "reduce BLOCK_M/BLOCK_N, or raise num_warps so each thread holds fewer accumulator elements",
        spill_stores=stores,
        spill_loads=loads,
        spill_lines=spill_lines,
    )


def _def_line(ctx: Context) -> int:
    for module in (ctx.parsed.ttgir, ctx.parsed.ttir):
        if module is None:
            continue
        chain = module.func_locs.get(ctx.kernel) or next(iter(module.func_locs.values()), None)
        if chain and chain.frames:
            return chain.frames[0].line
    return 1


def check_resources(ctx: Context) -> None:
    if ctx.limits is None:
        return
    shared = _int(ctx.resources.get("shared"), 0)
    regs = _int(ctx.resources.get("registers"), 0)
    line = _def_line(ctx)
    lim = ctx.limits
    if shared > lim.shared_per_block:
        ctx.add(
            R.SMEM_LIMIT,
            line,
            f"The kernel needs {shared // 1024} KB of shared memory (num_stages={ctx.num_stages}), more than the "
            f"{lim.shared_per_block // 1024} KB a block can use on {lim.name}; the launch fails with "
            "OutOfResources.",
            [Evidence("resource", f"compiler metadata: shared = {shared} bytes", "metadata")],
            None,
            "lower num_stages or BLOCK_K, or shrink the tiles",
            shared=shared,
            limit=lim.shared_per_block,
        )
        return
    if not regs:
        return
    occ = occupancy(lim, ctx.num_warps, regs, shared)
    if occ.fraction >= 0.25 or occ.limiter not in ("registers", "shared memory"):
        return
    if occ.limiter == "registers" and _pipelined_tensor_core_loop(ctx):
        return  # a pipelined tensor-core GEMM keeps its accumulator in registers: low occupancy by design
    rule = R.OCC_REGS if occ.limiter == "registers" else R.OCC_SMEM
    detail = (
        f"{regs} registers x {ctx.num_warps * 32} threads per block"
        if occ.limiter == "registers"
        else f"{shared // 1024} KB shared memory per block"
    )
    ctx.add(
        rule,
        line,
        f"Only {occ.blocks_per_sm} block(s) = {occ.warps_per_sm} of {lim.max_warps_per_sm} warps fit per SM on "
        f"{lim.name} ({occ.fraction:.0%} occupancy), limited by {occ.limiter}: {detail}.",
        [Evidence("resource", f"registers={regs}, shared={shared}, num_warps={ctx.num_warps}", "ptxas")],
        "more resident warps hide more memory latency (gain depends on the kernel's bound)",
        "smaller tiles or fewer stages" if occ.limiter == "shared memory" else "fewer live values per thread",
        occupancy=round(occ.fraction, 3),
        limiter=occ.limiter,
    )


def _pipelined_tensor_core_loop(ctx: Context) -> bool:
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


def check_int64(ctx: Context) -> None:
    ttir = ctx.parsed.ttir
    if ttir is None:
        return
    flow = ctx.flow(ttir)
    seen: set[int] = set()
    for op in ttir.ops:
        if op.name not in ("tt.load", "tt.store") or not op.operands:
            continue
        line = ctx.line_of(op)
        if line is None or line in seen:
            continue
        facts = flow.address(op.operands[0])
        if not facts.int64 or _compiler_made_int64(ctx, facts):
            continue
        seen.add(line)
        wide = [
            o
            for o in ttir.ops
            if o.name.startswith("arith.") and value_type(o)[1] == "i64" and value_type(o)[0]
        ]
        # prefer the 64-bit ops written on this line; the offsets may also come from earlier lines
        wide = [o for o in wide if ctx.line_of(o) == line] or wide
        ctx.add(
            R.INT64,
            line,
            f"The offsets of this access are int64 tensors (`{facts.int64[0]}`): every per-element index "
            "operation is 64-bit, two instructions each, and AxisInfo's divisibility proof is weaker.",
            [ctx.excerpt("ttir", [o.ir_line for o in wide][:6])],
            "fewer integer instructions in address math (matters for memory-bound kernels)",
            "keep per-element offsets int32; promote only the scalar base pointer to int64",
            values=facts.int64,
        )


_ACCESS_OF_A_NAME = re.compile(r"\btl\.(load|store)\(\s*[\w.]+\s*[,)]")


def _compiler_made_int64(ctx: Context, facts: Any) -> bool:
    """int64 offsets the source never wrote: block pointers (`tl.load(K_block_ptr)`) are expanded into
    64-bit offset arithmetic located on the access itself, which no int32 rewrite of the source removes."""
    for op in facts.int64_ops:
        line = ctx.line_of(op)
        text = ctx.source_text(line) if line else ""
        if not _ACCESS_OF_A_NAME.search(text) or "int64" in text:
            return False
    return bool(facts.int64_ops)


def check_precise_math(ctx: Context) -> None:
    for line, st in ctx.lines.items():
        divs, sqrts = st.count("ptx", "div_precise"), st.count("ptx", "sqrt_precise")
        if not divs and not sqrts:
            continue
        parts = [
            p for p in (f"{divs} div.rn.f32" if divs else "", f"{sqrts} sqrt.rn.f32" if sqrts else "") if p
        ]
        ptx = ctx.parsed.ptx
        picked = [
            i.ir_line
            for i in (ptx.instrs if ptx else [])
            if i.opcode.startswith(("div.rn", "sqrt.rn"))
            and (f := i.loc.user_frame(ctx.is_user))
            and f.line == line
        ]
        ctx.add(
            R.PRECISE_MATH,
            line,
            f"This line compiles to IEEE-rounded {' and '.join(parts)} (from tl.math.div_rn/sqrt_rn or "
            "ieee_rounding); `/` and `tl.sqrt` use the approximate div.full/sqrt.approx paths.",
            [ctx.excerpt("ptx", picked)],
            "several times fewer instructions for each division/square root",
            "use `a / b` and `tl.sqrt(x)` (or `tl.rsqrt`) unless bit-exact IEEE results are required",
            precise_div=divs,
            precise_sqrt=sqrts,
        )


# Ops that may write global memory: a load after one of them may legitimately read new data.
_WRITES = (
    "tt.store",
    "tt.atomic_rmw",
    "tt.atomic_cas",
    "tt.descriptor_store",
    "tt.descriptor_scatter",
    "tt.call",
)


def check_redundant_loads(ctx: Context) -> None:
    ttir = ctx.parsed.ttir
    if ttir is None:
        return
    flow = ctx.flow(ttir)
    loops = {op.ir_line: op for op in ttir.ops if op.name in ("scf.for", "scf.while")}
    stored_in_loop = {ln for op in ttir.ops if op.name in _WRITES for ln in op.loops}
    seen: dict[str, list[MlirOp]] = {}
    for op in ttir.ops:
        if op.name in _WRITES:
            seen.clear()  # a store may alias any earlier load
            continue
        if op.name != "tt.load" or not op.operands:
            continue
        line = ctx.line_of(op)
        if line is None or "isVolatile = true" in op.text:
            continue  # volatile loads (flags, locks) are meant to be re-read
        inner = loops.get(op.loops[-1]) if op.loops else None
        if (
            inner is not None
            and len(op.scope) == len(inner.scope) + 1  # not under an scf.if inside the loop
            and not any(flow.varies_in_loop(o, inner) for o in op.operands[:2])
        ):
            if inner.ir_line in stored_in_loop and _may_alias_store(flow, ttir, op, inner):
                pass  # the loop writes where it reads: reloading may be required
            else:
                loop_line = ctx.line_of(inner)
                ctx.add(
                    R.REDUNDANT_LOAD,
                    line,
                    f"This load's address and mask do not change inside the loop on line {loop_line}, yet it "
                    "is issued again on every iteration: the compiler does not hoist loads out of loops.",
                    [ctx.excerpt("ttir", [inner.ir_line, op.ir_line])],
                    "one load instead of one per iteration",
                    "move the load above the loop and reuse the value",
                    loop_line=loop_line,
                    kind="loop-invariant",
                )
                continue
        key = "|".join(flow.canonical(o) for o in op.operands[:2])
        earlier = seen.setdefault(key, [])
        # Only a load that always runs before this one counts: same region or an enclosing one (a load in
        # the other branch of an scf.if, or in an earlier sibling loop, does not).
        first = next((f for f in earlier if op.scope[: len(f.scope)] == f.scope), None)
        earlier.append(op)
        first_line = ctx.line_of(first) if first is not None else None
        if first is None or first_line is None:
            continue
        ctx.add(
            R.REDUNDANT_LOAD,
            line,
            f"This load reads the same addresses with the same mask as the load on line {first_line}; the "
            "compiler keeps both, so the data crosses the memory system twice.",
            [ctx.excerpt("ttir", [first.ir_line, op.ir_line])],
            "up to 2x less global traffic for this tensor",
            f"reuse the value loaded on line {first_line}",
            first_line=first_line,
            kind="repeated",
        )


def _may_alias_store(flow: Dataflow, ttir: MlirModule, load: MlirOp, loop: MlirOp) -> bool:
    """Conservatively: a write in the same loop through the same base pointer argument (or an unknown one)."""
    base = flow.address(load.operands[0]).base
    for op in ttir.ops:
        if op.name in _WRITES and loop.ir_line in op.loops:
            if not op.operands or op.name == "tt.call":
                return True
            if flow.address(op.operands[0]).base in (base, None):
                return True
    return False


# The checks of this module, with the rules each emits. A new TL3xx rule registers its own check in its own
# module (`@rules.register_check(CHECK_FAMILY, RULE)` over `def check(ctx: Context) -> None`): see
# docs/architecture.md, "Adding a rule".
for _check, *_emits in (
    (check_vectorization, R.NOT_CONTIGUOUS, R.UNALIGNED, R.MASK),
    (check_layout_conversions, R.CONVERT),
    (check_dots, R.DOT_FMA, R.DOT_NOT_WGMMA),
    (check_pipelining, R.NOT_PIPELINED),
    (check_spills, R.SPILLS),
    (check_resources, R.OCC_REGS, R.OCC_SMEM, R.SMEM_LIMIT),
    (check_int64, R.INT64),
    (check_precise_math, R.PRECISE_MATH),
    (check_redundant_loads, R.REDUNDANT_LOAD),
):
    rules.register_check(CHECK_FAMILY, *_emits)(_check)


# --- summary (code lens) ----------------------------------------------------------------------------------


def summarize(ctx: Context) -> dict[str, Any]:
    res = ctx.resources
    out: dict[str, Any] = {
        "target": ctx.target,
        "num_warps": ctx.num_warps,
        "num_stages": ctx.num_stages,
        "registers": res.get("registers"),
        "spill_stores": res.get("spill_stores"),
        "spill_loads": res.get("spill_loads"),
        "stack": res.get("stack"),
        "shared": res.get("shared"),
    }
    load_bits = [b for st in ctx.lines.values() for b in st.global_load_bits]
    if load_bits:
        out["main_load_bits"] = max(set(load_bits), key=load_bits.count)
        out["min_load_bits"] = min(load_bits)
    dots = {"tcgen05": 0, "wgmma": 0, "mma": 0, "fma_dot": 0}
    for st in ctx.lines.values():
        for cls in dots:
            dots[cls] += st.count("ttgir", cls)
    if any(dots.values()):
        out["dot_lowering"] = (
            next(name for name in ("tcgen05", "wgmma", "mma") if dots[name])
            if any(dots[n] for n in ("tcgen05", "wgmma", "mma"))
            else "fma"
        )
    if ctx.limits and res.get("registers"):
        occ = occupancy(ctx.limits, ctx.num_warps, _int(res.get("registers"), 0), _int(res.get("shared"), 0))
        out["occupancy"] = round(occ.fraction, 3)
        out["occupancy_limiter"] = occ.limiter
    return out
