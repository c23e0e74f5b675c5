"""Incremental `ast.parse` for the editor: a file is parsed as top-level chunks, each cached by its text and
first line, so a keystroke re-parses the one chunk it touched instead of the whole file.

Why this gives the same tree as `ast.parse(text)`: a chunk starts on a column-0 line and is parsed after as many
blank lines as precede it, so every position is the one the whole-file parse gives. If a split falls inside a
statement (an open bracket or string, a backslash continuation, a decorator without its `def`, an `if` without
its `else`), the chunk before the split is incomplete and fails to parse; the chunk is then merged with the next
one, and when that does not help the whole file is parsed as before (same tree, same SyntaxError). When every
chunk parses, each split is between two top-level statements, where Python's grammar parses each statement on
its own. Parsing does not depend on earlier statements except through `from __future__ import barry_as_FLUFL`;
files that mention it, and files with CR line breaks, are parsed whole.

Cached trees are shared between parses of successive versions of a file: nothing may mutate them (no analysis
does; they only read). Each chunk carries a `memo` where `analysis.kernels` keeps what it derives from the
chunk's statements alone (statement lists, parameters, digests), so unchanged chunks cost a lookup.
"""

from __future__ import annotations

import ast
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from .bounded.byte_lru import MIB, ByteLRU

# A line that may start a top-level statement: not indented, not a comment, not a closing bracket or quote.
_NOT_STARTS = frozenset("#)]}'\"")
_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")
_TRIPLE_QUOTE = re.compile(r'"""|\'\'\'')
# A chunk that does not parse is merged with the next ones (a split inside a statement) within these bounds;
# past them the whole file is parsed (usually a real syntax error, which the whole-file parse reports).
_MAX_MERGES = 4
_MAX_MERGED_LINES = 200
_MISS = object()


@dataclass(eq=False)
class Chunk:
    """Consecutive top-level statements of a file, parsed together, and facts derived from them alone."""

    stmts: tuple[ast.stmt, ...]
    start: int = 0  # its lines in the file, 0-based, [start, end)
    end: int = 0
    # Keyed by (what, id(node of this chunk), ...): the chunk keeps its nodes alive, so ids stay valid.
    memo: dict[Any, Any] = field(default_factory=dict)


class _ChunkCache:
    """Parsed chunks keyed by (first line, text); segmented LRU, so one-off parses (a workspace scan) do not
    evict the chunks of the file being edited, which are hit again on every keystroke. Each segment is bounded
    by the bytes its trees hold (estimated from the chunk's text) as well as by its number of chunks: a
    chunk is one statement or a 5,000-line class."""

    def __init__(
        self, probation: int = 1024, protected: int = 2048, probation_bytes: int = 32 * MIB,
        protected_bytes: int = 64 * MIB,
    ) -> None:
        # None: the chunk does not parse on its own.
        self._probation: ByteLRU[tuple[int, str], Chunk | None] = ByteLRU(probation_bytes, _weigh, probation)
        self._protected: ByteLRU[tuple[int, str], Chunk | None] = ByteLRU(protected_bytes, _weigh, protected)
        self._lock = threading.Lock()
        # Hashes of chunk keys parsed before (trees not kept): what tells a re-parsed file from a new one.
        self._seen: OrderedDict[int, None] = OrderedDict()
        self._seen_size = 4 * (probation + protected)

    def known(self, keys: list[tuple[int, str]]) -> int:
        """How many of these chunks were parsed before; records them all as seen."""
        hashes = [hash(key) for key in keys]
        with self._lock:
            found = sum(
                h in self._seen or key in self._protected or key in self._probation
                for h, key in zip(hashes, keys, strict=True)
            )
            for h in hashes:
                self._seen[h] = None
                self._seen.move_to_end(h)
            while len(self._seen) > self._seen_size:
                self._seen.popitem(last=False)
        return found

    def get(self, key: tuple[int, str]) -> Chunk | None | object:
        """The cached chunk, None for a chunk known not to parse, `_MISS` when unknown."""
        with self._lock:
            hit = self._protected.get(key, _MISS)
            if hit is not _MISS:
                return hit
            hit = self._probation.pop(key, _MISS)
            if hit is _MISS:
                return _MISS
            for old_key, old in self._protected.put(key, hit):
                self._probation.put(old_key, old)
            return hit

    def put(self, key: tuple[int, str], chunk: Chunk | None) -> None:
        with self._lock:
            self._probation.put(key, chunk)

    def held_bytes(self) -> int:
        """The estimated bytes of the trees held (both segments)."""
        return self._probation.bytes + self._protected.bytes

    def clear(self) -> None:
        with self._lock:
            self._probation.clear()
            self._protected.clear()
            self._seen.clear()


