"""The label of a compile the runner built from the file's source alone (its package could not be imported).

The runner's worker (`ascend_runner/worker/source_alone.py`) falls back to the kernel's own statements when the
file cannot be imported as a module of its package (a package `__init__` that probes a device or a vendor
backend); that is an assumption about the code, so every finding of such a compile names it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def source_alone_label(metadata: Mapping[str, Any] | None) -> str:
    """ " [analyzed from the file's source alone: ...]" for a compile built that way, else ""."""
    info = (metadata or {}).get("source_alone")
    if not isinstance(info, Mapping):
        return ""
    parts = [
        f"its package could not be imported here ({info.get('reason') or 'a top-level statement failed'})"
    ]
    dropped = [str(d) for d in info.get("dropped_decorators") or []]
    if dropped:
        parts.append(
            "decorators not applied: " + ", ".join(dropped[:4]) + (" ..." if len(dropped) > 4 else "")
        )
    return " [analyzed from the file's source alone: " + "; ".join(parts) + "]"
