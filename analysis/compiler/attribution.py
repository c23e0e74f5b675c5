"""Per source line of the user's file: which IR ops and machine instructions it became, counted by class.

Every stage is attributed through its own line info (MLIR locs, PTX .loc, LLVM !dbg, SASS line comments).
Code inlined from triton/language/*.py is charged to the user's call site through call-site locations; SASS
line comments often lack the inlining chain, so a library line there is mapped to the user line(s) that the
PTX says called it (the nearest one seen before it in program order when several did).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..source.lines import source_lines
from .ir.llir import LlirInstr, parse_llir
from .ir.mlir import MlirModule, parse_mlir
from .ir.mlir_loc import LocChain, UserFiles
from .ir.ptx import PtxModule, parse_ptx, vector_bits
from .ir.sass import SassInstr, parse_sass

STAGE_ORDER = ("ttir", "ttgir", "llir", "ptx", "sass")


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


@dataclass
class ParsedStages:
    """The parsed form of every stage present; absent stages stay None."""

    ttir: MlirModule | None = None
    ttgir: MlirModule | None = None
    llir: list[LlirInstr] | None = None
    ptx: PtxModule | None = None
    sass: list[SassInstr] | None = None

    @classmethod
    def parse(cls, stages: dict[str, str]) -> ParsedStages:
        def text(name: str) -> str | None:
            value = stages.get(name)
            return value if isinstance(value, str) and value.strip() else None

        out = cls()
        if (t := text("ttir")) is not None:
            out.ttir = parse_mlir(t)
        if (t := text("ttgir")) is not None:
            out.ttgir = parse_mlir(t)
        if (t := text("llir")) is not None:
            out.llir = parse_llir(t)
        if (t := text("ptx")) is not None:
            out.ptx = parse_ptx(t)
        if (t := text("sass")) is not None:
            out.sass = parse_sass(t)
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


def attribute(parsed: ParsedStages, is_user: UserFiles) -> Attribution:
    lines: dict[int, LineStats] = {}
    maps: dict[str, list[tuple[int, int]]] = {}

    def stats(line: int) -> LineStats:
        got = lines.get(line)
        if got is None:
            got = lines[line] = LineStats(line)
        return got

    memo: dict[int, int | None] = {}
    keep: list[LocChain] = []  # keeps memoized chains alive so their ids stay unique

    def user_line(chain: LocChain) -> int | None:
        # Parsers share one chain object between consecutive instructions: memoize by identity.
        key = id(chain)
        if key in memo:
            return memo[key]
        frame = chain.user_frame(is_user)
        line = frame.line if frame and frame.line > 0 else None  # line 0: compiler-generated code
        memo[key] = line
        keep.append(chain)
        return line

    for stage in ("ttir", "ttgir"):
        module: MlirModule | None = getattr(parsed, stage)
        if module is None:
            continue
        pairs = maps.setdefault(stage, [])
        for op in module.ops:
            line = user_line(op.loc)
            if line is None:
                continue
            pairs.append((line, op.ir_line))
            stats(line).add(stage, mlir_class(op.name, op.text), op.ir_line)
    if parsed.llir is not None:
        pairs = maps.setdefault("llir", [])
        for ins in parsed.llir:
            line = user_line(ins.loc)
            if line is None:
                continue
            pairs.append((line, ins.ir_line))
            stats(line).add("llir", llir_class(ins.opcode), ins.ir_line)
    library_callers: dict[tuple[str, int], list[int]] = {}
    if parsed.ptx is not None:
        pairs = maps.setdefault("ptx", [])
        for ins in parsed.ptx.instrs:
            line = user_line(ins.loc)
            if line is None:
                continue
            inner = ins.loc.frames[0] if ins.loc.frames else None
            if inner is not None and not is_user(inner.file):
                callers = library_callers.setdefault((os.path.basename(inner.file), inner.line), [])
                if line not in callers:
                    callers.append(line)
            pairs.append((line, ins.ir_line))
            cls = ptx_class(ins.opcode)
            st = stats(line)
            st.add("ptx", cls, ins.ir_line)
            bits = vector_bits(ins.opcode) if cls != "async_copy" else cp_async_bits(ins.text)
            if cls in ("global_load", "async_copy") and bits:
                st.global_load_bits.append(bits)
            elif cls == "global_store" and bits:
                st.global_store_bits.append(bits)
    if parsed.sass is not None:
        pairs = maps.setdefault("sass", [])
        last_user: int | None = None
        for ins in parsed.sass:
            line = user_line(ins.loc)
            if line is None and ins.loc.frames:
                inner = ins.loc.frames[0]
                callers = library_callers.get((os.path.basename(inner.file), inner.line), [])
                line = last_user if last_user in callers else (callers[0] if callers else None)
            elif line is not None:
                last_user = line
            if line is None:
                continue
            pairs.append((line, ins.ir_line))
            stats(line).add("sass", sass_class(ins.opcode), ins.ir_line)
    return Attribution(dict(sorted(lines.items())), maps)


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
