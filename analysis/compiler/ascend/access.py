"""TL401 (discrete, gather-like memory access and the address arithmetic that causes it) and TL402 (integer
tile ops the vector unit cannot do on int64, scalarized by the compiler)."""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any

from ...core.findings import Evidence, Finding, Level, Severity
from ...core.rules import Confirms, Rule, register, register_check
from ..ir.ttadapter_model import AdapterOp, ScalarLoop
from .context import AscendContext
from .declare import ASCEND_FAMILY, PERFORMANCE_GUIDE, PROGRAMMING_GUIDE


def _listed(f: Finding, key: str) -> list[Any]:
    value = f.data.get(key)
    return value if isinstance(value, list) else []


def _index_from_load(high: Finding, low: Finding) -> bool:
    # TL401 also fires for addresses that are not affine (modulo, pointer increments); TL116 is the gather.
    return high.data.get("index_line") is not None


def _int64_compare(high: Finding, low: Finding) -> bool:
    return "arith.cmpi" in _listed(high, "ops") and "i64" in _listed(high, "dtypes")


def _int64_ops(high: Finding, low: Finding) -> bool:
    return "i64" in _listed(high, "dtypes")


def _int_compare(high: Finding, low: Finding) -> bool:
    return "arith.cmpi" in _listed(high, "ops")


DISCRETE_ACCESS = register(
    Rule(
        code="TL401",
        name="discrete-access-scalarized",
        title="A gather/scatter was lowered to a scalar loop (one global-memory access per element)",
        level=Level.COMPILER,
        severity=Severity.WARNING,
        platforms=("ascend",),
        rationale=(
            "The address of this `tl.load`/`tl.store` depends on loaded data (or is otherwise not an affine "
            "function of `tl.arange`), so triton-ascend's `--triton-to-unstructure` pass cannot describe it as "
            "one strided block copy. It emits an `scf.for` tagged `ExtractedLoadOrStore` that reads one element "
            "per iteration (`memref.load` / `tensor.extract {DiscreteMemAccess}`): the data mover (MTE2) issues a "
            "tiny transfer per element and the vector unit sits idle. When the source row fits in the Unified "
            "Buffer, load it contiguously once and pick elements on chip with `tl.gather`; otherwise sort or "
            "bucket the indices so that each program reads a contiguous range."
        ),
        references=(
            PROGRAMMING_GUIDE,
            "https://github.com/triton-lang/triton-ascend/issues/339",
            "https://github.com/triton-lang/triton-ascend/pull/1027",
        ),
        confirms=(
            Confirms("TL116", "a gather through loaded indices becomes a scalar loop", _index_from_load),
        ),
    )
)


INT_VECTOR_DEGRADED = register(
    Rule(
        code="TL402",
        name="integer-vector-op-scalarized",
        title="int64 arithmetic or int32/int64 compares on tiles run on the scalar unit",
        level=Level.COMPILER,
        severity=Severity.WARNING,
        platforms=("ascend",),
        rationale=(
            "The A2/A3 vector unit has no int64 add/multiply lanes and no int32/int64 compare; bishengir expands "
            "such tile ops into element-by-element scalar code. The ttadapter IR shows the op on a "
            "`tensor<...xi64>` (or a `arith.cmpi` on `tensor<...xi32>`). Compute indices in int32 when they fit "
            "(`x.to(tl.int32)`), and compare in fp32 (`cols.to(tl.float32) < N`) when values are exactly "
            "representable (|v| < 2**24)."
        ),
        references=(PERFORMANCE_GUIDE,),
        lowers_to=Severity.INFO,
        lowering="when bishengir ran and kept a vector op on the line (not confirmed)",
        confirms=(
            Confirms("TL117", "an int64 tile comparison runs on the scalar unit", _int64_compare),
            Confirms("TL113", "int64 index tiles run on the scalar unit", _int64_ops),
            Confirms("TL118", "an integer tile comparison in tl.where runs on the scalar unit", _int_compare),
        ),
    )
)



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


@register_check(ASCEND_FAMILY, DISCRETE_ACCESS)
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


@register_check(ASCEND_FAMILY, INT_VECTOR_DEGRADED)
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
