"""The workspace's store of recorded launches: `<workspace>/.tritonlens/launches/`, one JSON file per source
file, launches grouped per kernel with the digest of the kernel text they were recorded from.

Written only by `tritonlens record` (and the editor's Record command, which the user asks for); read by levels
2-4 before any other source of argument types and values. A kernel whose text changed since its launches were
recorded gets none of them (`analysis.recorded.kernel_source_hash`). The folder ignores itself in git
(`.tritonlens/.gitignore` holds `*`); delete it to forget every recording.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....analysis.kernels import parse_module
from ....analysis.specialize.recorded import kernel_source_hash, launch_key
from ....analysis.state.session import current
from ...source_files import read_python_source
from ..file_store import locked, write_atomic

STORE_DIR = Path(".tritonlens") / "launches"
MAX_PER_KERNEL = 64
_ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def workspace_root(start: str | os.PathLike[str]) -> Path:
    """The nearest folder at or above `start` holding a project marker; `start`'s folder when none does."""
    path = Path(start).resolve()
    folder = path if path.is_dir() else path.parent
    for candidate in [folder, *folder.parents]:
        if any((candidate / marker).exists() for marker in _ROOT_MARKERS):
            return candidate
    return folder


def _root_of_folder(folder: str) -> str:
    """workspace_root of `folder`, remembered by the session in force (a recorded launch names a few folders,
    asked about for every launch)."""
    roots = current().workspace_roots
    root = roots.get(folder)
    if root is None:
        root = str(workspace_root(folder))
        roots.put(folder, root)
    return root


def project_relative(path: str) -> str:
    """`path` relative to its workspace root, for evidence read from folder names (analysis.platform): the
    folders above the project (where a clone happens to live) say nothing about its files."""
    try:
        absolute = os.path.abspath(path)
        folder = os.path.dirname(absolute)
        root = _root_of_folder(folder)
        if os.path.realpath(root) == os.path.realpath(folder):  # no project marker: the package's folders count
            while os.path.isfile(os.path.join(root, "__init__.py")) and os.path.dirname(root) != root:
                root = os.path.dirname(root)
        return os.path.relpath(absolute, root)
    except (OSError, ValueError):
        return os.path.basename(path)


def _store_file(root: Path, source_path: Path) -> tuple[Path, str]:
    try:
        rel = source_path.resolve().relative_to(root).as_posix()
    except ValueError:
        rel = source_path.resolve().as_posix()
    digest = hashlib.sha256(rel.encode("utf-8")).hexdigest()[:12]
    name = "".join(c if c.isalnum() else "_" for c in Path(rel).stem)[:40]
    return root / STORE_DIR / f"{name}-{digest}.json", rel


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@dataclass
class SaveSummary:
    stored: dict[str, dict[str, int]] = field(default_factory=dict)  # rel file -> kernel -> launches kept
    outside: int = 0  # launches of files outside the workspace (libraries), not stored
    unmatched: list[str] = field(default_factory=list)  # "file: kernel" whose text could not be found


def save(root: Path, launches: Iterable[dict[str, Any]]) -> SaveSummary:
    """Merge `launches` into the store under `root` (launches of a kernel whose text changed replace the old)."""
    summary = SaveSummary()
    by_file: dict[Path, list[dict[str, Any]]] = {}
    for launch in launches:
        file = launch.get("file")
        if not isinstance(file, str) or not launch.get("kernel"):
            continue
        path = Path(file).resolve()
        if root not in path.parents or not path.is_file():
            summary.outside += 1
            continue
        by_file.setdefault(path, []).append(launch)
    for path, items in by_file.items():
        try:
            source = read_python_source(path)
        except (OSError, UnicodeDecodeError):
            summary.unmatched.extend(f"{path}: {launch['kernel']}" for launch in items)
            continue
        store_path, rel = _store_file(root, path)
        with locked(store_path.with_name(store_path.name + ".lock")):  # another record run may merge too
            _merge(root, store_path, rel, source, items, summary)
    return summary


