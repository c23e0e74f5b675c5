"""One accelerator shared by several jobs at once (`tritonlens bench --jobs N`): timings hold it alone.

When TRITONLENS_DEVICE_LOCK names a file, every timing on the device holds an exclusive flock on it, so no two
timings overlap (compiling and correctness checks still run side by side). The file is opened read-only, which
works inside the read-only sandbox of a candidate; a lock that is named but cannot be opened is an error, never
an unlocked timing. Re-entrant within a process (an interleaved series holds it across its samples). The seconds spent waiting for
it are counted (`waited_s`): jobs report them, so a task's time budget is not spent on other tasks' timings.
Stdlib only (no tritonlens).
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

ENV = "TRITONLENS_DEVICE_LOCK"
_state = threading.local()
_waited = [0.0]  # seconds this process has waited for the lock, all threads


def waited_s() -> float:
    """Seconds this process has spent waiting for another job's hold on the device to end."""
    return _waited[0]


class DeviceLockUnavailable(RuntimeError):
    """The lock file named by TRITONLENS_DEVICE_LOCK cannot be opened: timing would not be exclusive."""


@contextmanager
def exclusive() -> Iterator[None]:
    """Hold the device alone for the block (a no-op when no lock is named or this thread holds it already)."""
    path = os.environ.get(ENV, "").strip()
    depth = getattr(_state, "depth", 0)
    if not path or depth:
        _state.depth = depth + 1
        try:
            yield
        finally:
            _state.depth -= 1
        return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise DeviceLockUnavailable(
            f"{ENV}={path} cannot be opened ({exc.strerror}): timings would share the device with other jobs"
        ) from None
    try:
        began = time.monotonic()
        fcntl.flock(fd, fcntl.LOCK_EX)
        _waited[0] += time.monotonic() - began
        _state.depth = 1
        try:
            yield
        finally:
            _state.depth = 0
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
