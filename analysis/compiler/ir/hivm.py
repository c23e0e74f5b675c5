"""Parse what BiSheng's pipeline (`bishengir-compile`) decided: its log, pass dumps and final HIVM module.

Inputs are the texts the Ascend worker stores (ascend_runner/worker/compile_hivm.py):
- `hivm.log`: the compiler's diagnostic lines (`[NOTE] Ub overflow detected; ... retrying compilation.`,
  `loc("k.py":8:0): error: ub overflow, requires N bits while M bits available! ...`, `Cannot find hivmc`);
- `hivm.<pass>`: `--mlir-print-ir-after=<pass>` dumps (`// -----// IR Dump After PlanMemory (hivm-plan-memory)`),
  one per function and pass run, with locations;
- `hivm`: the final module handed to hivmc (`--save-temps`), with the target's `UB_SIZE` in bits.

Pure functions over text; locations resolve through `mlir_loc`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .mlir import MlirModule, parse_mlir
from .mlir_loc import UserFiles, source_line_of

DUMP_HEADER_RE = re.compile(
    r"^// -----// IR Dump (After|Before) (\w+)( Failed)? \(([\w-]+)\) //----- //$", re.M
)
_DIAG_RE = re.compile(
    r'^loc\((?:"(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)|[^)]*)\): (?P<sev>error|warning|note): (?P<msg>.*)$'
)
_OVERFLOW_RE = re.compile(r"ub overflow, requires (\d+) bits while (\d+) bits available")
_UB_SIZE_RE = re.compile(r'"UB_SIZE",\s*(\d+)\s*:\s*i\d+')
_CONST_RE = re.compile(r"%([\w]+)\s*=\s*arith\.constant\s+(-?\d+)\s*:\s*(?:i\d+|index)")
_POINTER_CAST_RE = re.compile(
    r"%([\w]+)\s*=\s*hivm\.hir\.pointer_cast\(([^)]*)\)\s*(?:\[[^\]]*\])?\s*:\s*memref<([^>]*)>"
)
_ALLOC_RE = re.compile(r"%([\w]+)\s*=\s*memref\.alloc\([^)]*\)\s*(?:\{[^}]*\})?\s*:\s*memref<([^>]*)>")
_MULTI_BUFFER_RE = re.compile(r"annotation\.mark\s+%([\w]+)\s*\{hivm\.multi_buffer\s*=\s*(\d+)")
_CORE_TYPE_RE = re.compile(r"hivm\.(module|func)_core_type\s*=\s*#hivm\.\w+_core_type<(\w+)>")
ELEMENT_BITS = {
    "f64": 64, "i64": 64, "f32": 32, "i32": 32, "f16": 16, "bf16": 16, "i16": 16, "i8": 8, "i1": 8,
    "f8E4M3FN": 8, "f8E5M2": 8, "index": 64,
}  # fmt: skip
SYNC_OPS = (
    "hivm.hir.set_flag",
    "hivm.hir.wait_flag",
    "hivm.hir.pipe_barrier",
    "hivm.hir.sync_block_set",
    "hivm.hir.sync_block_wait",
    "hivm.hir.sync_block",
)
SCALAR_OPS = ("tensor.extract", "memref.load", "memref.store", "tensor.insert")


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error" | "warning" | "note"
    message: str
    file: str | None
    line: int | None
    col: int | None


@dataclass(frozen=True)
class UbOverflow:
    required_bits: int
    available_bits: int
    line: int | None  # where the compiler located it (the kernel's `def` for a whole-function failure)
    message: str


@dataclass
class BishengLog:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    retries: list[str] = field(default_factory=list)  # the compiler's [NOTE] lines about what it retried
    notes: list[str] = field(default_factory=list)  # every [NOTE]/[WARNING] line
    overflow: UbOverflow | None = None
    hivmc_missing: bool = False  # the pipeline reached the external hivmc step (not available without CANN)

    @property
    def errors(self) -> list[Diagnostic]:
        """The pipeline's own errors (a missing hivmc and the generic summary excluded)."""
        return [
            d
            for d in self.diagnostics
            if d.severity == "error"
            and "External hivmc run fails" not in d.message
            and not d.message.startswith("Failed to run BiSheng")
        ]


def parse_log(text: str) -> BishengLog:
    out = BishengLog()
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        if re.search(r"Cannot find hivmc(-a5)? under", line):
            out.hivmc_missing = True
        if line.startswith("[NOTE]") or line.startswith("[WARNING]"):
            out.notes.append(line)
            if "overflow" in line.lower() and "automatically set" in line:
                out.retries.append(line.removeprefix("[NOTE]").strip())
            continue
        m = _DIAG_RE.match(line)
        if not m:
            continue
        diag = Diagnostic(
            m.group("sev"),
            m.group("msg").strip(),
            m.group("file"),
            int(m.group("line")) if m.group("line") else None,
            int(m.group("col")) if m.group("col") else None,
        )
        out.diagnostics.append(diag)
        over = _OVERFLOW_RE.search(diag.message)
        if over and out.overflow is None:
            out.overflow = UbOverflow(int(over.group(1)), int(over.group(2)), diag.line, diag.message)
    return out


