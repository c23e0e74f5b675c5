"""The resumable state of a bench: one record per finished task, written atomically after each task.

Each record carries a fingerprint: a hash of the task's text and one of the tool's optimizing code (the recipes,
the config search, the loop and the gate). A resumed run skips tasks already in the state; `--redo GLOB` re-runs
chosen ones and `--redo-stale` those whose fingerprint no longer matches (the task or the tool changed since),
each replacing its record and keeping the old figures under `previous` (the others are left as they are).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from pathlib import Path
from typing import Any

from ...durable.replace_file import replace_file

STATE_VERSION = 1
_PACKAGE = Path(__file__).resolve().parents[3]  # the distribution's root (analysis/, server/, ...)
TOOL_SOURCES = ("analysis/rewrite", "server/engine/optimize")  # what decides which candidates a task gets
PREVIOUS_KEYS = ("status", "speedup", "final_ms", "initial_ms", "producers", "fingerprint", "miss")


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
    replace_file(path, json.dumps(data, indent=1, default=repr))


def _digest(chunks: list[bytes]) -> str:
    h = hashlib.sha256()
    for chunk in chunks:
        h.update(len(chunk).to_bytes(8, "little"))
        h.update(chunk)
    return h.hexdigest()[:16]


def tool_fingerprint(root: Path = _PACKAGE) -> str:
    """Hash of every Python file under TOOL_SOURCES (path and text): changes when a recipe or the search does."""
    files = sorted(p for d in TOOL_SOURCES for p in (root / d).rglob("*.py"))
    return _digest([part for p in files for part in (str(p.relative_to(root)).encode(), p.read_bytes())])


def fingerprint(task: Path, tool: str) -> dict[str, str]:
    return {"task": _digest([task.read_bytes()]), "tool": tool}


def to_run(tasks: list[Path], state: dict[str, Any], redo: list[str], redo_stale: bool,
           tool: str) -> tuple[list[Path], dict[str, str]]:
    """Tasks this run takes, and why each one already in the state is taken again (task -> reason)."""
    todo: list[Path] = []
    why: dict[str, str] = {}
    for task in tasks:
        record = state["tasks"].get(str(task))
        if record is None:
            todo.append(task)
            continue
        pattern = next((g for g in redo if _matches(task, g)), None)
        if pattern is not None:
            why[str(task)] = f"--redo {pattern}"
        elif redo_stale:
            old = record.get("fingerprint") or {}
            now = fingerprint(task, tool)
            changed = [k for k in ("task", "tool") if old.get(k) != now[k]]
            if changed:
                why[str(task)] = "stale: " + " and ".join(
                    "no fingerprint" if not old else f"the {k} changed" for k in changed[: 1 if not old else 2]
                )
        if str(task) in why:
            todo.append(task)
    return todo, why


def _matches(task: Path, pattern: str) -> bool:
    """GLOB against the path or any tail of it: `nll.py`, `loss/*` and `bench/loss/*` all match bench/loss/nll.py."""
    parts = task.as_posix().split("/")
    return any(fnmatch.fnmatch("/".join(parts[i:]), pattern) for i in range(len(parts)))


def replace_record(state: dict[str, Any], key: str, record: dict[str, Any]) -> None:
    """Store a task's new record; a redone task keeps its earlier figures under `previous`."""
    old = state["tasks"].get(key)
    if old is not None:
        record["previous"] = {k: old.get(k) for k in PREVIOUS_KEYS if k in old}
    state["tasks"][key] = record
