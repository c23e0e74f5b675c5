"""The workspace's Python files, read for launches of a kernel in other files (levels 3-4 only: a compile
reads it, never the keystroke path).

One index per workspace root, kept by the session in force: the first use walks the root (skipping hidden,
virtual-environment and build folders) and reads every `.py` file up to the caps; a later use walks again at
most every RESCAN_S seconds and rereads only the files whose modification time or size changed. Trees are
parsed on demand (only files that name the kernel) and kept, bounded by bytes, until their file changes.
The launches themselves are found by analysis/specialize/workspace_launches.py from the texts.
"""

from __future__ import annotations

import ast
import hashlib
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ....analysis.specialize.workspace_launches import (
    ForeignLaunch,
    Imports,
    foreign_launches,
    import_statements,
)
from ....analysis.state.lru import LRU, MISSING
from ....analysis.state.session import current
from ..record.launch_store import workspace_root

MAX_FILES = 2000
MAX_FILE_BYTES = 512 * 1024
MAX_TOTAL_BYTES = 24 * 1024 * 1024
RESCAN_S = 2.0  # one escalation asks for every kernel of a file: one walk serves them all
TREE_BYTES, TREE_BYTES_PER_CHAR = 64 * 1024 * 1024, 160  # trees only of files that launch the kernel
SKIP_DIRS = frozenset(
    {"__pycache__", "node_modules", "venv", "env", "build", "dist", "site-packages", "third_party"}
)


@dataclass
class _File:
    stamp: tuple[float, int]  # (mtime, size) when read
    text: str
    imports: Imports | None | object = MISSING  # its import statements, read once per text (None: no parse)


@dataclass
class WorkspaceIndex:
    """The `.py` files under one root: workspace-relative posix path -> text, refreshed by modification time."""

    root: Path
    files: dict[str, _File] = field(default_factory=dict)
    truncated: bool = False  # the caps stopped the walk: some files are not indexed
    walked_at: float = -1e9
    lock: threading.Lock = field(default_factory=threading.Lock)
    trees: LRU[tuple[str, str], ast.Module | None] = field(
        default_factory=lambda: LRU(512, TREE_BYTES, lambda key, _tree: TREE_BYTES_PER_CHAR * len(key[1]))
    )

    def refresh(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self.lock:
            if now - self.walked_at < RESCAN_S:
                return
            self.walked_at = now
            seen: dict[str, _File] = {}
            total = 0
            self.truncated = False
            for rel, full in _python_files(self.root):
                if len(seen) >= MAX_FILES or total >= MAX_TOTAL_BYTES:
                    self.truncated = True
                    break
                try:
                    stat = full.stat()
                except OSError:
                    continue
                stamp = (stat.st_mtime, stat.st_size)
                if stat.st_size > MAX_FILE_BYTES:
                    continue
                known = self.files.get(rel)
                if known is None or known.stamp != stamp:
                    try:
                        known = _File(stamp, full.read_text(encoding="utf-8", errors="replace"))
                    except OSError:
                        continue
                seen[rel] = known
                total += stat.st_size
            self.files = seen

    def texts(self) -> dict[str, str]:
        with self.lock:
            return {rel: f.text for rel, f in self.files.items()}

    def imports(self, path: str, text: str) -> Imports | None:
        """The import statements of `text`, kept with the file's entry while its text is the one on disk (a tree
        per file would not fit: about 160 bytes per character)."""
        entry = self.files.get(path)
        if entry is not None and entry.text is text and entry.imports is not MISSING:
            return entry.imports  # type: ignore[return-value]
        tree = self.parse(path, text)
        found = import_statements(tree) if tree is not None else None
        if entry is not None and entry.text is text:
            entry.imports = found
        return found

    def parse(self, path: str, text: str) -> ast.Module | None:
        """The tree of `text`, parsed once per text of the file (the key holds the text itself)."""
        key = (path, text)
        hit = self.trees.lookup(key)
        if hit is not MISSING:
            return hit  # type: ignore[return-value]
        try:
            tree: ast.Module | None = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
        self.trees.put(key, tree)
        return tree


def _python_files(root: Path) -> list[tuple[str, Path]]:
    """`.py` files under `root`, folders in name order, hidden and environment folders skipped."""
    out: list[tuple[str, Path]] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS and not d.endswith(".egg-info"))
        here = Path(folder)
        for name in sorted(names):
            if name.endswith(".py"):
                full = here / name
                out.append((full.relative_to(root).as_posix(), full))
        if len(out) > MAX_FILES:
            break
    return out


def index_root(path: str) -> Path:
    """The workspace root of `path` (nearest project marker); without one, the top of its package."""
    folder = Path(path).resolve().parent
    root = workspace_root(folder)
    if root == folder:
        while (root / "__init__.py").is_file() and root.parent != root:
            root = root.parent
    return root


def workspace_index(root: Path) -> WorkspaceIndex:
    indexes = current().workspace_indexes
    key = str(root)
    index = indexes.get(key)
    if index is None:
        index = WorkspaceIndex(root)
        indexes.put(key, index)
    return index  # type: ignore[no-any-return]


@dataclass(frozen=True)
class WorkspaceLaunches:
    """A kernel's launches in other files and the digest of the files they were read from."""

    launches: tuple[ForeignLaunch, ...] = ()
    digest: str = ""  # of each launching file's text: a changed wrapper recompiles the kernel at the next save


def launches_elsewhere(path: str | None, text: str, kernel: str) -> WorkspaceLaunches:
    """Launches of `kernel` (defined in the buffer `text` of `path`) in the other files of its workspace."""
    if not path or f"def {kernel}" not in text:
        return WorkspaceLaunches()
    try:
        if not Path(path).resolve().parent.is_dir():
            return WorkspaceLaunches()
        root = index_root(path)
        rel = Path(path).resolve().relative_to(root).as_posix()
        index = workspace_index(root)
        index.refresh()
        texts = index.texts()
    except (OSError, ValueError, RuntimeError):
        return WorkspaceLaunches()
    texts[rel] = text  # the buffer, saved or not
    try:
        found = foreign_launches(texts, rel, kernel, parse=index.parse, imports_of=index.imports)
    except RecursionError:
        return WorkspaceLaunches()
    digest = hashlib.blake2b(digest_size=16)
    for launching in sorted({f.path for f in found}):
        digest.update(f"{launching}\0{texts[launching]}\0".encode("utf-8", "surrogatepass"))
    return WorkspaceLaunches(tuple(found), digest.hexdigest() if found else "")

