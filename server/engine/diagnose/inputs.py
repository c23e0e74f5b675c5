"""What a compile reads besides the buffer: `[tool.tritonlens]` of the nearest pyproject.toml (per-kernel
values) and the launches `tritonlens record` stored for the kernel's current text."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pyproject overrides need 3.11's tomllib
    tomllib = None  # type: ignore[assignment]


def find_pyproject(path: str | Path) -> Path | None:
    """The nearest pyproject.toml at or above the file's folder."""
    try:
        start = Path(path).resolve()
    except (OSError, RuntimeError):
        return None
    for folder in [start, *start.parents] if start.is_dir() else start.parents:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def find_pyproject_overrides(path: str | Path) -> dict[str, Any]:
    """`[tool.tritonlens]` of the nearest pyproject.toml ({} when absent or unreadable).

    Kernel overrides live under its `kernels` key: {"kernels": {"matmul_kernel": {"BLOCK_M": 128, ...}}}.
    """
    pyproject = find_pyproject(path)
    if pyproject is None or tomllib is None:
        return {}
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    table = data.get("tool", {}).get("tritonlens", {})
    return table if isinstance(table, dict) else {}


def kernel_overrides(table: Mapping[str, Any] | None, kernel: str) -> dict[str, Any]:
    """The per-kernel table out of `[tool.tritonlens]` (or of its `kernels` sub-table passed directly)."""
    if not table:
        return {}
    kernels = table.get("kernels", table)
    entry = kernels.get(kernel) if isinstance(kernels, Mapping) else None
    return dict(entry) if isinstance(entry, Mapping) else {}


def stored_launches(path: str, source: str, kernel: str | None) -> list[dict[str, Any]]:
    from ...launch_store import recorded_for

    try:
        return recorded_for(path, source, kernel)
    except OSError:  # an unreadable store is no reason to stop the analysis
        return []


def same_file(recorded_file: Any, path: str) -> bool:
    """A recorded launch belongs to this buffer when it names no file or names this one."""
    if not isinstance(recorded_file, str) or not recorded_file:
        return True
    try:
        return os.path.realpath(recorded_file) == os.path.realpath(path)
    except (OSError, ValueError):
        return recorded_file == path