# A parsed chunk holds about this many bytes of tree per character of its text (measured on kernel files).
CHUNK_BYTES_PER_CHAR = 120


def _weigh(key: tuple[int, str], _chunk: Chunk | None) -> int:
    return CHUNK_BYTES_PER_CHAR * len(key[1])


_CACHE = _ChunkCache()


def parse_chunked(text: str, lines: list[str] | None = None) -> tuple[ast.Module, list[Chunk]]:
    """`ast.parse(text)`, reusing the trees of unchanged chunks, and the chunks (their statements make up the
    module's body, in order); raises exactly what `ast.parse` raises."""
    if "\r" in text or "barry_as_FLUFL" in text:
        return _whole(text)
    if lines is None:
        lines = text.split("\n")
    starts = _chunk_starts(lines)
    if len(starts) < 2:
        return _whole(text)
    starts.append(len(lines))
    keys = [(start, "\n".join(lines[start:end])) for start, end in zip(starts, starts[1:], strict=False)]
    if 2 * _CACHE.known(keys) < len(keys):
        # A file seen for the first time (opened, or one of many in a scan; a shared header aside): one parse
        # is cheapest, and keeping its trees would only feed the garbage collector. Its chunks are cached
        # when it comes back (the next version of an edited file shares most of them).
        return _whole(text)
    chunks: list[Chunk] = []
    index = 0
    while index < len(starts) - 1:
        parsed = None
        for end in range(index + 1, min(index + 2 + _MAX_MERGES, len(starts))):
            if end > index + 1 and starts[end] - starts[index] > _MAX_MERGED_LINES:
                break
            parsed = _parse_chunk(starts[index], starts[end], lines)
            if parsed is not None:
                index = end
                break
        if parsed is None:
            return _whole(text)
        chunks.append(parsed)
    body = [stmt for chunk in chunks for stmt in chunk.stmts]
    return ast.Module(body=body, type_ignores=[]), chunks


def _whole(text: str) -> tuple[ast.Module, list[Chunk]]:
    tree = ast.parse(text)
    return tree, [Chunk(tuple(tree.body), 0, text.count("\n") + 1)]


def _chunk_starts(lines: list[str]) -> list[int]:
    """0-based line numbers where a chunk starts: column-0 lines that can begin a top-level statement.

    A rough guess (parsing checks it): lines inside a triple-quoted string (quotes counted without regard to
    comments or escapes), after a decorator or starting an `else`-like clause are not chunk starts."""
    starts = [0]
    previous_decorator = False
    open_quote: str | None = None
    for number, line in enumerate(lines):
        first = line[:1]
        if first and open_quote is None and first not in _NOT_STARTS and not first.isspace():
            if number > 0 and not previous_decorator and not _CONTINUES.match(line):
                starts.append(number)
            previous_decorator = first == "@"
        if '"""' in line or "'''" in line:
            for quote in _TRIPLE_QUOTE.finditer(line):
                if open_quote is None:
                    open_quote = quote.group()
                elif quote.group() == open_quote:
                    open_quote = None
    return starts


def _parse_chunk(start: int, end: int, lines: list[str]) -> Chunk | None:
    """The statements of lines [start, end) (0-based), or None when they do not parse on their own."""
    chunk = "\n".join(lines[start:end])
    key = (start, chunk)
    cached = _CACHE.get(key)
    if cached is not _MISS:
        return cached  # type: ignore[return-value]
    parsed: Chunk | None
    try:
        # Leading newlines put every node on its line in the file; columns are per line already.
        parsed = Chunk(tuple(ast.parse("\n" * start + chunk).body), start, end)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        parsed = None
    _CACHE.put(key, parsed)
    return parsed
