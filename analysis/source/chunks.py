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

The chunks are cached in the session in force (analysis/state/session.py: a segmented LRU keyed by first line
and text, so one-off parses, a workspace scan, do not evict the chunks of the file being edited). Cached trees
are shared between parses of successive versions of a file: nothing may mutate them (no analysis
does; they only read). Each chunk carries a `memo` where `analysis.kernels` keeps what it derives from the
chunk's statements alone (statement lists, parameters, digests), so unchanged chunks cost a lookup.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from ..state.lru import MISSING
from ..state.session import current

# A line that may start a top-level statement: not indented, not a comment, not a closing bracket or quote.
_NOT_STARTS = frozenset("#)]}'\"")
_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")
_TRIPLE_QUOTE = re.compile(r'"""|\'\'\'')
# A chunk that does not parse is merged with the next ones (a split inside a statement) within these bounds;
# past them the whole file is parsed (usually a real syntax error, which the whole-file parse reports).
_MAX_MERGES = 4
_MAX_MERGED_LINES = 200


@dataclass(eq=False)
class Chunk:
    """Consecutive top-level statements of a file, parsed together, and facts derived from them alone."""

    stmts: tuple[ast.stmt, ...]
    start: int = 0  # its lines in the file, 0-based, [start, end)
    end: int = 0
    # Keyed by (what, id(node of this chunk), ...): the chunk keeps its nodes alive, so ids stay valid.
    memo: dict[Any, Any] = field(default_factory=dict)


def _known(keys: list[tuple[int, str]]) -> int:
    """How many of these chunks were parsed before (trees kept or not); records them all as seen."""
    session = current()
    seen, chunks = session.chunks_seen, session.chunks
    hashes = [hash(key) for key in keys]
    found = sum(h in seen or key in chunks for h, key in zip(hashes, keys, strict=True))
    for h in hashes:
        seen.put(h, None)
    return found


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
    if 2 * _known(keys) < len(keys):
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
    cache = current().chunks
    cached = cache.lookup(key)
    if cached is not MISSING:
        return cached  # type: ignore[no-any-return]
    parsed: Chunk | None
    try:
        # Leading newlines put every node on its line in the file; columns are per line already.
        parsed = Chunk(tuple(ast.parse("\n" * start + chunk).body), start, end)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        parsed = None
    cache.put(key, parsed)
    return parsed
