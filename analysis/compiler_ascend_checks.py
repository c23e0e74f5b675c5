"""The TL4xx checks: each reads the parsed ttadapter (plus the kernel's AST) and returns findings.

Every finding sits on the source line the IR's locations blame, carries the IR lines as `Evidence`, says
which triton-ascend pass made the decision and which source construct caused it, and gives the rewrite.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field, replace
from typing import Any

from .compiler_ascend_devices import MAX_GRID_BLOCKS, AscendDevice
from .compiler_ascend_padding import (
    care_padding_fix,
    masked_loads_without_other,
    padding_verdict,
)
from .compiler_ascend_rules import (
    DISCRETE_ACCESS,
    GRID_VS_CORES,
    INT_VECTOR_DEGRADED,
    MASKED_LOAD_PADDING,
    STATIC_RANGE_UNROLLED,
    TAIL_UNALIGNED,
    UB_OVERFLOW_RULE,
)
from .findings import Evidence, Finding, Severity, Span
from .ir.ttadapter import AdapterModule, AdapterOp, Buffer, ScalarLoop, peak_live_bytes
from .rules import Rule, register_check

STAGE = "ttadapter"
# Integer tile ops the A2/A3 vector unit cannot do on int64 (performance_guidelines.md: Add; the other
# arithmetic ops lower the same way).
INT64_SCALARIZED = (
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.divsi",
    "arith.divui",
    "arith.remsi",
    "arith.remui",
    "arith.maxsi",
    "arith.minsi",
    "arith.maxui",
    "arith.minui",
    "arith.cmpi",
)
VECTOR_ALIGN_BYTES = 32
CUBE_ALIGN_BYTES = 512


@dataclass
class AscendContext:
    module: AdapterModule
    source_lines: list[str]
    tree: ast.Module | None
    kernel: str
    path: str
    device: AscendDevice | None
    metadata: dict[str, Any]
    resources: dict[str, Any]
    constants: dict[str, Any] = field(default_factory=dict)
    ttir_i64_lines: set[int] | None = None  # source lines whose ttir already computes on i64 tiles
    grid: tuple[int, ...] | None = None  # the launch grid (metadata, or a literal launch site)
    launch_line: int | None = None  # the launch site's line, where a grid finding goes
    ub_decided: bool = False  # bishengir's PlanMemory layout or overflow error decided the UB question

    def kernel_def(self) -> ast.FunctionDef | None:
        if self.tree is None:
            return None
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef) and node.name == self.kernel:
                return node
        return None

    def kernel_line(self) -> int:
        node = self.kernel_def()
        return node.lineno if node is not None else 1

    def span(self, line: int) -> Span:
        text = self.source_lines[line - 1] if 0 < line <= len(self.source_lines) else ""
        start = len(text) - len(text.lstrip())
        return Span(line, start, line, len(text.rstrip()))

    def snippet(self, line: int) -> str:
        text = self.source_lines[line - 1].strip() if 0 < line <= len(self.source_lines) else ""
        return text if len(text) <= 80 else text[:77] + "..."

    def finding(
        self,
        rule: Rule,
        line: int,
        message: str,
        evidence: list[Evidence],
        gain: str | None,
        data: dict[str, Any],
        severity: Severity | None = None,
    ) -> Finding:
        return rule.finding(
            message,
            self.span(line),
            kernel=self.kernel,
            severity=severity,
            platforms=("ascend",),
            evidence=evidence,
            gain=gain,
            data=data,
        )

    def ir_evidence(self, summary: str, ir_lines: list[int], limit: int = 8) -> Evidence:
        return Evidence(
            kind="ir",
            summary=summary,
            stage=STAGE,
            excerpt=self.module.excerpt(ir_lines, limit),
            ir_lines=tuple(sorted(set(ir_lines))),
        )


def _kib(n: int) -> str:
    return f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} B"


# --- TL401 -------------------------------------------------------------------------------------------------


def check_discrete_access(ctx: AscendContext) -> list[Finding]:
    out: list[Finding] = []
    for loop in ctx.module.scalar_loops:
        line = loop.op.line
        if line is None or loop.op.in_scalar_loop:
            continue  # an inner loop of a nest is reported with its outermost loop
        body = [
            o
            for o in loop.body
            if "DiscreteMemAccess" in o.markers or o.name in ("memref.load", "memref.store")
        ]
        ir = [loop.op.ir_line, *(o.ir_line for o in body)]
        if loop.op.end_ir_line:
            ir.append(loop.op.end_ir_line)
        is_store = loop.stores > 0 and loop.loads == 0
        trip = _nest_trip_count(ctx, loop)
        count = f"{trip}-iteration" if trip else "per-element"
        causes = _address_causes(ctx, line)
        if causes.loaded:
            kind = "scatter" if is_store else "gather"
            what = f"is a {kind}"
            fix = (
                "If the source row fits in the Unified Buffer, load it contiguously and select on chip with "
                "`tl.gather`; otherwise sort/bucket the indices so each program reads a contiguous range."
            )
        else:
            kind = "store" if is_store else "load"
            what = "has an address triton-ascend could not prove affine in `tl.arange`"
            fix = (
                "Keep offsets affine: mask instead of wrapping with `%`, and recompute pointers from the loop "
                "index (`base + k * BLOCK_K * stride`) instead of advancing a pointer tensor."
            )
        cause = f" Cause: {causes.describe()}." if causes.describe() else ""
        message = (
            f"`{ctx.snippet(line)}` {what}: triton-ascend's --triton-to-unstructure pass could not express it as "
            f"a strided block, so it became a {count} scalar loop (`ExtractedLoadOrStore`), one global-memory "
            f"access per element.{cause} {fix}"
        )
        evidence = [ctx.ir_evidence(f"scalarized {kind} loop ({count}) in ttadapter", ir)]
        if causes.describe():
            evidence.append(Evidence(kind="ast", summary=causes.describe()))
        gain = (
            f"{trip} single-element transfers per program become one block copy + an on-chip gather"
            if trip
            else "per-element transfers become one block copy + an on-chip gather"
        )
        data = {
            "trip_count": trip,
            "loads": loop.loads,
            "stores": loop.stores,
            "index_line": causes.loaded,
            "modulo_line": causes.modulo,
            "advanced_line": causes.advanced,
        }
        out.append(ctx.finding(DISCRETE_ACCESS, line, message, evidence, gain, data))
    return out


def _nest_trip_count(ctx: AscendContext, outer: ScalarLoop) -> int | None:
    """Elements the loop nest visits: a 2-D tile is scalarized as one scf.for per axis."""
    if outer.trip_count is None:
        return None
    end = outer.op.end_ir_line or outer.op.ir_line
    per_depth: dict[int, int] = {}
    for inner in ctx.module.scalar_loops:
        if outer.op.ir_line < inner.op.ir_line < end and inner.trip_count:
            depth = inner.op.loop_depth
            per_depth[depth] = max(per_depth.get(depth, 0), inner.trip_count)
    return outer.trip_count * math.prod(per_depth.values())


@dataclass
class AddressCauses:
    """Why an access's address is not an affine function of tl.arange, as far as the AST shows."""

    loaded: int | None = None  # line of a tl.load that produced an index
    modulo: int | None = None  # line of a `%` or `//` on offsets
    advanced: int | None = None  # line where a pointer tensor is advanced inside a loop

    def describe(self) -> str:
        parts = []
        if self.loaded:
            parts.append(f"the index comes from the load on line {self.loaded}")
        if self.modulo:
            parts.append(f"the offsets go through `%`/`//` on line {self.modulo}")
        if self.advanced:
            parts.append(f"the pointer tensor is advanced inside a loop on line {self.advanced}")
        return "; ".join(parts)


