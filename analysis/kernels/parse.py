"""The one parse of a document version: `parse_module(text)` returns the file's kernel model, memoised by the text,
so triage, specialization, the compile-cache keys and the pipeline share one tree and one `ModuleInfo` per
version instead of parsing the buffer again each.

`build_module(text)` is the parse itself (uncached); every analysis of a buffer goes through `parse_module`.
Both never raise. The model's trees and memos are shared by every caller of the same text: never mutate them.
"""

from __future__ import annotations

import logging

from ..bounded.byte_lru import MIB, ByteLRU
from ..source_chunks import parse_chunked
from ..source_lines import SourceText, SyntaxErrorInfo, syntax_error_info
from .collection import Collector
from .model import ModuleInfo

log = logging.getLogger(__name__)

# Versions kept: the open documents' current texts (an editor alternates between a few) and the one before an
# edit, bounded by bytes: a parse holds about 160 bytes of tree and model per character of source (measured:
# 16 MB for a 2,000-line file), so 16 versions of a 50,000-line file were 2 GB. The newest is always kept.
MEMO_SIZE = 16
MEMO_BYTES = 96 * MIB
BYTES_PER_CHAR = 160
_MEMO: ByteLRU[str, ModuleInfo] = ByteLRU(
    MEMO_BYTES, lambda source, _module: BYTES_PER_CHAR * len(source), max_entries=MEMO_SIZE,
    collect_every=MEMO_BYTES // 2,
)


def parse_module(source: str) -> ModuleInfo:
    """The kernel model of `source`, parsed once per text (see the module docstring); never raises."""
    if not isinstance(source, str):
        return ModuleInfo(source="", syntax_error=SyntaxErrorInfo("source is not text", 1, 0, 1, 0))
    return _memoised(source)


def clear_memo() -> None:
    """Forget every memoised parse (tests that compare a cold parse with a warm one)."""
    _MEMO.clear()


def _memoised(source: str) -> ModuleInfo:
    hit = _MEMO.get(source)
    if hit is None:
        hit = build_module(source)
        _MEMO.put(source, hit)
    return hit


def build_module(source: str) -> ModuleInfo:
    """Parse `source` and describe its Triton kernels, without the memo; never raises."""
    # Editors do not count a leading byte-order mark as a character, and ast rejects it in a str.
    text = source[1:] if source.startswith("\ufeff") else source
    lines = SourceText(text)
    try:
        tree, chunks = parse_chunked(text, lines.lines)
    except SyntaxError as exc:
        return ModuleInfo(source=text, syntax_error=syntax_error_info(exc, lines), _text=lines)
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        # Null bytes, unencodable surrogates, absurd nesting: report at the top of the file.
        message = "expression nested too deeply to parse" if isinstance(exc, RecursionError) else str(exc)
        return ModuleInfo(source=text, syntax_error=SyntaxErrorInfo(message, 1, 0, 1, 0), _text=lines)
    try:
        return Collector(text, tree, lines, chunks).build()
    except Exception:  # noqa: BLE001 - the contract is "never raises": degrade to "no kernels found"
        # e.g. pathologically deep trees that ast.parse accepted but a recursive helper cannot follow.
        log.exception("parse_module: could not collect kernels")
        return ModuleInfo(source=text, tree=tree, _text=lines)