def _merge(
    root: Path, store_path: Path, rel: str, source: str, items: list[dict[str, Any]], summary: SaveSummary
) -> None:
    """Merge one file's launches into its store entry (the caller holds the store's lock)."""
    data = _read(store_path)
    kernels: dict[str, Any] = data.get("kernels") if isinstance(data.get("kernels"), dict) else {}
    for launch in items:
        kernel = str(launch["kernel"])
        digest = kernel_source_hash(source, kernel)
        if digest is None:
            summary.unmatched.append(f"{rel}: {kernel}")
            continue
        entry = kernels.get(kernel)
        if not isinstance(entry, dict) or entry.get("source_hash") != digest:
            entry = {"source_hash": digest, "launches": []}
            kernels[kernel] = entry
        keys = {launch_key(x) for x in entry["launches"]}
        clean = {k: v for k, v in launch.items() if k not in ("snapshot", "index")}
        if launch_key(clean) not in keys and len(entry["launches"]) < MAX_PER_KERNEL:
            entry["launches"].append(clean)
        summary.stored.setdefault(rel, {})[kernel] = len(entry["launches"])
    _write(root, store_path, {"version": 1, "file": rel, "kernels": kernels})


def _write(root: Path, store_path: Path, data: dict[str, Any]) -> None:
    store_path.parent.mkdir(parents=True, exist_ok=True)
    ignore = root / STORE_DIR.parent / ".gitignore"
    if not ignore.exists():
        write_atomic(ignore, "# tritonlens's recorded launches: local data, never committed\n*\n")
    write_atomic(store_path, json.dumps(data, indent=1, default=repr))


def recorded_for(path: str, source: str, kernel: str | None = None) -> list[dict[str, Any]]:
    """Stored launches of the kernels of `path` whose current text (in `source`) is what was recorded.
    Each comes back with `file` set to `path`, so levels 2-4 take it as this buffer's."""
    if not path or path.startswith("<"):
        return []
    root = workspace_root(path)
    store_path, _ = _store_file(root, Path(path))
    if not store_path.is_file():
        return []
    kernels = _read(store_path).get("kernels")
    if not isinstance(kernels, dict):
        return []
    if parse_module(source).tree is None:  # the shared parse of this text; an unparsable buffer matches nothing
        return []
    out: list[dict[str, Any]] = []
    for name, entry in kernels.items():
        if kernel is not None and name != kernel or not isinstance(entry, dict):
            continue
        if entry.get("source_hash") != kernel_source_hash(source, name):
            continue  # the kernel was edited since: its recorded launches no longer describe it
        out.extend({**launch, "file": path, "kernel": name} for launch in entry.get("launches") or [])
    return out


def recorded_kernels(path: str, source: str) -> dict[str, int]:
    """kernel -> number of valid recorded launches (for the editor's code lens)."""
    counts: dict[str, int] = {}
    for launch in recorded_for(path, source):
        counts[launch["kernel"]] = counts.get(launch["kernel"], 0) + 1
    return counts


def keep_profiled_launches(path: str, result: dict[str, Any]) -> SaveSummary | None:
    """A profile run (KernelBench module, script, entry) recorded real launches anyway: keep those of `path`'s
    kernels in the store, so levels 3-4 use them too. Launches a remote runner reports under its sandbox path
    are this file's when the file name matches. Never raises (a store that cannot be written is no error)."""
    launches = [dict(x) for x in result.get("launches") or [] if isinstance(x, dict)]
    if not launches or not path or path.startswith("<"):
        return None
    name = os.path.basename(path)
    for launch in launches:
        file = launch.get("file")
        if isinstance(file, str) and os.path.basename(file) == name and not os.path.exists(file):
            launch["file"] = path
    try:
        return save(workspace_root(path), launches)
    except OSError:
        return None
