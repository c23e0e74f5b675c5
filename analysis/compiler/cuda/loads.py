"""NVIDIA check on loads repeated inside a loop that the compiler did not hoist (no store may alias them)."""

from __future__ import annotations

from ...core.findings import Finding, Severity
from ...core.rules import Confirms, register_check
from ..ir.mlir import MlirModule, MlirOp
from .context import Context
from .dataflow import Dataflow
from .declare import _GUIDE_MEM, CHECK_FAMILY, cuda_rule


def _same_loop(high: Finding, low: Finding) -> bool:
    # TL314 has two kinds; only "loop-invariant" is TL106's cause, and both record the loop's line.
    return high.data.get("kind") == "loop-invariant" and high.data.get("loop_line") == low.data.get("loop_line")


REDUNDANT_LOAD = cuda_rule(
    "TL314",
    "redundant-global-load",
    "The same global memory is loaded more than once",
    Severity.WARNING,
    "Two `tt.load`s with the same address and mask and no store between them read the same bytes twice; "
    "Triton does not merge them, so the kernel moves the data from L2/DRAM twice.\n\nFix: load once into a "
    "variable and reuse it.",
    _GUIDE_MEM,
    confirms=(
        Confirms("TL106", "a load whose address and mask do not change in the loop", _same_loop, portable=True),
    ),
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


@register_check(CHECK_FAMILY, REDUNDANT_LOAD)
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
                    REDUNDANT_LOAD,
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
            REDUNDANT_LOAD,
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
