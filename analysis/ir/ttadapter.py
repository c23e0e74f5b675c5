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
from dataclasses import dataclass, field

from .mlir_loc import MlirOp, UserFiles, parse_mlir

# Bytes per element of the MLIR element types that appear in ttadapter.
ELEMENT_BYTES = {
    "i1": 1,
    "i8": 1,
    "i16": 2,
    "i32": 4,
    "i64": 8,
    "index": 8,
    "f16": 2,
    "bf16": 2,
    "f32": 4,
    "f64": 8,
    "f8E4M3FN": 1,
    "f8E5M2": 1,
}
CUBE_OPS = ("linalg.matmul", "linalg.batch_matmul", "linalg.matmul_transpose_a", "linalg.matmul_transpose_b")
CAST_OPS = (
    "arith.extf",
    "arith.truncf",
    "arith.sitofp",
    "arith.uitofp",
    "arith.fptosi",
    "arith.fptoui",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.bitcast",
    "arith.index_cast",
)
COMPARE_OPS = ("arith.cmpi", "arith.cmpf")
# Ops that only rename or view a buffer: they produce no new on-chip storage.
VIEW_OPS = (
    "bufferization.to_tensor",
    "memref.subview",
    "memref.reinterpret_cast",
    "tensor.extract_slice",
    "memref.cast",
    "tensor.cast",
    "tensor.expand_shape",
    "tensor.collapse_shape",
    "memref.expand_shape",
    "memref.collapse_shape",
)
MARKERS = ("DiscreteMemAccess", "ExtractedLoadOrStore", "hivm.unlikely_condition")

_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')
_TRAILING_LOC_RE = re.compile(r"\s+loc\((#loc\d*|.*)\)\s*$")
_SHAPED_RE = re.compile(r"\b(tensor|memref)<((?:\?|\d+)(?:x(?:\?|\d+))*)x([A-Za-z0-9]+)")
_VALUE_RE = re.compile(r"%[\w#]+")
_CONST_RE = re.compile(r"^(%[\w]+)\s*=\s*arith\.constant\s+(-?\d+)\s*:\s*(?:i\d+|index)")
_FOR_RE = re.compile(r"scf\.for\s+%\w+\s*=\s*(%?[\w-]+)\s+to\s+(%?[\w-]+)\s+step\s+(%?[\w-]+)")


@dataclass(frozen=True)
class ShapedType:
    kind: str  # "tensor" | "memref"
    shape: tuple[int | None, ...]  # None for a dynamic dimension
    dtype: str

    @property
    def static(self) -> bool:
        return all(d is not None for d in self.shape)

    @property
    def numel(self) -> int | None:
        if not self.static:
            return None
        n = 1
        for d in self.shape:
            n *= d or 0
        return n

    @property
    def bytes(self) -> int | None:
        n = self.numel
        width = ELEMENT_BYTES.get(self.dtype)
        return None if n is None or width is None else n * width

    @property
    def tail_bytes(self) -> int | None:
        width = ELEMENT_BYTES.get(self.dtype)
        last = self.shape[-1] if self.shape else None
        return None if last is None or width is None else last * width

    def __str__(self) -> str:
        dims = "x".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.kind}<{dims}x{self.dtype}>"