def _assignments(func: ast.FunctionDef) -> dict[str, list[tuple[ast.stmt, bool]]]:
    """name -> (assignment, inside a loop) for every simple assignment in the kernel."""
    out: dict[str, list[tuple[ast.stmt, bool]]] = {}

    def visit(stmts: list[ast.stmt], in_loop: bool) -> None:
        for stmt in stmts:
            targets: list[ast.expr] = []
            if isinstance(stmt, ast.Assign):
                targets = list(stmt.targets)
            elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
                targets = [stmt.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append((stmt, in_loop))
            for field_name in ("body", "orelse"):
                inner = getattr(stmt, field_name, None)
                if isinstance(inner, list) and not isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                    visit(inner, in_loop or isinstance(stmt, (ast.For, ast.While)))

    visit(func.body, False)
    return out


def _address_causes(ctx: AscendContext, line: int) -> AddressCauses:
    causes = AddressCauses()
    func = ctx.kernel_def()
    if func is None:
        return causes
    access = next(
        (
            c
            for c in ast.walk(func)
            if isinstance(c, ast.Call)
            and getattr(c, "lineno", None) == line
            and isinstance(c.func, ast.Attribute)
            and c.func.attr in ("load", "store")
            and c.args
        ),
        None,
    )
    if access is None:
        return causes
    defs = _assignments(func)
    frontier = [n.id for n in ast.walk(access.args[0]) if isinstance(n, ast.Name)]
    seen: set[str] = set()
    for _ in range(6):  # a few hops of `a = f(b)` are enough to reach the cause
        next_names: list[str] = []
        for name in frontier:
            if name in seen:
                continue
            seen.add(name)
            for stmt, in_loop in defs.get(name, []):
                value = getattr(stmt, "value", None)
                if value is None:
                    continue
                if (
                    isinstance(value, ast.Call)
                    and isinstance(value.func, ast.Attribute)
                    and value.func.attr == "load"
                ):
                    causes.loaded = causes.loaded or stmt.lineno
                    continue
                if any(
                    isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mod, ast.FloorDiv))
                    for n in ast.walk(value)
                ):
                    causes.modulo = causes.modulo or stmt.lineno
                if isinstance(stmt, ast.AugAssign) and in_loop:
                    causes.advanced = causes.advanced or stmt.lineno
                next_names.extend(n.id for n in ast.walk(value) if isinstance(n, ast.Name))
        frontier = next_names
    return causes


