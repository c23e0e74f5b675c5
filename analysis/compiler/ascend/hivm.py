"""Ascend findings from BiSheng's own decisions: the `hivm` stage of ascend_runner/worker/compile_hivm.py.

bishengir-compile runs the whole HFusion + HIVM pipeline on the CPU and stops at the external `hivmc` step
(part of CANN, absent here): no device binary and no timing, but every decision before it is real. This
module turns those decisions into findings and a summary: UB use per function from PlanMemory (bytes of the
target's UB, which buffers, multibuffered or not), the compiler's UB-overflow error with its numbers and
retries (TL403), scalar fallbacks after InsertLoadStoreForScalar (TL408), scalar waits inside loops from sync
insertion (TL409), multibuffer marks and the vector/cube split.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ...core.findings import Evidence, Finding, Level, Severity
from ...core.rules import Rule, register
from ..ir import hivm as H
from ..ir.mlir import line_map, parse_mlir
from ..ir.mlir_loc import UserFiles
from .context import AscendContext
from .declare import PERFORMANCE_GUIDE, PROGRAMMING_GUIDE
from .ub import UB_OVERFLOW_RULE

# Rules grounded in BiSheng's own pipeline decisions (the `hivm` stage): TL408-TL409, emitted by `check_scalar_fallback`
# and `check_scalar_loops` below (TL403, UB capacity, lives with the other TL40x rules in ub.py; with the hivm stage it cites bishengir's
# numbers).
SCALAR_FALLBACK = register(
    Rule(
        code="TL408",
        name="hivm-scalar-fallback",
        title="BiSheng moves single elements between tiles and the scalar unit on this line",
        level=Level.COMPILER,
        severity=Severity.INFO,
        platforms=("ascend",),
        rationale=(
            "After bishengir's InsertLoadStoreForScalar pass, the HIVM IR shows which values the scalar unit "
            "handles one element at a time: `memref.load`/`memref.store` are single-element global-memory "
            "accesses, `tensor.extract`/`tensor.insert` move one element between a vector tile in the Unified "
            "Buffer and the scalar unit, and each such move makes the pipes synchronize (set_flag/wait_flag "
            "between PIPE_V and PIPE_S). Inside a loop this serializes the vector and scalar units. Keep "
            "addresses affine in `tl.arange` so the data mover copies blocks, and keep values in tiles."
        ),
        references=(PROGRAMMING_GUIDE, PERFORMANCE_GUIDE),
    )
)

SCALAR_SYNC_IN_LOOP = register(
    Rule(
        code="TL409",
        name="hivm-scalar-sync-in-loop",
        title="Inside a loop, the scalar unit waits on the vector or data-mover pipes",
        level=Level.COMPILER,
        severity=Severity.INFO,
        platforms=("ascend",),
        rationale=(
            "bishengir's sync insertion (GraphSyncSolver / InjectSync) puts a set_flag/wait_flag pair between two "
            "pipes whenever one consumes what the other produced. A wait on PIPE_S inside a loop means every "
            "iteration stops the scalar unit until the vector unit (PIPE_V) or a data move (PIPE_MTE2/MTE3) "
            "finishes: the pipes cannot overlap. Usually a scalar read of a tile value (`x[0]`, a reduction "
            "used as an address or loop bound) causes it; compute it as a tile, or hoist it out of the loop."
        ),
        references=(PERFORMANCE_GUIDE,),
    )
)


NO_BINARY = "no device binary and no timing: hivmc (CANN) is not installed, the pipeline stops before it"


@dataclass
class HivmReport:
    ran: bool = False  # the pipeline ran (to hivmc, or until it failed on the kernel)
    ub_decided: bool = False  # PlanMemory placed the UB, or the compiler reported an overflow
    findings: list[Finding] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    line_maps: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    final_module: bool = False  # the final HIVM module exists: absence of a scalar loop there is evidence


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KB" if n % 1024 else f"{n // 1024} KB"


def _excerpt(text: str, ir_lines: list[int], limit: int = 8) -> str:
    lines = text.splitlines()
    picked = sorted(set(ir_lines))[:limit]
    return "\n".join(lines[n - 1].strip()[:200] for n in picked if 0 < n <= len(lines))


def analyze_hivm(ctx: AscendContext, stages: dict[str, str], metadata: dict[str, Any]) -> HivmReport:
    report = HivmReport()
    info = metadata.get("hivm") if isinstance(metadata.get("hivm"), dict) else {}
    status = str(info.get("status", "")) if info else ""
    if not status:
        report.notes.append(
            "no hivm stage (bishengir-compile did not run): UB use is estimated from ttadapter"
        )
        return report
    if status in ("unavailable", "timeout", "skipped"):
        report.notes.append(
            f"hivm stage {status}: {info.get('message', '')}; UB use is estimated from ttadapter"
        )
        return report
    report.ran = True
    is_user = UserFiles([ctx.path] if ctx.path else [])
    log = H.parse_log(stages.get("hivm.log", ""))
    final = stages.get("hivm", "")
    plans = H.ub_plans(stages.get("hivm.plan-memory", ""), is_user)
    capacity_bits = H.ub_capacity_bits(final) or (log.overflow.available_bits if log.overflow else None)
    if capacity_bits is None and ctx.device is not None:
        capacity_bits = ctx.device.ub_bytes * 8
    report.summary.update(
        {
            "hivm_status": status,
            "device_binary": status == "binary",
            "hivm_note": NO_BINARY if status != "binary" else "device binary built",
        }
    )
    if status == "hivmc-missing":
        report.notes.append(f"hivm: the whole BiSheng pipeline ran; {NO_BINARY}")
    _ub_summary(report, plans, capacity_bits, log)
    report.findings.extend(check_ub_overflow(ctx, log, plans, stages.get("hivm.plan-memory", "")))
    if status == "failed":
        errors = [d.message for d in log.errors][:2]
        report.notes.append(
            "hivm: bishengir-compile stopped inside the pipeline (no device binary): "
            + ("; ".join(errors) or "see hivm.log")[:300]
        )
    report.final_module = bool(final)
    report.findings.extend(check_scalar_fallback(ctx, stages.get("hivm.scalar", ""), is_user))
    report.findings.extend(check_scalar_loops(ctx, final, is_user))
    report.findings.extend(check_scalar_sync(ctx, final, is_user))
    _decisions_summary(report, stages, final, is_user)
    for name, text in stages.items():
        if name == "hivm" or (name.startswith("hivm.") and name != "hivm.log"):
            try:
                report.line_maps[name] = line_map(parse_mlir(text), is_user)
            except Exception as exc:  # noqa: BLE001 - one unreadable dump must not hide the rest
                report.notes.append(f"could not attribute {name}: {type(exc).__name__}: {exc}")
    return report


def _ub_summary(
    report: HivmReport, plans: list[H.UbPlan], capacity_bits: int | None, log: H.BishengLog
) -> None:
    report.ub_decided = bool(plans) or log.overflow is not None
    if capacity_bits:
        report.summary["ub_capacity_bits"] = capacity_bits
    if log.overflow is not None:
        report.summary["ub_required_bits"] = log.overflow.required_bits
        report.summary["ub_available_bits"] = log.overflow.available_bits
        report.summary["ub_overflow"] = True
        report.summary["ub_retries"] = list(log.retries)
        return
    placed = [p for p in plans if not p.failed]
    if not placed:
        return
    used = max(p.used_bytes for p in placed)
    report.summary["ub_used_bits"] = used * 8
    report.summary["ub_bytes"] = used
    report.summary["ub_source"] = "bishengir PlanMemory"
    report.summary["ub_plans"] = [
        {
            "function": p.func,
            "used_bits": p.used_bytes * 8,
            "buffers": [
                {
                    "line": b.line,
                    "type": b.type,
                    "bytes": b.bytes,
                    "copies": b.copies,
                    "offsets": list(b.offsets),
                }
                for b in p.buffers
            ],
        }
        for p in placed
    ]


def check_ub_overflow(
    ctx: AscendContext, log: H.BishengLog, plans: list[H.UbPlan], dump: str
) -> list[Finding]:
    """TL403 from the compiler's own error: its numbers, what it retried, and the buffers it had to place."""
    over = log.overflow
    if over is None:
        return []
    failed = next((p for p in plans if p.failed), None)
    by_line: Counter[int] = Counter()
    for b in failed.buffers if failed else []:
        if b.line is not None:
            by_line[b.line] += b.bytes or 0
    # The compiler locates a whole-function failure at the kernel's `def`; the line that allocates the most
    # UB is where the author acts. Without a failed plan the compiler's own location stands.
    line = by_line.most_common(1)[0][0] if by_line else (over.line or ctx.kernel_line())
    biggest = sorted(failed.buffers if failed else [], key=lambda b: -(b.bytes or 0))[:5]
    listing = ", ".join(f"{b.type} (line {b.line})" for b in biggest)
    retried = retry_settings(log.retries)
    req_b, avail_b = over.required_bits // 8, over.available_bits // 8
    message = (
        f"bishengir-compile: ub overflow, requires {over.required_bits} bits ({_kib(req_b)}) while "
        f"{over.available_bits} bits ({_kib(avail_b)}) available"
        + (f" on {ctx.device.soc}" if ctx.device else "")
        + (f" (it located the failure at line {over.line})" if over.line and over.line != line else "")
        + (f"; it still fails after retrying with {retried}." if retried else ".")
        + (f" Buffers it had to place: {listing}." if listing else "")
        + " Split the block with an inner `for` loop over a BLOCK_SUB tile, lower the block size, or use a "
        "narrower dtype."
    )
    evidence = [Evidence(kind="resource", summary=f"bishengir-compile: {over.message}", stage="hivm.log")]
    if failed:
        evidence.append(
            Evidence(
                kind="ir",
                summary="UB buffers in the IR PlanMemory failed on (last attempt)",
                stage="hivm.plan-memory",
                excerpt=_excerpt(dump, [b.ir_line for b in biggest]),
                ir_lines=tuple(sorted(b.ir_line for b in biggest)),
            )
        )
    data = {
        "ub_required_bits": over.required_bits,
        "ub_available_bits": over.available_bits,
        "ub_bytes": req_b,
        "ub_capacity": avail_b,
        "exact": True,
        "source": "bishengir",
        "retries": list(log.retries),
        "compiler_line": over.line,
        "buffer_lines": sorted(by_line),
    }
    gain = f"compiles: today {over.required_bits / over.available_bits:.1f}x the UB"
    return [ctx.finding(UB_OVERFLOW_RULE, line, message, evidence, gain, data, Severity.ERROR)]