@dataclass
class AdapterOp:
    ir_line: int  # 1-based line in the ttadapter text
    name: str  # "arith.addf", "linalg.matmul", "scf.for", ...
    text: str  # the IR line without its location
    results: tuple[str, ...]
    operands: tuple[str, ...]
    types: tuple[ShapedType, ...]  # shaped types written on the line, in order
    line: int | None = None  # source line (1-based) from the op's loc
    col: int | None = None
    markers: frozenset[str] = frozenset()
    loop_depth: int = 0  # scf.for nesting around the op
    in_scalar_loop: bool = False  # inside an scf.for tagged ExtractedLoadOrStore
    end_ir_line: int | None = None  # for region ops: the line of the closing brace

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def on_tensors(self) -> bool:
        return any(t.kind == "tensor" and t.shape for t in self.types)

    @property
    def is_cube(self) -> bool:
        return self.name in CUBE_OPS

    @property
    def is_vector(self) -> bool:
        """Tile math the vector unit runs (not a view, not a copy, not cube)."""
        if self.is_cube or self.name in VIEW_OPS or self.in_scalar_loop:
            return False
        if self.dialect in ("arith", "math", "hfusion", "hivm"):
            return self.on_tensors
        return self.name.startswith("linalg.") and self.name != "linalg.index"

    @property
    def is_scalar_compute(self) -> bool:
        return self.dialect in ("arith", "math") and not self.on_tensors and self.name != "arith.constant"

    @property
    def element_type(self) -> str | None:
        """The element type the op computes on: the last shaped type, e.g. `: tensor<1024xi64>`."""
        return self.types[-1].dtype if self.types else None


@dataclass
class ScalarLoop:
    """An scf.for the adapter emitted to replace a vector access it could not keep contiguous."""

    op: AdapterOp
    trip_count: int | None
    body: list[AdapterOp] = field(default_factory=list)

    @property
    def loads(self) -> int:
        return sum(1 for o in self.body if o.name in ("memref.load", "tensor.extract"))

    @property
    def stores(self) -> int:
        return sum(1 for o in self.body if o.name in ("memref.store",))


@dataclass
class Buffer:
    """An on-chip buffer the adapter allocates: a staged load (memref.alloc) or a tensor temporary."""

    op: AdapterOp
    type: ShapedType
    name: str
    last_use: int  # ir line of the last use (through views and to_tensor aliases)
    in_loop: bool
    feeds_cube: bool = False  # staged for linalg.matmul: goes to L1/L0, not UB
    from_copy: bool = False  # filled by memref.copy from global memory (an MTE2 load)


@dataclass
class AdapterLineStats:
    """What the ttadapter stage did for one source line."""

    ops: int = 0
    vector_ops: int = 0
    scalar_ops: int = 0
    cube_ops: int = 0
    discrete_ops: int = 0  # ops tagged DiscreteMemAccess or inside a scalarized loop
    scalar_loops: int = 0
    buffers: int = 0
    buffer_bytes: int = 0
    casts: list[str] = field(default_factory=list)  # "f32->f16"
    compares: dict[str, int] = field(default_factory=dict)  # element type -> count, tensor compares only
    vector_dtypes: dict[str, int] = field(default_factory=dict)  # element type -> vector op count
    pad_fills: int = 0  # masked loads: fill of the whole buffer before the partial copy
    ir_lines: list[int] = field(default_factory=list)


@dataclass
class AdapterModule:
    text: str
    kernel: str | None
    mix_mode: str | None  # "aiv" (vector only), "aic" (cube only), "mix"
    parallel_mode: str | None
    ops: list[AdapterOp]
    scalar_loops: list[ScalarLoop]
    buffers: list[Buffer]
    lines: dict[int, AdapterLineStats]
    constants: dict[str, int]
    files: tuple[str, ...]  # source files the locations name

    def ops_on(self, line: int) -> list[AdapterOp]:
        return [o for o in self.ops if o.line == line]

    def excerpt(self, ir_lines: list[int] | tuple[int, ...], limit: int = 8) -> str:
        """The IR text of some lines (locations stripped), capped to keep hovers short."""
        src = self.text.splitlines()
        picked = sorted(set(ir_lines))[:limit]
        rows = [strip_trailing_loc(src[i - 1]).strip() for i in picked if 0 < i <= len(src)]
        if len(set(ir_lines)) > limit:
            rows.append(f"... ({len(set(ir_lines)) - limit} more lines)")
        return "\n".join(rows)


