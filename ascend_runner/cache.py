"""Compile results cached on disk, with an in-memory LRU in front for the warm path.

The key covers everything that changes the compiler's output: the exact text and first line of the kernel
and of every @triton.jit helper it calls (line numbers matter: they are in every `loc`), the module-level
statements (imports, constants), the specialization (signature, constants, divisibility), target,
options and compiler version. Edits elsewhere in the buffer (host code, unrelated kernels) keep the key.
The worker also loads the user's own modules the buffer imports (`from .utils import helper`), from the
folder of the request's path: their digests are in the key too (see sibling_digests).
Writes go to a temporary file renamed into place, so concurrent processes never see half an entry.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import stat
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..analysis.kernels.dependencies import dependency_sources, imported_modules, module_imports
from .protocol import CompileRequest

CACHE_FORMAT = 2  # bump when the stored result layout changes (2: Ascend hivm stages)
DEFAULT_MEMORY_ENTRIES = 64
DEFAULT_MAX_DISK_MB = 512.0  # the on-disk cache is trimmed, least recently used first, past this
TRIM_EVERY_PUTS = 32  # how often a writer checks the disk size (a scan costs one stat per entry)


def default_cache_dir() -> Path:
    raw = os.environ.get("TRITONLENS_CACHE_DIR")
    if raw:
        return Path(raw).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tritonlens"


# Sibling modules: only .py files under the buffer's folder, at most this many, and only files up to this size
# are read (a bigger one is keyed by its size and modification time), so a key never reads unbounded data.
SIBLING_MAX_FILES = 32
SIBLING_MAX_BYTES = 512 * 1024
_RECENT_NS = 2_000_000_000


@functools.lru_cache(maxsize=256)
def _imported_names(source: str) -> tuple[tuple[int, str], ...]:
    """`imported_modules` of a sibling file's text (the buffer's own come from its shared parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    return imported_modules(tree)


def _module_files(root: Path, package_dir: Path, level: int, dotted: str) -> list[Path]:
    """Files under `root` that `import` would load for (level, dotted), the way the worker resolves them."""
    if level > 1:
        return []  # above the buffer's folder: not a sibling
    base = package_dir if level == 1 else root
    parts = dotted.split(".")
    found: list[Path] = []
    for depth in range(1, len(parts) + 1):
        stem = base.joinpath(*parts[:depth])
        for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
            if candidate.is_file() and candidate.resolve().is_relative_to(root):
                found.append(candidate)
                break
        else:
            if not stem.is_dir():
                break
    return found


@functools.lru_cache(maxsize=1024)
def _file_digest(path: str, mtime_ns: int, size: int) -> tuple[str, tuple[tuple[int, str], ...]]:
    """sha256 of a sibling file and its own imports; cached by (path, mtime, size) so warm keys only stat."""
    if size > SIBLING_MAX_BYTES:
        return f"large:{size}:{mtime_ns}", ()
    try:
        data = Path(path).read_bytes()[: SIBLING_MAX_BYTES + 1]
    except OSError:
        return "unreadable", ()
    text = data.decode("utf-8", "replace")
    return hashlib.sha256(data).hexdigest(), _imported_names(text)


def sibling_digests(source: str, path: str) -> dict[str, str]:
    """Digest of every local module the buffer imports (transitively): relative path -> sha256.

    Resolved as the worker resolves them: absolute imports against the folder of `path`, relative ones
    against the importing file's folder; only regular .py files inside that folder are considered, at most
    SIBLING_MAX_FILES. Empty when `path` names no folder on this machine (an unsaved or remote buffer).
    """
    return {name: digest for name, (digest, _file) in _siblings(source, path).items()}


def sibling_files(source: str, path: str) -> dict[str, str]:
    """The text of every local module the buffer imports (relative path -> text), as sibling_digests finds
    them: what a remote runner needs to import them. Files over SIBLING_MAX_BYTES are left out."""
    out: dict[str, str] = {}
    for name, (_digest, file) in _siblings(source, path).items():
        if name.startswith(OUTSIDE):
            continue  # outside the folder a remote job recreates
        try:
            if file.stat().st_size <= SIBLING_MAX_BYTES:
                out[name] = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return out


OUTSIDE = "<package root>/"  # names of modules of the file's package found outside its folder (digests only)


def _package_root(folder: Path) -> Path | None:
    """The folder above the file's top package (where `import pkg.mod` resolves), when its folder is a package."""
    top = None
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        folder = folder.parent
        top = folder
    return top


def _siblings(source: str, path: str) -> dict[str, tuple[str, Path]]:
    try:
        root = Path(os.path.abspath(path)).parent.resolve()
        if not root.is_dir():
            return {}
    except (OSError, ValueError):
        return {}
    out: dict[str, tuple[str, Path]] = {}
    top = _package_root(root)
    todo: list[tuple[Path, tuple[tuple[int, str], ...]]] = [(root, module_imports(source))]
    while todo and len(out) < SIBLING_MAX_FILES:
        package_dir, imports = todo.pop(0)
        for level, dotted in imports:
            files = _module_files(root, package_dir, level, dotted)
            if top is not None and level == 0:  # a package's module imports its package from the package root
                files += _module_files(top, package_dir, level, dotted)
            for file in files:
                name = file.relative_to(root).as_posix() if file.resolve().is_relative_to(root) else \
                    OUTSIDE + file.relative_to(top).as_posix()
                if name in out or len(out) >= SIBLING_MAX_FILES:
                    continue
                try:
                    info = file.stat()
                except OSError:
                    continue
                if not stat.S_ISREG(info.st_mode):
                    continue
                # A file written in the last moments may change again within the file system's timestamp
                # granularity without its (mtime, size) changing: read it again rather than trust the memo.
                recent = time.time_ns() - info.st_mtime_ns < _RECENT_NS
                digest_of = _file_digest.__wrapped__ if recent else _file_digest
                digest, nested = digest_of(str(file), info.st_mtime_ns, info.st_size)
                out[name] = (digest, file)
                todo.append((file.parent, nested))
    return out