def retry_settings(retries: list[str]) -> str:
    """ "enable-code-motion=false, then enable-auto-multi-buffer=false" from the compiler's retry notes."""
    steps: list[str] = []
    for note in retries:
        for name in re.findall(r"set ([\w-]+) to false", note):
            if f"{name}=false" not in steps:
                steps.append(f"{name}=false")
    return ", then ".join(steps)


def check_scalar_fallback(ctx: AscendContext, dump: str, is_user: UserFiles) -> list[Finding]:
    """TL408: single-element GM accesses (memref.load/store) the pipeline kept, per source line."""
    sites = H.scalar_sites(dump, is_user)
    looped = {op.ir_line for op in parse_mlir(dump).ops if op.loops} if sites else set()
    by_line: dict[int, list[H.IrSite]] = {}
    for s in sites:
        if s.line is not None:
            by_line.setdefault(s.line, []).append(s)
    out: list[Finding] = []
    for line, hits in sorted(by_line.items()):
        gm = [s for s in hits if s.op in ("memref.load", "memref.store")]
        if not gm:
            continue  # an extract alone (a reduction's result) is the normal way a scalar leaves a tile
        counts = Counter(s.op for s in hits)
        ops = ", ".join(f"{op} x{n}" for op, n in sorted(counts.items()))
        message = (
            f"`{ctx.snippet(line)}`: after bishengir's InsertLoadStoreForScalar the HIVM IR still accesses "
            f"global memory one element at a time here ({ops}); each element crosses between the scalar unit "
            "and the Unified Buffer with a pipe synchronization. Keep the address affine in `tl.arange` so the "
            "data mover copies a block."
        )
        evidence = [
            Evidence(
                kind="ir",
                summary="scalar accesses after InsertLoadStoreForScalar",
                stage="hivm.scalar",
                excerpt=_excerpt(dump, [s.ir_line for s in hits]),
                ir_lines=tuple(sorted(s.ir_line for s in hits)),
            )
        ]
        # once per program (no enclosing loop in the IR): evidence for TL401/TL402, not a cost of its own
        in_loop = any(s.ir_line in looped for s in gm)
        data = {"ops": dict(counts), "source": "bishengir", "in_loop": in_loop}
        out.append(ctx.finding(SCALAR_FALLBACK, line, message, evidence, None, data))
    return out