# --- TL402 -------------------------------------------------------------------------------------------------


def _degraded(op: AdapterOp) -> str | None:
    if not op.on_tensors or op.in_scalar_loop:
        return None
    dtype = op.element_type
    if dtype == "i64" and op.name in INT64_SCALARIZED:
        return "i64"
    if dtype == "i32" and op.name == "arith.cmpi":
        return "i32"
    return None


def _writes_no_compare(ctx: AscendContext, line: int) -> bool:
    """Whether the source provably has no comparison on `line` (False when it did not parse).

    The whole module is searched: IR lines can point into a jit helper the kernel calls.
    """
    if ctx.tree is None:
        return False
    return not any(
        isinstance(node, ast.Compare) and node.lineno <= line <= (node.end_lineno or node.lineno)
        for node in ast.walk(ctx.tree)
    )


def check_int_vector_ops(ctx: AscendContext) -> list[Finding]:
    by_line: dict[int, list[tuple[AdapterOp, str]]] = {}
    for op in ctx.module.ops:
        why = _degraded(op)
        if why and op.line is not None:
            by_line.setdefault(op.line, []).append((op, why))
    out: list[Finding] = []
    for line, hits in sorted(by_line.items()):
        kinds = sorted({f"{op.name} on {op.types[-1]}" for op, _ in hits})
        has64 = any(why == "i64" for _, why in hits)
        numel = max((op.types[-1].numel or 0) for op, _ in hits)
        from_pointers = has64 and ctx.ttir_i64_lines is not None and line not in ctx.ttir_i64_lines
        if from_pointers:
            fix = (
                "the source computes in int32; the int64 offsets are triton-ascend's lowering of a pointer "
                "tensor it could not keep structured, so make the access affine (see TL401) and they go away"
            )
        elif has64:
            fix = "compute in int32 when the values fit (`.to(tl.int32)` on the operands)"
        elif _writes_no_compare(ctx, line):
            fix = (
                "no comparison is written on this line: it comes from the lowering of a library call here "
                "(e.g. tl.rand/tl.randn compare integers internally), so there is nothing to rewrite in the source "
                "short of moving that call out of hot code"
            )
        else:
            fix = "compare in fp32 when both sides are exact in fp32 (|v| < 2**24), e.g. `offs.to(tl.float32) < n`"
        message = (
            f"`{ctx.snippet(line)}` lowers to {', '.join(kinds)}: the A2/A3 vector unit has no "
            f"{'int64 arithmetic/compare' if has64 else 'int32 compare'}, so bishengir expands it into "
            f"{numel or 'per'}-element scalar code. Fix: {fix}."
        )
        evidence = [
            ctx.ir_evidence("integer tile ops the vector unit cannot run", [op.ir_line for op, _ in hits])
        ]
        gain = f"one vector op instead of ~{numel} scalar ops per tile op" if numel else None
        data = {
            "ops": [op.name for op, _ in hits],
            "dtypes": sorted({why for _, why in hits}),
            "numel": numel,
            "from_pointer_lowering": from_pointers,
        }
        out.append(ctx.finding(INT_VECTOR_DEGRADED, line, message, evidence, gain, data))
    return out


