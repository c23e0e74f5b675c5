"""One session's caches, owned by one object: the language server and the command line each create a `Session`
and install it; every cache an analysis consults is an attribute of the session in force, never of a module.

What a session holds (each bounded by entries and, for trees and findings, by the bytes they hold):
- `parsed`: the kernel model per text (analysis/kernels/parse.py, `parse_module`);
- `chunks`, `chunks_seen`: incrementally parsed top-level chunks and the chunk keys seen (source_chunks.py);
- `triage`: level-1 findings per jit function (analysis/triage);
- `recipes`: the level-5 recipe registry, discovered on first use (analysis/rewrite/registry.py);
- `reports`: analyses of cached compile results (server/engine/diagnose/compile.py);
- `line_tables`, `kernel_findings`: the language server's line table and findings per kernel of each open
  document's analysed version (server/lsp/views.py);
- `workspace_roots`: the project root of each folder a recorded launch names (server/engine/record/launch_store.py);
- `pyproject_tables`: `[tool.tritonlens]` of each pyproject.toml read, by path and modification time
  (server/engine/diagnose/inputs.py: overrides and ignores read it once per change of the file);
- `workspace_indexes`: each workspace root's Python files, for launches of a kernel in other files
  (server/engine/diagnose/workspace_index.py; levels 3-4 only).

`current()` is the session in force: the one installed last (`Session.install`, or within `with
session.active():`); a caller that created none (a library call, a test) gets a default session made on first
use. Two sessions share no cache state. Facts of one AST node (source/node_memo.py) and a tree's call index
(triage/launch_facts.py) live on the node and the tree themselves: a weak-keyed table holds its values strongly,
and those values refer to their keys, so no tree of any version ever died (issue 21); a tree is one session's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .lru import LRU, MIB, MISSING, approx_bytes

# Sizes, as the module-level caches had them.
PARSED_TEXTS = 16  # the open documents' current texts (an editor alternates between a few) and the one before
# A parse holds about 160 bytes of tree and model per character of source (measured: 16 MB for a 2,000-line
# file), so 16 versions of a 50,000-line file were 2 GB: bounded by bytes too. The newest is always kept.
PARSED_BYTES, PARSED_BYTES_PER_CHAR = 96 * MIB, 160
CHUNK_BYTES_PER_CHAR = 120  # a parsed chunk's tree per character of its text (measured on kernel files)
CHUNKS_PROBATION_BYTES, CHUNKS_PROTECTED_BYTES = 32 * MIB, 64 * MIB
TRIAGE_BYTES, REPORT_BYTES = 16 * MIB, 32 * MIB
TRIAGED_FUNCTIONS = 2048
CHUNKS_PROBATION, CHUNKS_PROTECTED = 1024, 2048
COMPILE_REPORTS = 64
OPEN_DOCUMENTS = 256  # line tables and findings per kernel: one entry per open document
WORKSPACE_ROOTS = 512
WORKSPACE_INDEXES = 4  # workspace roots whose files are indexed for launches in other files (each up to 24 MB)


class SegmentedLRU:
    """A segmented LRU (two LRUs): a new entry goes to `probation`; a hit there promotes it to `protected`, whose
    overflow goes back to probation. One-off entries (a workspace scan) never evict entries hit again (the chunks
    of the file being edited)."""

    def __init__(self, probation: int, protected: int, probation_bytes: int, protected_bytes: int) -> None:
        self.probation: LRU[Any, Any] = LRU(probation, probation_bytes, _chunk_weight)
        self.protected: LRU[Any, Any] = LRU(protected, protected_bytes, _chunk_weight)
        self._lock = threading.Lock()  # a promotion moves an entry between the segments in one step

    def lookup(self, key: Any) -> Any:
        """The value of `key`, or MISSING."""
        with self._lock:
            hit = self.protected.lookup(key)
            if hit is not MISSING:
                return hit
            hit = self.probation.pop(key)
            if hit is MISSING:
                return MISSING
            for old_key, old in self.protected.put(key, hit):
                self.probation.put(old_key, old)
            return hit

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self.probation.put(key, value)

    def __contains__(self, key: object) -> bool:
        return key in self.protected or key in self.probation

    def __len__(self) -> int:
        return len(self.probation) + len(self.protected)

    @property
    def bytes(self) -> int:
        return self.probation.bytes + self.protected.bytes

    def clear(self) -> None:
        with self._lock:
            self.probation.clear()
            self.protected.clear()


class Session:
    """The caches of one language server or one command-line run (see the module docstring)."""

    def __init__(self) -> None:
        self.parsed: LRU[str, Any] = LRU(
            PARSED_TEXTS, PARSED_BYTES, lambda source, _module: PARSED_BYTES_PER_CHAR * len(source),
            collect_every=PARSED_BYTES // 2,
        )
        self.chunks = SegmentedLRU(CHUNKS_PROBATION, CHUNKS_PROTECTED, CHUNKS_PROBATION_BYTES, CHUNKS_PROTECTED_BYTES)
        self.chunks_seen: LRU[int, None] = LRU(4 * (CHUNKS_PROBATION + CHUNKS_PROTECTED))
        self.triage: LRU[str, tuple[Any, ...]] = LRU(
            TRIAGED_FUNCTIONS, TRIAGE_BYTES, lambda key, findings: len(key) + approx_bytes(findings)
        )
        self.recipes: dict[str, Any] | None = None
        self.reports: LRU[str, Any] = LRU(COMPILE_REPORTS, REPORT_BYTES, lambda _key, value: approx_bytes(value))
        self.line_tables: LRU[str, Any] = LRU(OPEN_DOCUMENTS)
        self.kernel_findings: LRU[str, Any] = LRU(OPEN_DOCUMENTS)
        self.workspace_roots: LRU[str, str] = LRU(WORKSPACE_ROOTS)
        self.pyproject_tables: LRU[tuple[str, float], dict[str, Any]] = LRU(WORKSPACE_ROOTS)
        self.workspace_indexes: LRU[str, Any] = LRU(WORKSPACE_INDEXES)

    def install(self) -> Session | None:
        """Make this the session in force for every thread; returns the one it replaces."""
        global _installed
        previous, _installed = _installed, self
        return previous

    @contextmanager
    def active(self) -> Iterator[Session]:
        """This session in force for the block, the previous one after it."""
        previous = self.install()
        try:
            yield self
        finally:
            global _installed
            _installed = previous


_installed: Session | None = None
_default_lock = threading.Lock()


def current() -> Session:
    """The session in force (see the module docstring)."""
    session = _installed
    if session is not None:
        return session
    with _default_lock:
        if _installed is None:
            Session().install()
        return _installed  # type: ignore[return-value]


def _chunk_weight(key: tuple[int, str], _chunk: Any) -> int:
    return CHUNK_BYTES_PER_CHAR * len(key[1])