def check_scalar_loops(ctx: AscendContext, final: str, is_user: UserFiles) -> list[Finding]:
    """TL408: tile ops the final HIVM module walks element by element over UB (lowered to scalar loops)."""
    by_line: dict[int, list[H.ScalarLoop]] = {}
    for loop in H.ub_scalar_loops(final, is_user):
        if loop.line is not None:
            by_line.setdefault(loop.line, []).append(loop)
    out: list[Finding] = []
    for line, loops in sorted(by_line.items()):
        if re.match(r"(for|while)\b", ctx.snippet(line).lstrip()):
            continue  # the user's own loop statement (its scalar bookkeeping), not a tile op lowered element-wise
        ops = sorted({o for lp in loops for o in lp.ops})
        dtypes = sorted({d for lp in loops for d in lp.dtypes})
        trips = [lp.trip_count for lp in loops if lp.trip_count]
        what = f"{len(loops)} scalar loop(s)" + (f" of {max(trips)} iterations" if trips else "")
        message = (
            f"`{ctx.snippet(line)}`: bishengir lowered this tile computation to {what} over the Unified Buffer "
            f"({', '.join(ops) or 'element moves'} on {', '.join(dtypes)}, one element per iteration on the scalar "
            "unit) instead of a vector instruction. Use a dtype the vector unit has (int32/fp32/fp16) or keep "
            "the values out of this path."
        )
        ir = [lp.ir_line for lp in loops]
        evidence = [
            Evidence(
                kind="ir",
                summary="element-by-element loop over UB in the final HIVM module",
                stage="hivm",
                excerpt=_excerpt(final, ir),
                ir_lines=tuple(ir),
            )
        ]
        data = {"loops": len(loops), "trip_count": max(trips) if trips else None, "ops": ops, "dtypes": dtypes,
                "source": "bishengir"}  # fmt: skip
        gain = f"one vector op instead of ~{max(trips)} scalar iterations" if trips else None
        out.append(ctx.finding(SCALAR_FALLBACK, line, message, evidence, gain, data))
    return out


