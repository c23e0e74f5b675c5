"""The resumable state of a bench: one record per finished task, written atomically after each task."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

STATE_VERSION = 1


def load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"version": STATE_VERSION, "tasks": {}}
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("version") != STATE_VERSION or not isinstance(data.get("tasks"), dict):
        raise ValueError(f"{path} is not a tritonlens bench state (version {STATE_VERSION})")
    return data


def save(path: Path, data: dict[str, Any]) -> None:
    """Write to a temporary file beside it and rename: a run killed mid-write leaves the previous state."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".bench-state-", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=1, default=repr)
    os.replace(tmp, path)