# --- TL403 -------------------------------------------------------------------------------------------------


def ub_estimate(ctx: AscendContext) -> tuple[int, list[Buffer]]:
    multibuffer = bool(ctx.metadata.get("multibuffer", True))
    peak, where = peak_live_bytes(ctx.module.buffers, multibuffer)
    if where is None:
        return 0, []
    live = [b for b in ctx.module.buffers if not b.feeds_cube and b.op.ir_line <= where <= b.last_use]
    return peak, live


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
        f"{source} {_kib(used)} of Unified Buffer, above the {_kib(capacity)} of {ctx.device.soc}; the largest "
        f"live tiles are {listing}. Split the block with an inner `for` loop over a BLOCK_SUB tile, lower the "
        "block size, or use a narrower dtype."
    )
    evidence = [
        ctx.ir_evidence(
            f"tiles live together at the peak ({_kib(peak)} estimated)", [b.op.ir_line for b in live]
        )
    ]
    if exact is not None:
        evidence.append(
            Evidence(kind="resource", summary=f"bishengir: UB size = {int(bits)} bits", stage="npubin")
        )
    severity = Severity.ERROR if exact is not None else None
    gain = f"fits the {_kib(capacity)} UB (today {_kib(used)}, {used / capacity:.1f}x over)"
    # Reached only when bishengir's hivm stage did not run (compiler_ascend.py): then it is an estimate.
    data = {
        "ub_bytes": used,
        "ub_capacity": capacity,
        "exact": exact is not None,
        "estimate": peak,
        "source": "bishengir (npubin)" if exact is not None else "estimate from ttadapter buffers",
    }
    return [ctx.finding(UB_OVERFLOW_RULE, line, message, evidence, gain, data, severity)]


# --- TL404 -------------------------------------------------------------------------------------------------


def check_grid(ctx: AscendContext) -> list[Finding]:
    grid, launch_line = ctx.grid, ctx.launch_line
    if ctx.device is None or not grid:
        return []
    mix = ctx.module.mix_mode or "aiv"
    cube = mix in ("aic", "mix")
    cores = ctx.device.ai_cores if cube else ctx.device.vector_cores
    if not cores:
        return []
    blocks = math.prod(grid)
    unit = "AI cores (cube + 2 vector each)" if cube else "vector cores"
    line = launch_line or ctx.kernel_line()
    severity = None
    if blocks > MAX_GRID_BLOCKS:
        severity = Severity.WARNING
        what = f"{blocks} blocks exceed the runtime's {MAX_GRID_BLOCKS}-block launch limit"
    elif blocks > cores:
        rounds = math.ceil(blocks / cores)
        tail = blocks % cores
        tail_note = f"; the last round keeps only {tail} of {cores} busy" if tail else ""
        what = f"{blocks} blocks on {cores} {unit} run in {rounds} dispatch rounds{tail_note}"
    elif blocks < cores:
        what = f"{blocks} blocks leave {cores - blocks} of {cores} {unit} idle"
    else:
        return []
    message = (
        f"grid {grid} (mix_mode `{mix}`) on {ctx.device.soc}: {what}. Launch exactly {cores} programs and "
        "loop over the work inside the kernel (`for b in range(tl.program_id(0), NUM_BLOCKS, tl.num_programs(0))`)."
    )
    func_line = next((i for i, t in enumerate(ctx.module.text.splitlines(), 1) if "func.func" in t), None)
    evidence = [
        Evidence(
            kind="resource",
            summary=f"{ctx.device.soc}: {ctx.device.ai_cores} AI cores, {ctx.device.vector_cores} vector cores",
        ),
    ]
    if func_line:
        evidence.append(
            Evidence(
                kind="ir",
                summary=f'--triton-to-linalg marked the kernel mix_mode="{mix}"',
                stage=STAGE,
                excerpt=f'mix_mode = "{mix}"',
                ir_lines=(func_line,),
            )
        )
    gain = "one dispatch round and no idle cores" if blocks != cores else None
    data = {"grid": list(grid), "blocks": blocks, "cores": cores, "mix_mode": mix}
    return [ctx.finding(GRID_VS_CORES, line, message, evidence, gain, data, severity)]


