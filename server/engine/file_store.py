"""Small files several tritonlens processes update (measured ceilings, recorded launches): read-modify-write
under an exclusive lock, written by atomic rename, so concurrent writers never lose each other's entries and a
reader (or a crash) never sees half a file."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from ..durable.replace_file import replace_file


@contextlib.contextmanager
def locked(lock_path: Path) -> Iterator[None]:
    """An exclusive advisory lock held for the block (fcntl where available; elsewhere no lock)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+b") as fh:
        try:
            import fcntl
        except ImportError:  # not POSIX: atomic rename still keeps each file whole
            yield
            return
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def write_atomic(path: Path, text: str) -> None:
    """Write `text` beside `path` and rename it over `path` (fsynced, mode kept: durable.replace_file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, text)
