"""Parse triton-ascend's `ttadapter` stage (linalg + memref + scf MLIR with hivm/hfusion hints) per source line.

ttadapter is what `triton-adapter-opt` hands to bishengir: loads are `memref.alloc` + `memref.copy` into
on-chip buffers, stores are `bufferization.materialize_in_destination`, tile math is arith/math/linalg on
`tensor<...>` values (vector unit), `linalg.matmul` goes to the cube unit, and accesses the adapter could not
prove contiguous are unrolled into `scf.for` loops of scalar `memref.load`/`tensor.extract` tagged
`ExtractedLoadOrStore` / `DiscreteMemAccess`. Every op carries a `loc(...)` pointing at the Triton source
when the stage was produced with TRITON_DISABLE_LINE_INFO=0.

Pure text processing: no MLIR bindings, so it runs in the language-server process.
"""

from __future__ import annotations

import re

from .mlir import MlirOp, parse_mlir
from .mlir_loc import UserFiles
from .ttadapter_buffers import buffers_of
from .ttadapter_model import (
    CAST_OPS,
    COMPARE_OPS,
    MARKERS,
    AdapterLineStats,
    AdapterModule,
    AdapterOp,
    ScalarLoop,
    ShapedType,
)

_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')
_SHAPED_RE = re.compile(r"\b(tensor|memref)<((?:\?|\d+)(?:x(?:\?|\d+))*)x([A-Za-z0-9]+)")
_CONST_RE = re.compile(r"^(%[\w]+)\s*=\s*arith\.constant\s+(-?\d+)\s*:\s*(?:i\d+|index)")
_FOR_RE = re.compile(r"scf\.for\s+%\w+\s*=\s*(%?[\w-]+)\s+to\s+(%?[\w-]+)\s+step\s+(%?[\w-]+)")


def parse_types(text: str) -> tuple[ShapedType, ...]:
    out = []
    for kind, dims, dtype in _SHAPED_RE.findall(text):
        shape = tuple(None if d == "?" else int(d) for d in dims.split("x"))
        out.append(ShapedType(kind, shape, dtype))
    return tuple(out)


def parse_ttadapter(text: str, path: str | None = None) -> AdapterModule:
    """Parse ttadapter text; locations count when they name `path` (or, with None, any file)."""
    module = parse_mlir(text)
    raw_lines = text.splitlines()
    is_user = UserFiles([path]) if path else None
    constants: dict[str, int] = {}
    closing = _region_ends(raw_lines)  # region op ir_line -> (closing ir_line, closing text)
    scalar_loop_lines = {
        n
        for n, (_, close) in closing.items()
        if "ExtractedLoadOrStore" in close and _is_for(raw_lines[n - 1])
    }
    ops: list[AdapterOp] = []
    for mop in module.ops:
        c = _CONST_RE.match(mop.text.strip())
        if c:
            constants[c.group(1)] = int(c.group(2))
        ops.append(_adapter_op(mop, raw_lines, closing, scalar_loop_lines, is_user))
    scalar_loops = []
    for op in ops:
        if op.ir_line in scalar_loop_lines:
            end = op.end_ir_line or op.ir_line
            body = [o for o in ops if op.ir_line < o.ir_line < end]
            scalar_loops.append(ScalarLoop(op, _trip_count(op.text, constants), body))
    attrs = next((raw for raw in raw_lines if raw.strip().startswith("func.func")), "")
    kernel = next(iter(module.funcs), None)
    mix = re.search(r'mix_mode\s*=\s*"([^"]+)"', attrs)
    par = re.search(r'parallel_mode\s*=\s*"([^"]+)"', attrs)
    files = tuple(sorted({f.file for o in module.ops for f in o.loc.frames}))
    result = AdapterModule(
        text=text,
        kernel=kernel,
        mix_mode=mix.group(1) if mix else None,
        parallel_mode=par.group(1) if par else None,
        ops=ops,
        scalar_loops=scalar_loops,
        buffers=[],
        lines={},
        constants=constants,
        files=files,
    )
    result.buffers = buffers_of(ops)
    result.lines = _line_stats(result)
    return result


