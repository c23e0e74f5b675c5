"""`[tool.tritonlens] ignore` / `per-file-ignores` of the nearest pyproject.toml, for one file on disk.

Read off the event loop (it stats and reads files); the parsed table is kept per pyproject and modification
time, so a folder of files or a burst of keystrokes reads it once.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from ...analysis.ignores import Ignores, project_codes

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: no pyproject tables
    tomllib = None  # type: ignore[assignment]

_CACHE: dict[str, tuple[float, dict[str, Any]]] = {}
_LOCK = threading.Lock()


def _nearest_pyproject(path: str) -> Path | None:
    try:
        start = Path(path).resolve()
    except (OSError, RuntimeError):
        return None
    for folder in start.parents:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _table(pyproject: Path) -> dict[str, Any]:
    try:
        mtime = pyproject.stat().st_mtime
    except OSError:
        return {}
    key = str(pyproject)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None and hit[0] == mtime:
        return hit[1]
    table: dict[str, Any] = {}
    if tomllib is not None:
        try:
            raw = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("tritonlens", {})
            table = raw if isinstance(raw, dict) else {}
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            table = {}
    with _LOCK:
        _CACHE[key] = (mtime, table)
    return table


def project_ignores(path: str) -> tuple[str, ...]:
    """Codes the pyproject above `path` ignores for it; ValueError names a malformed table."""
    pyproject = _nearest_pyproject(path)
    if pyproject is None:
        return ()
    try:
        rel = os.path.relpath(Path(path).resolve(), pyproject.parent).replace(os.sep, "/")
    except ValueError:  # another drive on Windows
        return ()
    return project_codes(_table(pyproject), rel)


def file_ignores(source: str, path: str) -> Ignores:
    """Everything that silences findings of this file; a malformed pyproject table silences nothing from it."""
    try:
        project = project_ignores(path)
    except ValueError:
        project = ()
    return Ignores.of(source, project)