def parse_types(text: str) -> tuple[ShapedType, ...]:
    out = []
    for kind, dims, dtype in _SHAPED_RE.findall(text):
        shape = tuple(None if d == "?" else int(d) for d in dims.split("x"))
        out.append(ShapedType(kind, shape, dtype))
    return tuple(out)


def strip_trailing_loc(line: str) -> str:
    return _TRAILING_LOC_RE.sub("", line.rstrip())


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
    result.buffers = _buffers(ops)
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


def _buffers(ops: list[AdapterOp]) -> list[Buffer]:
    """On-chip buffers: staged loads (memref.alloc) and tensor temporaries, with textual liveness."""
    # Values that share storage with an earlier one (to_tensor of an alloc, destination-passing outs).
    alias: dict[str, str] = {}
    for op in ops:
        if not op.results:
            continue
        if op.name in VIEW_OPS and op.operands:
            alias[op.results[0]] = alias.get(op.operands[0], op.operands[0])
        elif " outs(" in op.text:
            outs = _VALUE_RE.findall(op.text.split(" outs(", 1)[1])
            if outs:
                alias[op.results[0]] = alias.get(outs[0], outs[0])
        elif op.name == "scf.for" and "iter_args(" in op.text:
            # Loop results and the region's carried block arguments share the init value's storage.
            pairs = re.findall(r"(%[\w#]+)\s*=\s*(%[\w#]+)", op.text.split("iter_args(", 1)[1])
            for (carried, init), res in zip(pairs, op.results, strict=False):
                alias[res] = alias.get(init, init)
                alias[carried] = alias.get(init, init)

    def root(v: str) -> str:
        seen = 0
        while v in alias and seen < 64:
            v, seen = alias[v], seen + 1
        return v

    last_use: dict[str, int] = {}
    cube_fed: set[str] = set()
    copied: set[str] = set()
    for op in ops:
        end = op.end_ir_line or op.ir_line
        for v in op.operands:
            r = root(v)
            last_use[r] = max(last_use.get(r, 0), end)
        if op.is_cube:
            # Operands are staged in L1/L0A/L0B and the accumulator lives in L0C: none of them is UB.
            for v in op.operands:
                cube_fed.add(root(v))
        if op.name == "memref.copy" and len(op.operands) >= 2:
            copied.add(root(op.operands[1]))
    out: list[Buffer] = []
    for op in ops:
        if not op.results or op.in_scalar_loop:
            continue
        name = op.results[0]
        if root(name) != name:
            continue  # shares storage with an earlier buffer
        if op.name == "memref.alloc" or op.name == "tensor.empty":
            kind_ok = True
        else:
            kind_ok = op.is_vector and op.name not in ("linalg.fill",)
        if not kind_ok or not op.types:
            continue
        result_type = op.types[-1]
        if result_type.bytes is None:
            continue
        out.append(
            Buffer(
                op=op,
                type=result_type,
                name=name,
                last_use=max(last_use.get(name, op.ir_line), op.ir_line),
                in_loop=op.loop_depth > 0,
                feeds_cube=name in cube_fed,
                from_copy=name in copied,
            )
        )
    return out


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


def peak_live_bytes(buffers: list[Buffer], multibuffer: bool = True) -> tuple[int, int | None]:
    """Largest sum of simultaneously live UB buffers, and the IR line where it peaks.

    Staged loads inside a loop count twice when multibuffer is on: bishengir double-buffers them so the next
    iteration's copy overlaps this iteration's compute. Cube operands (L1) are left out.
    """
    ub = [b for b in buffers if not b.feeds_cube]
    points = sorted({b.op.ir_line for b in ub})
    best, where = 0, None
    for p in points:
        total = 0
        for b in ub:
            if b.op.ir_line <= p <= b.last_use:
                factor = 2 if multibuffer and b.in_loop and b.from_copy else 1
                total += (b.type.bytes or 0) * factor
        if total > best:
            best, where = total, p
    return best, where