def _adapter_op(
    mop: MlirOp,
    raw_lines: list[str],
    closing: dict[int, tuple[int, str]],
    scalar_loop_lines: set[int],
    is_user: UserFiles | None,
) -> AdapterOp:
    frame = mop.loc.user_frame(is_user) if is_user else (mop.loc.frames[0] if mop.loc.frames else None)
    end, close_text = closing.get(mop.ir_line, (None, ""))
    body = mop.text.strip()
    head = body.split("=", 1)[1] if re.match(r"^%[^=]*=", body) else body
    return AdapterOp(
        ir_line=mop.ir_line,
        name=mop.name,
        text=body,
        results=tuple("%" + r for r in mop.results),
        operands=tuple("%" + o for o in mop.operands),
        types=parse_types(head),
        line=frame.line if frame else None,
        col=frame.col if frame else None,
        markers=_markers(raw_lines[mop.ir_line - 1]) | _markers(close_text),
        loop_depth=len(mop.loops),
        in_scalar_loop=any(n in scalar_loop_lines for n in mop.loops),
        end_ir_line=end,
    )


def _markers(line: str) -> frozenset[str]:
    return frozenset(m for m in MARKERS if re.search(r"\b" + re.escape(m) + r"\b", line))


def _is_for(line: str) -> bool:
    return "scf.for" in line.split("{", 1)[0] or bool(re.search(r"=\s*scf\.for\b", line))


def _region_ends(raw_lines: list[str]) -> dict[int, tuple[int, str]]:
    """For each line that opens a region, the line (1-based) and text of the brace that closes it.

    One pass with a stack; attribute dictionaries (`{DiscreteMemAccess}`) balance within their line.
    """
    ends: dict[int, tuple[int, str]] = {}
    stack: list[int] = []
    for number, raw in enumerate(raw_lines, start=1):
        text = _STRING_RE.sub("", raw).strip()
        net = text.count("{") - text.count("}")
        if text.startswith("}"):
            if stack:
                ends[stack.pop()] = (number, raw.strip())
            net += 1  # that brace is accounted for; "} else {" then opens the next region
        for _ in range(max(0, net)):
            stack.append(number)
    return ends


def _trip_count(text: str, constants: dict[str, int]) -> int | None:
    m = _FOR_RE.search(text)
    if not m:
        return None
    bounds = []
    for token in m.groups():
        if token.startswith("%"):
            if token not in constants:
                return None
            bounds.append(constants[token])
        else:
            try:
                bounds.append(int(token))
            except ValueError:
                return None
    lo, hi, step = bounds
    return max(0, -(-(hi - lo) // step)) if step > 0 else None


def _line_stats(module: AdapterModule) -> dict[int, AdapterLineStats]:
    stats: dict[int, AdapterLineStats] = {}

    def at(line: int | None) -> AdapterLineStats | None:
        if line is None:
            return None
        return stats.setdefault(line, AdapterLineStats())

    for op in module.ops:
        s = at(op.line)
        if s is None:
            continue
        s.ops += 1
        s.ir_lines.append(op.ir_line)
        if op.is_cube:
            s.cube_ops += 1
        elif op.is_vector:
            s.vector_ops += 1
            dtype = op.element_type
            if dtype:
                s.vector_dtypes[dtype] = s.vector_dtypes.get(dtype, 0) + 1
        elif op.is_scalar_compute or op.name in (
            "memref.load",
            "memref.store",
            "tensor.extract",
            "tensor.insert",
        ):
            s.scalar_ops += 1
        if op.in_scalar_loop or "DiscreteMemAccess" in op.markers:
            s.discrete_ops += 1
        if op.name in CAST_OPS and op.on_tensors and len(op.types) >= 2:
            s.casts.append(f"{op.types[0].dtype}->{op.types[-1].dtype}")
        if op.name in COMPARE_OPS and op.on_tensors and op.element_type:
            s.compares[op.element_type] = s.compares.get(op.element_type, 0) + 1
        if op.name == "linalg.fill" and any(t.kind == "memref" for t in op.types):
            s.pad_fills += 1
    for loop in module.scalar_loops:
        s = at(loop.op.line)
        if s is not None:
            s.scalar_loops += 1
    for buf in module.buffers:
        s = at(buf.op.line)
        if s is not None:
            s.buffers += 1
            s.buffer_bytes += buf.type.bytes or 0
    return stats
