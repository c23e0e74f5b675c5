"""Triton's compiled kernels kept across one pool's verify jobs, for candidates the product wrote.

Every verify job runs its candidate in a fresh process with a fresh TRITON_CACHE_DIR (a confined process writes
only its own folder), so each one compiled again what the last one had: Triton's driver module and the launcher
stubs (a C compiler run each), the baseline's kernels it is timed against, the kernels of an earlier round's text.
A candidate that is not an LLM's (a recipe's, a schedule's, config search's: the user's own code re-emitted) starts
from the pool's kept kernels, hard-linked into its folder (Triton never rewrites a cache file in place: it writes
a temporary and renames it), and what it compiled is kept for the next job. An LLM's candidate starts empty and
keeps nothing: a process that could write any file must not put a kernel under another text's key.
Stdlib only (no tritonlens).
"""

from __future__ import annotations

import os
import shutil

KERNEL_CACHE_ENV = "TRITONLENS_KERNEL_CACHE"  # the pool's folder (ascend_runner/pool.py sets it)
MAX_KEPT_BYTES = 1 << 30  # past this, new kernels are not kept (the jobs still run, compiling as before)
_GROUP = "__grp__"  # Triton's index of a cache entry: written last, so a reader never sees half an entry


def kept_folder(untrusted: bool) -> str | None:
    """The pool's kept kernels for this job's candidate, or None (an LLM's candidate, or no pool folder)."""
    folder = os.environ.get(KERNEL_CACHE_ENV, "")
    return folder if folder and not untrusted and os.path.isdir(folder) else None


def seed(kept: str, cache: str) -> int:
    """Link every kept entry into the candidate's empty cache folder; returns the files linked."""
    linked = 0
    for entry in _entries(kept):
        target = os.path.join(cache, entry)
        os.makedirs(target, exist_ok=True)
        for name in os.listdir(os.path.join(kept, entry)):
            if ".tmp." in name:
                continue
            try:
                os.link(os.path.join(kept, entry, name), os.path.join(target, name))
            except FileExistsError:
                continue
            except OSError:  # another filesystem: a copy
                shutil.copy2(os.path.join(kept, entry, name), os.path.join(target, name))
            linked += 1
    return linked


def keep(cache: str, kept: str) -> int:
    """Copy the entries the candidate's process added into the pool's folder (index files last); returns the files
    kept. Nothing is kept past MAX_KEPT_BYTES."""
    if _size(kept) > MAX_KEPT_BYTES:
        return 0
    added = 0
    for entry in _entries(cache):
        names = sorted(os.listdir(os.path.join(cache, entry)), key=lambda n: n.startswith(_GROUP))
        for name in names:
            src, dst = os.path.join(cache, entry, name), os.path.join(kept, entry, name)
            if ".tmp." in name or os.path.exists(dst) or not os.path.isfile(src) or os.path.islink(src):
                continue
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            tmp = f"{dst}.tmp.{os.getpid()}"
            shutil.copyfile(src, tmp)
            os.replace(tmp, dst)
            added += 1
    return added


def _entries(folder: str) -> list[str]:
    try:
        return [e.name for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _size(folder: str) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                continue
    return total