@dataclass(frozen=True)
class PassDump:
    pass_name: str  # "PlanMemory"
    pass_arg: str  # "hivm-plan-memory"
    failed: bool  # "IR Dump After PlanMemory Failed": the IR the pass gave up on
    before: bool
    first_line: int  # 1-based line of the header in the stage text
    last_line: int
    func: str | None


def split_dumps(text: str) -> list[PassDump]:
    """The pass dumps in a `hivm.<pass>` stage text, in order, with their line ranges."""
    heads = list(DUMP_HEADER_RE.finditer(text or ""))
    out: list[PassDump] = []
    for i, m in enumerate(heads):
        start = text.count("\n", 0, m.start()) + 1
        end_offset = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        end = text.count("\n", 0, end_offset) + (0 if i + 1 < len(heads) else 1)
        func = re.search(r"func\.func\s+(?:private\s+)?@([\w.$-]+)", text[m.end() : end_offset])
        out.append(
            PassDump(
                m.group(2),
                m.group(4),
                bool(m.group(3)),
                m.group(1) == "Before",
                start,
                end,
                func.group(1) if func else None,
            )  # fmt: skip
        )
    return out


def memref_bytes(memref: str) -> int | None:
    """Bytes of a static memref type body (`128x256xf32, #hivm.address_space<ub>`); None when dynamic."""
    shape = memref.split(",", 1)[0].strip()
    parts = shape.split("x")
    bits = ELEMENT_BITS.get(parts[-1])
    if bits is None or any(not p.isdigit() for p in parts[:-1]):
        return None
    n = 1
    for p in parts[:-1]:
        n *= int(p)
    return n * bits // 8


@dataclass(frozen=True)
class UbBuffer:
    name: str
    ir_line: int  # in the stage text
    line: int | None  # source line
    type: str  # "2048xf32"
    bytes: int | None
    offsets: tuple[int, ...] = ()  # byte offsets PlanMemory gave it: more than one = multibuffered

    @property
    def copies(self) -> int:
        return max(1, len(self.offsets))


@dataclass
class UbPlan:
    """The Unified Buffer layout PlanMemory chose for one function (or, when it failed, what it had to place)."""

    func: str | None
    failed: bool
    buffers: list[UbBuffer]
    first_line: int  # header line of the dump in the stage text

    @property
    def used_bytes(self) -> int:
        """Bytes of UB the plan spans (highest end of any buffer copy); for a failed plan the sum requested."""
        if self.failed:
            return sum((b.bytes or 0) for b in self.buffers)
        return max((off + (b.bytes or 0) for b in self.buffers for off in b.offsets), default=0)


def _ub_buffers(lines: list[str], base: int, module: MlirModule | None, is_user: UserFiles) -> list[UbBuffer]:
    consts: dict[str, int] = {}
    for text in lines:
        for m in _CONST_RE.finditer(text):
            consts[m.group(1)] = int(m.group(2))
    locs = {op.ir_line: op.loc for op in module.ops} if module is not None else {}
    out: list[UbBuffer] = []
    for i, text in enumerate(lines):
        if "address_space<ub>" not in text:
            continue
        ir_line = base + i
        loc = locs.get(ir_line)
        src = source_line_of(loc, is_user) if loc is not None else None
        m = _POINTER_CAST_RE.search(text)
        if m:
            offs = tuple(
                consts[a.strip().lstrip("%")]
                for a in m.group(2).split(",")
                if a.strip().lstrip("%") in consts
            )
            body = m.group(3)
            out.append(UbBuffer(m.group(1), ir_line, src, body.split(",", 1)[0], memref_bytes(body), offs))
            continue
        m = _ALLOC_RE.search(text)
        if m:
            body = m.group(2)
            out.append(UbBuffer(m.group(1), ir_line, src, body.split(",", 1)[0], memref_bytes(body)))
    return out


def ub_plans(text: str, is_user: UserFiles) -> list[UbPlan]:
    """Per function, the last PlanMemory dump that placed UB buffers (a failed plan wins: it is the last)."""
    if not text:
        return []
    module = parse_mlir(text)
    lines = text.splitlines()
    by_func: dict[str | None, UbPlan] = {}
    for dump in split_dumps(text):
        if dump.pass_arg != "hivm-plan-memory" or dump.before:
            continue
        body = lines[dump.first_line : dump.last_line]
        buffers = _ub_buffers(body, dump.first_line + 1, module, is_user)
        if buffers:
            by_func[dump.func] = UbPlan(dump.func, dump.failed, buffers, dump.first_line)
    return list(by_func.values())


def ub_capacity_bits(hivm_module: str) -> int | None:
    """The target's UB size in bits, as the compiler's target spec in the final module states it."""
    m = _UB_SIZE_RE.search(hivm_module or "")
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class IrSite:
    op: str
    ir_line: int
    line: int | None
    text: str
    func: str | None = None


def _sites(text: str, names: tuple[str, ...], is_user: UserFiles) -> list[IrSite]:
    if not text:
        return []
    module = parse_mlir(text)
    return [
        IrSite(op.name, op.ir_line, source_line_of(op.loc, is_user), op.text.strip(), op.func)
        for op in module.ops
        if op.name in names
    ]


