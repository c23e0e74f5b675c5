"""Several jobs on one local device (`bench --jobs N`): the lock file their timings take turns on.

The workers hold it through `worker/device_lock.py` (which reads the same variable) around every timing."""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path

from .cache import default_cache_dir

DEVICE_LOCK_ENV = "TRITONLENS_DEVICE_LOCK"


def share_device(environ: MutableMapping[str, str]) -> str:
    """Name (and create) the lock file in `environ` (which the workers inherit); an existing setting is kept.
    Returns the path."""
    path = environ.get(DEVICE_LOCK_ENV) or str(default_cache_dir() / "device.lock")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).touch(exist_ok=True)
    environ[DEVICE_LOCK_ENV] = path
    return path
