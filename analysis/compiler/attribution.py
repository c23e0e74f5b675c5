"""Per source line of the user's file: which IR ops and machine instructions it became, counted by class.

Every stage is attributed through its own line info (MLIR locs, PTX .loc, LLVM !dbg, SASS line comments).
Code inlined from triton/language/*.py is charged to the user's call site through call-site locations; SASS
line comments often lack the inlining chain, so a library line there is mapped to the user line(s) that the
PTX says called it (the nearest one seen before it in program order when several did).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..source.lines import source_lines
from .ir.mlir import MlirModule
from .ir.mlir_loc import LocChain, UserFiles
from .stages import stage_names
from .stages import stages as platform_stages


@dataclass
class LineStats:
    line: int
    classes: dict[str, Counter[str]] = field(default_factory=dict)  # stage -> op/instruction class -> count
    ir_lines: dict[str, list[int]] = field(default_factory=dict)  # stage -> IR lines attributed here
    global_load_bits: list[int] = field(default_factory=list)  # per PTX ld.global, bits per thread
    global_store_bits: list[int] = field(default_factory=list)

    def count(self, stage: str, cls: str) -> int:
        return self.classes.get(stage, Counter()).get(cls, 0)

    def add(self, stage: str, cls: str | None, ir_line: int) -> None:
        self.ir_lines.setdefault(stage, []).append(ir_line)
        if cls:
            self.classes.setdefault(stage, Counter())[cls] += 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "classes": {s: dict(c) for s, c in self.classes.items()},
            "global_load_bits": sorted(set(self.global_load_bits)),
            "global_store_bits": sorted(set(self.global_store_bits)),
        }


# --- classification, one function per stage -------------------------------------------------------------


def mlir_class(name: str, text: str) -> str | None:
    if name == "tt.load":
        return "global_load"
    if name == "tt.store":
        return "global_store"
    if name in (
        "tt.descriptor_load",
        "ttng.async_tma_copy_global_to_local",
        "tt.experimental_descriptor_load",
    ):
        return "tma"
    if name == "ttg.async_copy_global_to_local":
        return "async_copy"
    if name == "ttg.convert_layout":
        return "layout_convert"
    if name == "ttg.local_load":
        return "shared_load"
    if name in ("ttg.local_store",) or (
        name == "ttg.local_alloc" and "%" in text.partition("local_alloc")[2]
    ):
        return "shared_store"
    if name == "ttng.warp_group_dot":
        return "wgmma"
    if name in ("ttng.tc_gen5_mma",):
        return "tcgen05"
    if name == "tt.dot":
        return "mma" if "#mma" in text.rsplit("->", 1)[-1] else "fma_dot"
    if name == "tt.reduce":
        return "reduce"
    if name in ("scf.for", "scf.while"):
        return "loop"
    if name in ("tt.trans", "ttg.memdesc_trans"):
        return "transpose"
    if name.startswith("arith.") and "i64" in text.rsplit(":", 1)[-1] and "tensor<" in text:
        return "int64"
    return None


def ptx_class(opcode: str) -> str | None:
    parts = opcode.split(".")
    head = parts[0]
    space = parts[1] if len(parts) > 1 else ""
    if head in ("ld", "ldu"):
        return {"global": "global_load", "shared": "shared_load", "local": "local_load"}.get(space)
    if head == "st":
        return {"global": "global_store", "shared": "shared_store", "local": "local_store"}.get(space)
    if head == "ldmatrix":
        return "shared_load"
    if head == "stmatrix":
        return "shared_store"
    if head == "cp":
        if space == "async" and len(parts) > 2 and parts[2] == "bulk":
            return "tma"
        if space == "async" and len(parts) > 2 and parts[2] in ("ca", "cg"):
            return "async_copy"
        return None
    if head in ("bar", "barrier"):
        return "barrier"
    if head == "wgmma" and space == "mma_async":
        return "wgmma"
    if head == "mma":
        return "mma"
    if head == "tcgen05" and space == "mma":
        return "tcgen05"
    if head == "fma" and opcode.endswith("f32"):
        return "fma"
    if head in ("div", "sqrt") and opcode.endswith("f64"):
        return f"{head}_f64"  # IEEE-rounded always: fp64 has no approximate path to prefer
    if head == "div":
        return "div_precise" if space == "rn" else "div_fast"
    if head == "sqrt":
        return "sqrt_precise" if space == "rn" else "sqrt_fast"
    if head in ("ex2", "lg2", "sin", "cos", "rsqrt", "rcp", "tanh"):
        return "sfu"
    if head == "shfl":
        return "shuffle"
    if head in ("mul", "mad") and space == "wide":
        return "int64"
    if head == "call":
        return "call"
    return None


def cp_async_bits(text: str) -> int | None:
    """cp.async.cg.shared.global [dst], [src], 0x10, ... -> 128 (the copy size is in bytes)."""
    parts = text.split("]")
    if len(parts) < 3:
        return None
    size = parts[2].lstrip(" ,").split(",")[0].strip()
    try:
        return int(size, 0) * 8
    except ValueError:
        return None


def sass_class(opcode: str) -> str | None:
    base = opcode.split(".", 1)[0]
    if base.startswith("UTC") and "MMA" in base:
        return "tcgen05"  # Blackwell tensor-core MMA (UTCHMMA, UTCQMMA, ...)
    return {
        "LDG": "global_load",
        "STG": "global_store",
        "LDS": "shared_load",
        "LDSM": "shared_load",
        "STS": "shared_store",
        "STSM": "shared_store",
        "LDGSTS": "async_copy",
        "UTMALDG": "tma",
        "UBLKCP": "tma",
        "BAR": "barrier",
        "HMMA": "mma",
        "HGMMA": "wgmma",
        "FFMA": "fma",
        "LDL": "local_load",
        "STL": "local_store",
        "MUFU": "sfu",
        "SHFL": "shuffle",
        "CALL": "call",
    }.get(base)


def sass_vector_bits(opcode: str) -> int:
    parts = opcode.split(".")
    for p in parts[1:]:
        if p.isdigit():
            return int(p)
        if p in ("U8", "S8"):
            return 8
        if p in ("U16", "S16"):
            return 16
    return 32


def llir_class(opcode: str) -> str | None:
    if opcode.startswith("call @llvm.nvvm.barrier") or opcode.startswith("call @llvm.nvvm.bar"):
        return "barrier"
    if opcode.startswith("call @__nv_"):
        return "libdevice"
    if opcode in ("load", "store"):
        return opcode
    return None


# --- attribution ------------------------------------------------------------------------------------------


class ParsedStages:
    """The parsed form of every declared stage present (analysis/compiler/stages.py): a stage's name reads its
    form (`parsed.ttir`, `parsed.ptx`); a declared stage absent from the compile reads None."""

    def __init__(self, forms: dict[str, Any] | None = None, platform: str = "cuda") -> None:
        self.forms: dict[str, Any] = dict(forms or {})
        self.platform = platform

    def __getattr__(self, name: str) -> Any:
        # only reached for names that are not attributes: the declared stages
        if not name.startswith("_") and name in stage_names():
            return self.forms.get(name)
        raise AttributeError(name)

    @classmethod
    def parse(cls, stages: dict[str, str], platform: str = "cuda") -> ParsedStages:
        out = cls(platform=platform)
        for declared in platform_stages(platform):
            value = stages.get(declared.name)
            if declared.parse is not None and isinstance(value, str) and value.strip():
                out.forms[declared.name] = declared.parse(value)
        return out

    def kernel_files(self) -> set[str]:
        files: set[str] = set()
        for module in (self.ttir, self.ttgir):
            if module is not None:
                files |= module.kernel_files()
        return files


def user_files_for(path: str, parsed: ParsedStages, kernel: str | None = None) -> UserFiles:
    """The user's file: the given path, plus the file the compiler recorded for the kernel's definition."""
    files = UserFiles([path] if path else [])
    for module in (parsed.ttir, parsed.ttgir):
        if module is None:
            continue
        chains = [c for name, c in module.func_locs.items() if kernel is None or name == kernel] or list(
            module.func_locs.values()
        )
        for chain in chains:
            if chain.frames:
                files.add(chain.frames[0].file)
    return files


@dataclass
class Attribution:
    lines: dict[int, LineStats]
    line_maps: dict[str, list[tuple[int, int]]]


class Attributor:
    """What the stages' attribution functions share while one compile is attributed: the per-line counts, the
    IR-line maps, the user-line lookup, and which user lines called library code (PTX tells, SASS reads it)."""

    def __init__(
        self,
        is_user: UserFiles,
        lines: dict[int, LineStats] | None = None,
        maps: dict[str, list[tuple[int, int]]] | None = None,
    ) -> None:
        self.is_user = is_user
        self.lines: dict[int, LineStats] = {} if lines is None else lines
        self.maps: dict[str, list[tuple[int, int]]] = {} if maps is None else maps
        self.library_callers: dict[tuple[str, int], list[int]] = {}
        self._memo: dict[int, int | None] = {}
        self._keep: list[LocChain] = []  # keeps memoized chains alive so their ids stay unique

    def stats(self, line: int) -> LineStats:
        got = self.lines.get(line)
        if got is None:
            got = self.lines[line] = LineStats(line)
        return got

    def pairs(self, stage: str) -> list[tuple[int, int]]:
        return self.maps.setdefault(stage, [])

    def user_line(self, chain: LocChain) -> int | None:
        # Parsers share one chain object between consecutive instructions: memoize by identity.
        key = id(chain)
        if key in self._memo:
            return self._memo[key]
        frame = chain.user_frame(self.is_user)
        line = frame.line if frame and frame.line > 0 else None  # line 0: compiler-generated code
        self._memo[key] = line
        self._keep.append(chain)
        return line


def attribute(parsed: ParsedStages, is_user: UserFiles) -> Attribution:
    """Every declared stage of the platform that was parsed, attributed in compile order."""
    att = Attributor(is_user)
    for declared in platform_stages(parsed.platform):
        form = parsed.forms.get(declared.name)
        if form is not None and declared.attribute is not None:
            declared.attribute(form, att, declared.name)
    return Attribution(dict(sorted(att.lines.items())), att.maps)


def attribute_mlir(module: MlirModule, att: Attributor, stage: str) -> None:
    """An MLIR stage (ttir, ttgir): each op on its user line, counted by op class."""
    pairs = att.pairs(stage)
    for op in module.ops:
        line = att.user_line(op.loc)
        if line is None:
            continue
        pairs.append((line, op.ir_line))
        att.stats(line).add(stage, mlir_class(op.name, op.text), op.ir_line)


def lines_with(lines: dict[int, LineStats], stage: str, cls: str) -> list[int]:
    return [ln for ln, st in lines.items() if st.count(stage, cls)]


def stage_lines(text: str, ir_lines: Iterable[int], limit: int = 6) -> str:
    """The IR lines themselves (trimmed) as an excerpt for evidence."""
    all_lines = source_lines(text)
    picked: list[str] = []
    for n in sorted(set(ir_lines))[:limit]:
        if 1 <= n <= len(all_lines):
            raw = all_lines[n - 1].strip()
            cut = raw.find(" loc(")
            raw = raw[:cut] if cut > 0 else raw
            picked.append(raw if len(raw) <= 200 else raw[:197] + "...")
    return "\n".join(picked)