def sync_sites(hivm_module: str, is_user: UserFiles) -> list[IrSite]:
    """Synchronization the pipeline inserted (flags between pipes, barriers, cross-core block syncs)."""
    return _sites(hivm_module, SYNC_OPS, is_user)


def scalar_sites(scalar_dump: str, is_user: UserFiles) -> list[IrSite]:
    """Scalar accesses left after InsertLoadStoreForScalar: elements moved between tiles and the scalar unit
    (`tensor.extract`/`tensor.insert`) and single-element global memory accesses (`memref.load/store`).
    Only the last dump of each function counts (one dump per function and run)."""
    if not scalar_dump:
        return []
    dumps = [d for d in split_dumps(scalar_dump) if not d.before]
    last: dict[str | None, PassDump] = {d.func: d for d in dumps}
    keep = [(d.first_line, d.last_line) for d in last.values()]
    return [s for s in _sites(scalar_dump, SCALAR_OPS, is_user) if any(a <= s.ir_line <= b for a, b in keep)]


def multibuffer_marks(dump: str, is_user: UserFiles) -> list[tuple[str, int, int | None, int]]:
    """(buffer, factor, source line, ir line) for each `hivm.multi_buffer = N` MarkMultiBuffer placed
    (last dump per function)."""
    if not dump:
        return []
    module = parse_mlir(dump)
    locs = {op.ir_line: op.loc for op in module.ops}
    dumps = [d for d in split_dumps(dump) if not d.before]
    last = {d.func: d for d in dumps}
    out: list[tuple[str, int, int | None, int]] = []
    lines = dump.splitlines()
    for d in last.values():
        for n in range(d.first_line + 1, d.last_line + 1):
            m = _MULTI_BUFFER_RE.search(lines[n - 1]) if n - 1 < len(lines) else None
            if m:
                loc = locs.get(n)
                out.append((m.group(1), int(m.group(2)), source_line_of(loc, is_user) if loc else None, n))
    return out


def core_types(hivm_text: str) -> dict[str, str]:
    """ "module" -> AIV|AIC|MIX and each function -> its core type, as the final module states them."""
    out: dict[str, str] = {}
    for line in (hivm_text or "").splitlines():
        for m in _CORE_TYPE_RE.finditer(line):
            if m.group(1) == "module":
                out.setdefault("module", m.group(2))
            else:
                f = re.search(r"func\.func\s+(?:private\s+)?@([\w.$-]+)", line)
                if f and "func.func private" not in line:  # private ones are library declarations
                    out[f.group(1)] = m.group(2)
    return out


@dataclass(frozen=True)
class ScalarLoop:
    """An element-by-element loop over UB data in the final HIVM module: a tile op BiSheng could not give the
    vector unit (e.g. int64 arithmetic) was lowered to scalar `memref.load` / compute / `memref.store`."""

    ir_line: int
    line: int | None  # source line of the computation inside
    trip_count: int | None
    ops: tuple[str, ...]  # compute ops in the body, e.g. ("arith.muli",)
    dtypes: tuple[str, ...]  # element types of the UB buffers it walks


_FOR_BOUND_RE = re.compile(r"scf\.for\s+%[\w]+\s*=\s*%(\w+)\s+to\s+%(\w+)\s+step\s+%(\w+)")
_UB_DTYPE_RE = re.compile(r"memref<[\dx?]*x(\w+)(?:,[^>]*)?,\s*#hivm\.address_space<ub>>")


def ub_scalar_loops(hivm_module: str, is_user: UserFiles) -> list[ScalarLoop]:
    if not hivm_module:
        return []
    module = parse_mlir(hivm_module)
    consts: dict[str, int] = {m.group(1): int(m.group(2)) for m in _CONST_RE.finditer(hivm_module)}
    loops = {op.ir_line: op for op in module.ops if op.name == "scf.for"}
    bodies: dict[int, list] = {}
    for op in module.ops:
        if op.loops and op.loops[-1] in loops:
            bodies.setdefault(op.loops[-1], []).append(op)
    out: list[ScalarLoop] = []
    for ir_line, body in sorted(bodies.items()):
        accesses = [
            o for o in body if o.name in ("memref.load", "memref.store") and "address_space<ub>" in o.text
        ]
        if not accesses:
            continue
        compute = [o for o in body if o.name.startswith(("arith.", "math.")) and o.name != "arith.constant"]
        lines = [source_line_of(o.loc, is_user) for o in (*compute, *accesses)]
        line = next((n for n in lines if n is not None), None)
        bound = _FOR_BOUND_RE.search(loops[ir_line].text)
        trip = None
        if bound and all(g in consts for g in bound.groups()):
            lo, hi, step = (consts[g] for g in bound.groups())
            trip = (hi - lo) // step if step > 0 else None
        dtypes = sorted({m.group(1) for o in accesses for m in _UB_DTYPE_RE.finditer(o.text)})
        out.append(ScalarLoop(ir_line, line, trip, tuple(sorted({o.name for o in compute})), tuple(dtypes)))
    return out
