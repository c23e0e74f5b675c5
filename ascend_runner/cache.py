"""Compile results cached on disk, with an in-memory LRU in front for the warm path.

The key covers everything that changes the compiler's output: the exact text and first line of the kernel
and of every @triton.jit helper it calls (line numbers matter: they are in every `loc`), the module-level
statements (imports, constants), the specialization (signature, constants, divisibility), target,
options and compiler version. Edits elsewhere in the buffer (host code, unrelated kernels) keep the key.
Writes go to a temporary file renamed into place, so concurrent processes never see half an entry.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tritonlens.ascend_runner.protocol import CompileRequest

CACHE_FORMAT = 1  # bump when the stored result layout changes
DEFAULT_MEMORY_ENTRIES = 64


def default_cache_dir() -> Path:
    raw = os.environ.get("TRITONLENS_CACHE_DIR")
    if raw:
        return Path(raw).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tritonlens"


def _is_main_guard(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and "__name__" in ast.unparse(stmt.test)


def dependency_sources(source: str, kernel: str) -> dict[str, str] | None:
    """The text the kernel's compile depends on: "<name>@<first line>" -> source segment.

    Holds the kernel, every top-level function it reaches by name (its @triton.jit helpers, transitively)
    and the module-level statements other than function/class definitions and the __main__ block.
    None when the buffer does not parse or has no such function (callers then key on the whole buffer).
    Memoized: the warm path asks again for the same buffer text.
    """
    found = _dependency_sources(source, kernel)
    return dict(found) if found is not None else None


@functools.lru_cache(maxsize=32)
def _dependency_sources(source: str, kernel: str) -> dict[str, str] | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if kernel not in functions:
        return None
    lines = source.splitlines()

    def text(first: int, last: int | None) -> str:
        return "\n".join(lines[first - 1 : last or first])

    out: dict[str, str] = {}
    todo = [kernel]
    while todo:
        name = todo.pop()
        node = functions[name]
        first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        out[f"{name}@{first}"] = text(first, node.end_lineno)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in functions and sub.id != name:
                if not any(k.startswith(f"{sub.id}@") for k in out) and sub.id not in todo:
                    todo.append(sub.id)
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or _is_main_guard(stmt):
            continue
        out[f"<module>@{stmt.lineno}"] = text(stmt.lineno, stmt.end_lineno)
    return out


def function_sources_key(function_sources: Mapping[str, str]) -> str:
    """A stable digest of {"name@line": text} (as dependency_sources returns, or as a server computes it)."""
    blob = json.dumps(sorted(function_sources.items()), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


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
    }
    blob = json.dumps(parts, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResultCache:
    """get/put of JSON-able result dicts by key: memory LRU first, then files under `root`."""

    def __init__(
        self, root: str | os.PathLike[str] | None = None, memory_entries: int = DEFAULT_MEMORY_ENTRIES
    ) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self.memory_entries = memory_entries
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
            entry = json.loads(self._file(key).read_text(encoding="utf-8"))
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

    def clear_memory(self) -> None:
        with self._lock:
            self._memory.clear()