def _pipes(text: str) -> tuple[str, str] | None:
    m = re.search(r"\[<(PIPE_\w+)>,\s*<(PIPE_\w+)>", text)
    return (m.group(1), m.group(2)) if m else None


def check_scalar_sync(ctx: AscendContext, final: str, is_user: UserFiles) -> list[Finding]:
    """TL409: wait_flag ops on PIPE_S inside loops of the final HIVM module, per source line."""
    if not final:
        return []
    module = parse_mlir(final)
    by_line: dict[int, list[tuple[int, str, str]]] = {}
    for op in module.ops:
        if op.name != "hivm.hir.wait_flag" or not op.loops:
            continue
        pipes = _pipes(op.text)
        if pipes is None or "PIPE_S" not in pipes or pipes[0] == pipes[1]:
            continue
        frame = op.loc.user_frame(is_user)
        if frame is not None:
            by_line.setdefault(frame.line, []).append((op.ir_line, *pipes))
    out: list[Finding] = []
    per_row = _per_row_scalar_lines(ctx)
    for line, waits in sorted(by_line.items()):
        if line in per_row:
            continue  # one scalar per row of a row loop (its norm, its max): the scalar unit reads it by design
        pairs = sorted({f"{a}->{b}" for _, a, b in waits})
        message = (
            f"`{ctx.snippet(line)}`: inside a loop, bishengir's sync insertion makes the pipes wait on each other "
            f"({', '.join(pairs)}; {len(waits)} wait_flag op(s)), so the scalar unit and the vector/data-mover "
            "pipes cannot overlap across iterations. Keep the value in a tile or move the scalar work out of "
            "the loop."
        )
        evidence = [
            Evidence(
                kind="ir",
                summary="wait_flag on PIPE_S inside a loop (final HIVM)",
                stage="hivm",
                excerpt=_excerpt(final, [w[0] for w in waits]),
                ir_lines=tuple(sorted(w[0] for w in waits)),
            )
        ]
        data = {"waits": len(waits), "pipes": pairs, "source": "bishengir"}
        out.append(ctx.finding(SCALAR_SYNC_IN_LOOP, line, message, evidence, None, data))
    return out


