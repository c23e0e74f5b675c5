"""Parse MLIR text (Triton TTIR/TTGIR, Ascend ttadapter) into ops with resolved source locations.

MLIR prints locations as aliases (`#loc3 = loc("f.py":12:16)`) or inline `loc(...)`. The forms Triton emits:
file locations `"file":line:col`, named `"x"(#loc3)` (the variable name on that line), call sites
`callsite(#callee at #caller)` (code inlined from triton/language/*.py at a user call), fused
`fused[#a, #b]`, and `unknown`. Every location resolves to a chain of frames, innermost first, so a caller
can pick the outermost frame that lies in the user's file.

Pure functions over text; no MLIR bindings.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int  # 1-based
    col: int  # as printed by MLIR (Triton uses the Python AST's 0-based column)


@dataclass(frozen=True)
class LocChain:
    """A resolved location: frames innermost first (callee ... caller) and the variable name if one was given."""

    frames: tuple[SourceLoc, ...] = ()
    name: str | None = None

    def user_frame(self, is_user: UserFiles) -> SourceLoc | None:
        """The innermost frame in the user's file; for inlined library code that is the user's call site."""
        for frame in self.frames:
            if is_user(frame.file):
                return frame
        return None


class UserFiles:
    """Decides whether a location's file is the user's file being analyzed.

    Workers compile from a temporary copy, so the IR may name another directory: an exact path match wins,
    otherwise the basename must match (and never a file under triton/language or another library path).
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = {os.path.normpath(p) for p in paths if p}
        self.basenames = {os.path.basename(p) for p in self.paths}
        self._cache: dict[str, bool] = {}

    def __call__(self, file: str) -> bool:
        hit = self._cache.get(file)
        if hit is None:
            norm = os.path.normpath(file) if file else ""
            if norm in self.paths:
                hit = True
            elif _is_library(norm):
                hit = False
            else:
                hit = os.path.basename(norm) in self.basenames
            self._cache[file] = hit
        return hit

    def add(self, path: str) -> None:
        if path:
            norm = os.path.normpath(path)
            self.paths.add(norm)
            self.basenames.add(os.path.basename(norm))
            self._cache.clear()


_LIBRARY_PARTS = (
    f"{os.sep}triton{os.sep}language{os.sep}",
    f"{os.sep}site-packages{os.sep}",
    f"{os.sep}triton{os.sep}",
)


def _is_library(path: str) -> bool:
    return any(part in path for part in _LIBRARY_PARTS)


_ALIAS_RE = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
_FILE_LOC_RE = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+):(\d+)(?:\s+to\s+:?\d+:\d+)?$')
_NAMED_RE = re.compile(r'^"((?:[^"\\]|\\.)*)"\((.*)\)$')


class LocTable:
    """`#locN` aliases of one MLIR module, resolved lazily and memoized."""

    def __init__(self, aliases: dict[str, str]) -> None:
        self._raw = aliases
        self._resolved: dict[str, LocChain] = {}

    @classmethod
    def from_text(cls, text: str) -> LocTable:
        aliases: dict[str, str] = {}
        for line in text.splitlines():
            if line.startswith("#loc"):
                m = _ALIAS_RE.match(line.strip())
                if m:
                    aliases[m[1]] = m[2]
        return cls(aliases)

    def __len__(self) -> int:
        return len(self._raw)

    def resolve(self, expr: str) -> LocChain:
        """Resolve a location expression: an alias (`#loc3`), or the inside of `loc(...)`."""
        return self._resolve(expr.strip(), 0)

    def _resolve(self, expr: str, depth: int) -> LocChain:
        if depth > 64:  # aliases never nest this deep; protects against a malformed cycle
            return LocChain()
        if expr.startswith("#loc"):
            cached = self._resolved.get(expr)
            if cached is not None:
                return cached
            raw = self._raw.get(expr)
            chain = LocChain() if raw is None else self._resolve(raw.strip(), depth + 1)
            self._resolved[expr] = chain
            return chain
        if expr.startswith("loc(") and expr.endswith(")"):
            return self._resolve(expr[4:-1].strip(), depth + 1)
        if expr == "unknown" or not expr:
            return LocChain()
        m = _FILE_LOC_RE.match(expr)
        if m:
            return LocChain((SourceLoc(m[1], int(m[2]), int(m[3])),))
        if expr.startswith("callsite(") and expr.endswith(")"):
            callee, caller = _split_callsite(expr[len("callsite(") : -1])
            inner = self._resolve(callee, depth + 1)
            outer = self._resolve(caller, depth + 1)
            return LocChain(inner.frames + outer.frames, inner.name or outer.name)
        if expr.startswith("fused"):
            return self._resolve_fused(expr, depth)
        m = _NAMED_RE.match(expr)
        if m:
            inner = self._resolve(m[2], depth + 1)
            return LocChain(inner.frames, m[1])
        return LocChain()

    def _resolve_fused(self, expr: str, depth: int) -> LocChain:
        # fused<#meta>[a, b]: the first part with a file location carries the source position.
        start = expr.find("[")
        if start < 0 or not expr.endswith("]"):
            return LocChain()
        for part in split_top(expr[start + 1 : -1], ","):
            chain = self._resolve(part, depth + 1)
            if chain.frames:
                return chain
        return LocChain()


def split_top(text: str, sep: str) -> list[str]:
    """Split on `sep` outside brackets and strings."""
    parts: list[str] = []
    depth, in_str, start, i = 0, False, 0, 0
    while i < len(text):
        ch = text[i]
        if in_str:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i].strip())
            start = i + len(sep)
        i += 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _split_callsite(body: str) -> tuple[str, str]:
    parts = split_top(body, " at ")
    if len(parts) != 2:
        return body, ""
    return parts[0], parts[1]


def source_line_of(chain: LocChain, is_user: UserFiles) -> int | None:
    frame = chain.user_frame(is_user)
    return frame.line if frame else None
