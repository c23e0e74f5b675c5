"""Measured device ceilings (copy bandwidth, bf16 matmul rate), cached per device and per runner.

The profile job measures them (ascend_runner/worker/harness_backend.py `ceilings`) when this cache has no entry for
the runner and backend it is sent to, so the roofline uses measured ceilings by default and the measurement runs
once per device and runner. Written atomically (a temporary file renamed over the old one), so two profiles
finishing together never leave a torn file. Layout: {"devices": {name: ceilings}, "runners": {key: name}}; a
table of the older flat form {name: ceilings} is still read.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from ..file_store import locked, write_atomic

_LOCK = threading.Lock()


def cache_file() -> Path:
    root = os.environ.get("TRITONLENS_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "tritonlens"
    )
    return Path(root) / "ceilings.json"


def runner_key(runner: str, backend: str) -> str:
    return f"{runner}|{backend}"


def _read() -> dict[str, Any]:
    try:
        table = json.loads(cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"devices": {}, "runners": {}}
    if not isinstance(table, dict):
        return {"devices": {}, "runners": {}}
    if "devices" not in table:  # the older flat form: device name -> ceilings
        return {"devices": {k: v for k, v in table.items() if isinstance(v, dict)}, "runners": {}}
    table.setdefault("runners", {})
    return table


def load(device_name: str | None) -> dict[str, Any] | None:
    entry = _read()["devices"].get(device_name or "")
    return entry if isinstance(entry, dict) else None


def needs_measuring(runner: str, backend: str) -> bool:
    """Whether a profile through this runner and backend should measure the ceilings (none cached yet)."""
    if backend not in ("cuda", "npu"):
        return False  # the interpreter has no device to measure
    table = _read()
    device = table["runners"].get(runner_key(runner, backend))
    return not (isinstance(device, str) and isinstance(table["devices"].get(device), dict))


def save(
    device_name: str, ceilings: dict[str, Any], runner: str | None = None, backend: str | None = None
) -> None:
    """Record measured ceilings for a device (and which device this runner reaches); never raises."""
    path = cache_file()
    try:
        # The thread lock serves this process; the file lock other tritonlens processes finishing together.
        with _LOCK, locked(path.with_name(path.name + ".lock")):
            table = _read()
            table["devices"][device_name] = ceilings
            if runner and backend:
                table["runners"][runner_key(runner, backend)] = device_name
            write_atomic(path, json.dumps(table, indent=1))
    except (OSError, ValueError) as exc:
        print(f"tritonlens: could not cache measured ceilings: {exc}", file=sys.stderr)
