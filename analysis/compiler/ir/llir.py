"""Parse LLVM IR text: instructions with `!dbg` attachments resolved through `DILocation` (following
`inlinedAt`) and the file of each scope (`DISubprogram`, `DILexicalBlock[File]`, `DIFile`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .mlir_loc import LocChain, SourceLoc


@dataclass(frozen=True)
class LlirInstr:
    ir_line: int
    opcode: str  # "load", "store", "call @llvm.nvvm.barrier0", "fmul", ...
    text: str
    loc: LocChain


_META_RE = re.compile(r"^(!\d+)\s*=\s*(?:distinct\s+)?!(\w+)\((.*)\)\s*$")
_FIELD_RE = re.compile(r"(\w+):\s*(\"(?:[^\"\\]|\\.)*\"|![\d]+|[\w.|\s-]+?)(?=,\s*\w+:|$)")
_CALL_PREFIXES = ("tail", "musttail", "notail")
_CALLEE_RE = re.compile(r"@([\w.$]+)")


def _fields(body: str) -> dict[str, str]:
    return {k: v.strip().strip('"') for k, v in _FIELD_RE.findall(body)}


class _Debug:
    def __init__(self, meta: dict[str, tuple[str, dict[str, str]]]) -> None:
        self.meta = meta
        self._file_cache: dict[str, str] = {}
        self._loc_cache: dict[str, LocChain] = {}

    def file_of_scope(self, ref: str, depth: int = 0) -> str:
        if ref in self._file_cache:
            return self._file_cache[ref]
        kind, fields = self.meta.get(ref, ("", {}))
        path = ""
        if kind == "DIFile":
            name, directory = fields.get("filename", ""), fields.get("directory", "")
            path = name if name.startswith("/") or not directory else f"{directory.rstrip('/')}/{name}"
        elif "file" in fields and depth < 32:
            path = self.file_of_scope(fields["file"], depth + 1)
        elif "scope" in fields and depth < 32:
            path = self.file_of_scope(fields["scope"], depth + 1)
        self._file_cache[ref] = path
        return path

    def chain(self, ref: str) -> LocChain:
        cached = self._loc_cache.get(ref)
        if cached is not None:
            return cached
        frames: list[SourceLoc] = []
        seen: set[str] = set()
        cur: str | None = ref
        while cur and cur not in seen:
            seen.add(cur)
            kind, fields = self.meta.get(cur, ("", {}))
            if kind != "DILocation":
                break
            file = self.file_of_scope(fields.get("scope", ""))
            frames.append(
                SourceLoc(file, int(fields.get("line", "0") or 0), int(fields.get("column", "0") or 0))
            )
            cur = fields.get("inlinedAt")
        chain = LocChain(tuple(frames))
        self._loc_cache[ref] = chain
        return chain


def parse_llir(text: str) -> list[LlirInstr]:
    lines = text.splitlines()
    meta: dict[str, tuple[str, dict[str, str]]] = {}
    for raw in lines:
        if raw.startswith("!"):
            m = _META_RE.match(raw)
            if m:
                meta[m[1]] = (m[2], _fields(m[3]))
    debug = _Debug(meta)
    out: list[LlirInstr] = []
    in_func = False
    # String operations rather than regexes: LLVM IR of a GEMM is hundreds of KB.
    for idx, raw in enumerate(lines, start=1):
        if raw.startswith("define "):
            in_func = True
            continue
        if raw.startswith("}"):
            in_func = False
            continue
        if not in_func or not raw.startswith("  "):
            continue
        body = raw.strip()
        if not body or body[0] == ";":
            continue
        dbg_at = body.rfind("!dbg !")
        ref = None
        if dbg_at > 0:
            ref = body[dbg_at + 5 :].split(",", 1)[0].strip()
            body = body[:dbg_at].rstrip().rstrip(",")
        rest = body.split(" = ", 1)[1] if body[0] == "%" and " = " in body else body
        words = rest.split(None, 2)
        if not words:
            continue
        opcode = words[1] if words[0] in _CALL_PREFIXES and len(words) > 1 else words[0]
        if opcode == "call":
            callee = _CALLEE_RE.search(rest)
            if callee:
                opcode = f"call @{callee[1]}"
        out.append(LlirInstr(idx, opcode, body, debug.chain(ref) if ref else LocChain()))
    return out
