"""`[tool.tritonlens] ignore` / `per-file-ignores` of the nearest pyproject.toml, for one file on disk.

Read off the event loop (it stats and reads files); the table comes from the one pyproject reader
(engine/diagnose/inputs.py, kept in the session per file and modification time), so a folder of files or a burst
of keystrokes reads it once.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...analysis.ignores import Ignores, project_codes
from ..engine.diagnose.inputs import find_pyproject, pyproject_table


def project_ignores(path: str) -> tuple[str, ...]:
    """Codes the pyproject above `path` ignores for it; ValueError names a malformed table."""
    pyproject = find_pyproject(path)
    if pyproject is None:
        return ()
    try:
        rel = os.path.relpath(Path(path).resolve(), pyproject.parent).replace(os.sep, "/")
    except ValueError:  # another drive on Windows
        return ()
    return project_codes(pyproject_table(pyproject), rel)


def file_ignores(source: str, path: str) -> Ignores:
    """Everything that silences findings of this file; a malformed pyproject table silences nothing from it."""
    try:
        project = project_ignores(path)
    except ValueError:
        project = ()
    return Ignores.of(source, project)
