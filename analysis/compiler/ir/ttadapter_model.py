"""triton-ascend's ttadapter (linalg) as a model: shaped types, ops with their markers and loops, scalar loops,
buffers and per-line statistics (`AdapterModule`), with the op tables the checks use."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
_TRAILING_LOC_RE = re.compile(r"\s+loc\((#loc\d*|.*)\)\s*$")
VALUE_RE = re.compile(r"%[\w#]+")


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


def strip_trailing_loc(line: str) -> str:
    return _TRAILING_LOC_RE.sub("", line.rstrip())
