"""Parse PTX: `.file` tables, `.loc` line info (with the inlining chain LLVM prints in its comment) and
instructions, each tagged with the location in force where it appears."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .mlir_loc import LocChain, SourceLoc


@dataclass(frozen=True)
class PtxInstr:
    ir_line: int  # 1-based line in the PTX text
    opcode: str  # full dotted opcode, e.g. "ld.global.v4.b32"
    text: str  # the instruction without predicate and trailing ';'
    predicated: bool
    loc: LocChain


@dataclass
class PtxModule:
    files: dict[int, str]
    instrs: list[PtxInstr]
    target: str | None = None  # ".target sm_90a"
    entries: tuple[str, ...] = ()


_FILE_RE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,\s*"([^"]*)")?')
_LOC_RE = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(.*)$")
_INLINED_AT_RE = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")
# LLVM's comment after .loc: "// standard.py:170:27 @[ standard.py:191:40 @[ softmax.py:13:19 ] ]"
_COMMENT_FRAME_RE = re.compile(r"([^\s@\[\]]+):(\d+):(\d+)")
_INSTR_RE = re.compile(r"^\s*(@!?%\w+\s+)?([a-z][\w.:]*)\b([^;]*);")
_TARGET_RE = re.compile(r"^\s*\.target\s+([\w,\s]+)")
_ENTRY_RE = re.compile(r"^\s*\.(?:visible\s+)?\.entry\s+([\w$]+)")


def parse_ptx(text: str) -> PtxModule:
    files: dict[int, str] = {}
    raw_locs: list[tuple[int, int, int, int, str]] = []  # (ir_line, file, line, col, tail)
    lines = text.splitlines()
    target: str | None = None
    entries: list[str] = []
    # .file directives come after the code in Triton's PTX, so collect them first.
    for raw in lines:
        m = _FILE_RE.match(raw)
        if m:
            path = m[2] if not m[3] else f"{m[2].rstrip('/')}/{m[3]}"
            files[int(m[1])] = path
    instrs: list[PtxInstr] = []
    current = LocChain()
    in_debug = False
    for idx, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if stripped.startswith(".section") and ".debug" in stripped:
            in_debug = True  # DWARF sections hold data directives, not instructions
        if in_debug:
            continue
        if not stripped or stripped.startswith("//"):
            continue
        m = _LOC_RE.match(raw)
        if m:
            current = _chain(files, int(m[1]), int(m[2]), int(m[3]), m[4])
            raw_locs.append((idx, int(m[1]), int(m[2]), int(m[3]), m[4]))
            continue
        if stripped.startswith("."):
            tm = _TARGET_RE.match(raw)
            if tm:
                target = tm[1].split(",")[0].strip()
            em = _ENTRY_RE.match(raw)
            if em:
                entries.append(em[1])
            continue
        im = _INSTR_RE.match(raw)
        if im and not stripped.endswith(":"):
            instrs.append(PtxInstr(idx, im[2], f"{im[2]}{im[3]}".strip(), bool(im[1]), current))
    return PtxModule(files, instrs, target, tuple(entries))


def _chain(files: dict[int, str], file_id: int, line: int, col: int, tail: str) -> LocChain:
    first = SourceLoc(files.get(file_id, ""), line, col)
    frames = [first]
    inlined = _INLINED_AT_RE.search(tail)
    if inlined:
        frames.append(SourceLoc(files.get(int(inlined[1]), ""), int(inlined[2]), int(inlined[3])))
        return LocChain(tuple(frames))
    comment = tail.partition("//")[2]
    if "@[" in comment:
        # The comment names files by basename; map each back to a full path from the .file table.
        by_base = {p.rsplit("/", 1)[-1]: p for p in files.values()}
        for fm in list(_COMMENT_FRAME_RE.finditer(comment))[1:]:
            frames.append(SourceLoc(by_base.get(fm[1], fm[1]), int(fm[2]), int(fm[3])))
    return LocChain(tuple(frames))


def vector_bits(opcode: str) -> int | None:
    """Bits moved per thread by one ld/st: ld.global.v4.b32 -> 128; None for non-memory opcodes."""
    parts = opcode.split(".")
    if parts[0] not in ("ld", "st", "ldu"):
        return None
    lanes = 1
    width = None
    for p in parts[1:]:
        if p in ("v2", "v4", "v8"):
            lanes = int(p[1:])
        elif len(p) >= 2 and p[0] in "bsuf" and p[1:].isdigit():
            width = int(p[1:])
    return lanes * width if width else None
