"""Parse SASS from `nvdisasm -g`/`-gi` (line-info comments) or `cuobjdump -sass`, plus resource reports:
`cuobjdump -res-usage` (REG/STACK/SHARED/LOCAL) and `ptxas -v` (spill stores/loads)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .mlir_loc import LocChain, SourceLoc


@dataclass(frozen=True)
class SassInstr:
    ir_line: int
    address: int
    opcode: str  # "LDG.E.128", "HGMMA.64x128x16.F32", ...
    text: str  # the instruction without the address comment and trailing ';'
    predicate: str | None
    loc: LocChain

    @property
    def base(self) -> str:
        return self.opcode.split(".", 1)[0]


# //## File "/path/f.py", line 12            (nvdisasm -g)
# //## File "/path/std.py", line 170 inlined at "/path/f.py", line 13   (nvdisasm -gi, when DWARF has it)
_FILE_RE = re.compile(r'//##\s*File\s+"([^"]*)",\s*line\s+(\d+)(.*)$')
_INLINED_RE = re.compile(r'inlined at\s+"([^"]*)",\s*line\s+(\d+)')
_INSTR_RE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\b([^;]*);")


def parse_sass(text: str) -> list[SassInstr]:
    out: list[SassInstr] = []
    current = LocChain()
    for idx, raw in enumerate(text.splitlines(), start=1):
        if "//##" in raw:
            m = _FILE_RE.search(raw)
            if m:
                frames = [SourceLoc(m[1], int(m[2]), 0)]
                frames += [SourceLoc(f, int(ln), 0) for f, ln in _INLINED_RE.findall(m[3])]
                current = LocChain(tuple(frames))
            continue
        m = _INSTR_RE.search(raw)
        if m:
            pred = m[2].strip() if m[2] else None
            out.append(SassInstr(idx, int(m[1], 16), m[3], f"{m[3]}{m[4]}".strip(), pred, current))
    return out


_RES_FUNC_RE = re.compile(r"Function\s+([\w$]+)\s*:")
_RES_KV_RE = re.compile(r"\b(REG|STACK|SHARED|LOCAL|CONSTANT\[\d+\]|TEXTURE|SURFACE|SAMPLER):(\d+)")


def parse_res_usage(text: str) -> dict[str, dict[str, int]]:
    """`cuobjdump -res-usage` -> {kernel: {"registers", "stack", "shared", "local", ...}}."""
    out: dict[str, dict[str, int]] = {}
    current: str | None = None
    names = {"REG": "registers", "STACK": "stack", "SHARED": "shared", "LOCAL": "local"}
    for line in text.splitlines():
        fm = _RES_FUNC_RE.search(line)
        if fm:
            current = fm[1]
            out.setdefault(current, {})
            continue
        if current is None:
            continue
        for key, value in _RES_KV_RE.findall(line):
            out[current][names.get(key, key.lower())] = int(value)
    return out


_PTXAS_FUNC_RE = re.compile(r"(?:Compiling entry function|Function properties for)\s+'?([\w$]+)'?")
_PTXAS_SPILL_RE = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_REG_RE = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?")


def parse_ptxas_verbose(text: str) -> dict[str, dict[str, int]]:
    """`ptxas -v` stderr -> {kernel: {"stack", "spill_stores", "spill_loads", "registers", "barriers"}}."""
    out: dict[str, dict[str, int]] = {}
    current: str | None = None
    for line in text.splitlines():
        fm = _PTXAS_FUNC_RE.search(line)
        if fm:
            current = fm[1]
            out.setdefault(current, {})
            continue
        if current is None:
            continue
        sm = _PTXAS_SPILL_RE.search(line)
        if sm:
            out[current].update(stack=int(sm[1]), spill_stores=int(sm[2]), spill_loads=int(sm[3]))
        rm = _PTXAS_REG_RE.search(line)
        if rm:
            out[current]["registers"] = int(rm[1])
            if rm[2]:
                out[current]["barriers"] = int(rm[2])
    return out