_FULL_REDUCTIONS = ("sum", "max", "min", "reduce", "xor_sum", "argmax", "argmin")


def _full_reduction(node: ast.AST) -> bool:
    """`tl.sum(x)` without an axis: the whole tile to one scalar."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _FULL_REDUCTIONS
        and len(node.args) == 1
        and not any(k.arg == "axis" for k in node.keywords)
    )


def _loads_rows_of(loop: ast.For) -> bool:
    """Does each iteration load a tile addressed by the loop variable (a loop over rows, tokens, chunks)?"""
    target = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "load"
        and n.args
        and target & {m.id for m in ast.walk(n.args[0]) if isinstance(m, ast.Name)}
        for n in ast.walk(loop)
    )


def _per_row_scalar_lines(ctx: AscendContext) -> set[int]:
    """Source lines inside a loop that reduce the iteration's tile to a scalar, or use such a scalar."""
    func = ctx.kernel_def()
    if func is None:
        return set()
    out: set[int] = set()
    for loop in (n for n in ast.walk(func) if isinstance(n, ast.For)):
        if not _loads_rows_of(loop):
            continue
        scalars: set[str] = set()
        for stmt in (n for n in ast.walk(loop) if isinstance(n, ast.stmt) and n is not loop):
            if isinstance(stmt, (ast.For, ast.While, ast.If)):
                continue  # their bodies are visited on their own statements
            names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
            if any(_full_reduction(n) for n in ast.walk(stmt)) or names & scalars:
                out.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
                if isinstance(stmt, ast.Assign):
                    scalars |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
    return out


def _decisions_summary(report: HivmReport, stages: dict[str, str], final: str, is_user: UserFiles) -> None:
    marks = H.multibuffer_marks(stages.get("hivm.multibuffer", ""), is_user)
    report.summary["multibuffered"] = [{"line": line, "factor": f} for _, f, line, _ in marks]
    cores = H.core_types(final)
    if cores:
        report.summary["core_type"] = cores.get("module")
        report.summary["functions"] = {k: v for k, v in cores.items() if k != "module"}
    if final:
        syncs = H.sync_sites(final, is_user)
        report.summary["sync_ops"] = dict(Counter(s.op.removeprefix("hivm.hir.") for s in syncs))
