"""Which command records a file's real launches: a test of the workspace that imports the file's module (`pytest
-q tests/test_x.py`), else the file itself when it has a `__main__` block. Shared by the editor's Record command
and the hint of a kernel compiled on guessed values (CLI and editor), so both name the exact command to run.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from ...source_files import read_regular_file
from .launch_store import workspace_root

_SKIP = frozenset({"node_modules", "build", "dist", "site-packages", "__pycache__"})


def default_command(path: Path, root: Path) -> list[str] | None:
    """A test of the workspace that imports the file's module, else the file itself when it has a main block."""
    stem = path.stem
    pattern = re.compile(rf"^\s*(from|import)\s+[\w.]*\b{re.escape(stem)}\b", re.M)
    candidates: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP)
        for name in sorted(filenames):
            if name.startswith("test") and name.endswith(".py"):
                candidates.append(Path(dirpath) / name)
        if len(candidates) > 2000:
            break
    named = [c for c in candidates if c.stem in (f"test_{stem}", f"test{stem}")]
    for test in named + [c for c in candidates if c not in named]:
        try:
            if test == path or pattern.search(read_regular_file(test).decode("utf-8", "replace")):
                return ["pytest", "-q", str(test.relative_to(root))]
        except OSError:
            continue
    try:
        text = read_regular_file(path).decode("utf-8", "replace")
    except OSError:
        return None
    if "__main__" in text:
        return ["python", str(path.relative_to(root)) if root in path.parents else str(path)]
    return None


def record_hint(path: str) -> tuple[list[str], str] | None:
    """(argv, "tritonlens record -- <argv>") for `path`'s workspace, or None when no test or script launches it."""
    if not path or path.startswith("<") or not Path(path).is_file():
        return None
    file = Path(path).resolve()
    root = workspace_root(str(file))
    argv = default_command(file, Path(root).resolve())
    return (argv, "tritonlens record -- " + shlex.join(argv)) if argv else None