# --- TL405 -------------------------------------------------------------------------------------------------


def check_tail_alignment(ctx: AscendContext) -> list[Finding]:
    by_line: dict[int, list[tuple[Buffer, int]]] = {}
    for buf in ctx.module.buffers:
        if not buf.from_copy or buf.op.line is None:
            continue
        tail = buf.type.tail_bytes
        need = CUBE_ALIGN_BYTES if buf.feeds_cube else VECTOR_ALIGN_BYTES
        if tail is None or tail % need == 0:
            continue
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


# --- TL406 -------------------------------------------------------------------------------------------------


def _static_range_loops(ctx: AscendContext) -> list[ast.For]:
    node = ctx.kernel_def()
    if node is None:
        return []
    loops = []
    for stmt in ast.walk(node):
        if isinstance(stmt, ast.For) and isinstance(stmt.iter, ast.Call):
            func = stmt.iter.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "static_range":
                loops.append(stmt)
    return loops


def check_static_range(ctx: AscendContext) -> list[Finding]:
    out: list[Finding] = []
    for loop in _static_range_loops(ctx):
        first, last = loop.body[0].lineno, loop.end_lineno or loop.lineno
        staged = [b for b in ctx.module.buffers if b.from_copy and b.op.line and first <= b.op.line <= last]
        per_line: dict[int, list[Buffer]] = {}
        for b in staged:
            per_line.setdefault(b.op.line or 0, []).append(b)
        copies = max((len(v) for v in per_line.values()), default=0)
        if copies < 2:
            continue
        total = sum(b.type.bytes or 0 for b in staged)
        load_lines = sorted(per_line)
        message = (
            f"`{ctx.snippet(loop.lineno)}` was unrolled at trace time: ttadapter stages the load on line(s) "
            f"{', '.join(map(str, load_lines))} {copies} times ({_kib(total)} of buffers, no loop left for "
            "multibuffer to overlap). Use `range(...)` unless the body needs a compile-time index."
        )
        evidence = [
            ctx.ir_evidence(
                f"{len(staged)} staged load buffers from one loop body", [b.op.ir_line for b in staged]
            )
        ]
        gain = f"{_kib(total)} of unrolled buffers shrink to one double-buffered tile"
        data = {"copies": copies, "buffer_bytes": total, "load_lines": load_lines}
        out.append(ctx.finding(STATIC_RANGE_UNROLLED, loop.lineno, message, evidence, gain, data))
    return out


# --- TL407 -------------------------------------------------------------------------------------------------


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


# The TL4xx checks over triton-ascend's ttadapter, with the rules each emits (compiler_ascend.py runs the
# family; a new TL4xx rule's module registers its own check the same way).
ASCEND_FAMILY = "ascend"
for _check, *_emits in (
    (check_discrete_access, DISCRETE_ACCESS),
    (check_int_vector_ops, INT_VECTOR_DEGRADED),
    (check_ub_capacity, UB_OVERFLOW_RULE),
    (check_grid, GRID_VS_CORES),
    (check_tail_alignment, TAIL_UNALIGNED),
    (check_static_range, STATIC_RANGE_UNROLLED),
    (check_masked_padding, MASKED_LOAD_PADDING),
):
    register_check(ASCEND_FAMILY, *_emits)(_check)
