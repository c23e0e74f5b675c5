"""NVIDIA checks on arithmetic the compiler emitted: 64-bit index math and precise (slow-path) math functions."""

from __future__ import annotations

import re
from typing import Any

from ...core.findings import Severity
from ...core.rules import register_check
from .context import Context
from .dataflow import value_type
from .declare import _AXIS, _PTX_ISA, CHECK_FAMILY, cuda_rule

INT64 = cuda_rule(
    "TL312",
    "int64-index-arithmetic",
    "Index arithmetic is done in 64-bit integers",
    Severity.INFO,
    "Offsets that become int64 (an int64 argument, `.to(tl.int64)`, or an int64 loaded index) make every "
    "per-element add/multiply a 64-bit operation, which the GPU emulates with two 32-bit instructions, and "
    "64-bit offsets weaken AxisInfo's divisibility reasoning.\n\nFix: keep per-element offsets int32 and "
    "promote only the scalar base (`ptr += pid.to(tl.int64) * stride` once), unless tensors exceed 2^31 "
    "elements.",
    _AXIS,
)


PRECISE_MATH = cuda_rule(
    "TL313",
    "precise-math-path",
    "IEEE-precise division/square root where a fast path exists",
    Severity.INFO,
    "`tl.math.div_rn` and `tl.math.sqrt_rn` (and `fdiv(ieee_rounding=True)`) lower to `div.rn.f32` / "
    "`sqrt.rn.f32`, multi-instruction sequences with a slow path, while `/` and `tl.sqrt` use the approximate "
    "`div.full.f32`/`sqrt.approx.f32` (MUFU) with ~2 ulp error. In softmax/normalization that precision is "
    "rarely needed.\n\nFix: `a / b`, `tl.sqrt`, `tl.rsqrt` unless the result must be bit-exact.",
    _PTX_ISA,
)




@register_check(CHECK_FAMILY, INT64)
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
        if _int64_from_memory(flow, facts) or _documented_wide(ctx):
            continue  # the caller's int64 metadata, or a width the author says the sizes need: not a choice
        seen.add(line)
        wide = [
            o
            for o in ttir.ops
            if o.name.startswith("arith.") and value_type(o)[1] == "i64" and value_type(o)[0]
        ]
        # prefer the 64-bit ops written on this line; the offsets may also come from earlier lines
        wide = [o for o in wide if ctx.line_of(o) == line] or wide
        ctx.add(
            INT64,
            line,
            f"The offsets of this access are int64 tensors (`{facts.int64[0]}`): every per-element index "
            "operation is 64-bit, two instructions each, and AxisInfo's divisibility proof is weaker.",
            [ctx.excerpt("ttir", [o.ir_line for o in wide][:6])],
            "fewer integer instructions in address math (matters for memory-bound kernels)",
            "keep per-element offsets int32; promote only the scalar base pointer to int64",
            values=facts.int64,
        )


_WIDE_NEED = re.compile(r"#.*(2\s*\*\*\s*3[12]|2\^3[12]|overflow|int32 range|> ?int32)", re.IGNORECASE)


def _int64_from_memory(flow: Any, facts: Any) -> bool:
    """Are the 64-bit offsets built from int64 values loaded from memory (lengths, offsets, page numbers in a
    LongTensor)? Then their width is the caller's tensor dtype; a narrowing cast in the kernel risks overflow."""
    stack = [o for op in facts.int64_ops for o in op.operands]
    seen: set[str] = set()
    while stack and len(seen) < 64:
        value = flow.resolve(stack.pop())
        if value in seen:
            continue
        seen.add(value)
        producer = flow.defs.get(value)
        if producer is None:
            continue
        if producer.name == "tt.load" and "ptr<i64>" in producer.text.split(" : ", 1)[-1]:
            return True
        if producer.name.startswith("arith.") or producer.name in ("tt.splat", "tt.broadcast", "tt.expand_dims"):
            stack.extend(producer.operands)
    return False


def _documented_wide(ctx: Context) -> bool:
    """A comment in the kernel's file says the indices need more than 32 bits (caches over 2^31 elements)."""
    return any(_WIDE_NEED.search(text) for text in ctx.source_lines)


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


@register_check(CHECK_FAMILY, PRECISE_MATH)
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
            if i.opcode.startswith(("div.rn", "sqrt.rn")) and i.opcode.endswith("f32")
            and (f := i.loc.user_frame(ctx.is_user))
            and f.line == line
        ]
        ctx.add(
            PRECISE_MATH,
            line,
            f"This line compiles to IEEE-rounded {' and '.join(parts)} (from tl.math.div_rn/sqrt_rn or "
            "ieee_rounding); `/` and `tl.sqrt` use the approximate div.full/sqrt.approx paths.",
            [ctx.excerpt("ptx", picked)],
            "several times fewer instructions for each division/square root",
            "use `a / b` and `tl.sqrt(x)` (or `tl.rsqrt`) unless bit-exact IEEE results are required",
            precise_div=divs,
            precise_sqrt=sqrts,
        )