def function_sources_key(function_sources: Mapping[str, str]) -> str:
    """A stable digest of {"name@line": text} (as dependency_sources returns, or as a server computes it)."""
    blob = json.dumps(sorted(function_sources.items()), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=1)
def worker_digest() -> str:
    """Digest of the worker code that produces results (it changes when tritonlens is upgraded)."""
    h = hashlib.sha256()
    for file in sorted((Path(__file__).resolve().parent / "worker").rglob("*.py")):
        h.update(file.name.encode())
        h.update(file.read_bytes())
    return h.hexdigest()[:16]


def compile_key(req: CompileRequest, compiler: str, function_sources: Mapping[str, str] | None = None) -> str:
    """Cache key of a compile request; function_sources defaults to dependency_sources(req.source, req.kernel)."""
    if function_sources is None:
        function_sources = dependency_sources(req.source, req.kernel)
    code = function_sources_key(function_sources) if function_sources else "buffer:" + req.source
    parts = {
        "format": CACHE_FORMAT,
        "code": code,
        "path": req.path,  # locations name the file: another path means other IR text
        "kernel": req.kernel,
        "signature": req.signature,
        "constants": req.constants,
        "divisibility": sorted(req.divisibility),
        "target": req.target,
        "options": req.options,
        "compiler": compiler,
        "worker": worker_digest(),  # a new worker may compile what an older one could not
    }
    # Uploaded modules (a remote client's) are what the worker imports; else the files beside the path.
    siblings = (
        {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in req.files.items()}
        if req.files
        else sibling_digests(req.source, req.path)
    )
    if siblings:
        parts["siblings"] = siblings  # an edit in an imported helper file must miss the cache
    blob = json.dumps(parts, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResultCache:
    """get/put of JSON-able result dicts by key: memory LRU first, then files under `root`."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        memory_entries: int = DEFAULT_MEMORY_ENTRIES,
        max_disk_mb: float | None = DEFAULT_MAX_DISK_MB,
    ) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self.memory_entries = memory_entries
        self.max_disk_bytes = int(max_disk_mb * 1024 * 1024) if max_disk_mb else None
        self._puts = 0
        self._memory: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def _file(self, key: str) -> Path:
        return self.root / "compile" / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            hit = self._memory.get(key)
            if hit is not None:
                self._memory.move_to_end(key)
                self.hits += 1
                return hit
        try:
            file = self._file(key)
            entry = json.loads(file.read_text(encoding="utf-8"))
            os.utime(file)  # recently used: the trim keeps it
        except (OSError, ValueError):
            with self._lock:
                self.misses += 1
            return None
        if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT or entry.get("key") != key:
            with self._lock:
                self.misses += 1
            return None
        value = entry.get("value")
        if not isinstance(value, dict):
            return None
        self._remember(key, value)
        with self._lock:
            self.hits += 1
        return value

    def _remember(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            self._memory[key] = value
            self._memory.move_to_end(key)
            while len(self._memory) > self.memory_entries:
                self._memory.popitem(last=False)

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store in memory and on disk; a disk that cannot be written only costs the disk copy."""
        self._remember(key, value)
        target = self._file(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{key[:8]}.", suffix=".tmp", dir=target.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump({"format": CACHE_FORMAT, "key": key, "value": value}, f)
                os.replace(tmp, target)  # atomic: readers see the old file or the whole new one
            except BaseException:
                try:
                    os.remove(tmp)
                except OSError:
                    pass
                raise
        except OSError:
            pass
        with self._lock:
            self._puts += 1
            due = self._puts % TRIM_EVERY_PUTS == 1
        if due:
            self.trim()

    def trim(self) -> int:
        """Delete the least recently used entries on disk until the cache is under 80% of its bound (so a
        trim is not due again at once); returns how many were deleted. Other processes may trim too: a file
        already gone is skipped."""
        if self.max_disk_bytes is None:
            return 0
        entries = []
        for file in (self.root / "compile").glob("*/*.json"):
            try:
                info = file.stat()
            except OSError:
                continue
            entries.append((info.st_mtime, info.st_size, file))
        total = sum(size for _, size, _ in entries)
        if total <= self.max_disk_bytes:
            return 0
        deleted = 0
        for _, size, file in sorted(entries, key=lambda e: e[0]):
            if total <= 0.8 * self.max_disk_bytes:
                break
            try:
                file.unlink()
            except OSError:
                continue
            total -= size
            deleted += 1
        return deleted

    def clear_memory(self) -> None:
        with self._lock:
            self._memory.clear()
