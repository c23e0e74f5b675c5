"""Replace a file's contents so that it is always either the old file or the new one, never a mix.

The new bytes go to a temporary file in the same folder (same file system, so the rename is atomic), are
fsynced, get the old file's permission bits, and are renamed over the target; the folder is fsynced so the
rename survives a crash. A symlink is resolved and its target written (the link stays a link), and the
caller is told. With `expected` (what was read before), the write is refused when the file changed since then
(its hash) or when the name now leads to another file (a link moved). Every failure is a `WriteRefused` whose
message says what happened and that the file is unchanged; no traceback reaches the user.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path


class WriteRefused(Exception):
    """The file was not written; `str()` is the message for the user."""


@dataclass(frozen=True)
class ReadSnapshot:
    """A file as read for an update: the name given, the file it leads to, its bytes and their hash."""

    named: Path
    real: Path
    data: bytes
    sha256: str


@dataclass(frozen=True)
class Written:
    named: Path
    real: Path

    @property
    def note(self) -> str:
        """'' for a plain file; how the name was resolved for a link."""
        return "" if self.real == Path(os.path.abspath(self.named)) else f" (a symlink: wrote its target {self.real})"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    if exc.errno == errno.EDQUOT:
        return "disk quota exceeded"
    return exc.strerror or type(exc).__name__


def read_snapshot(path: str | os.PathLike[str]) -> ReadSnapshot:
    """Read `path` for a later `replace_file(..., expected=)`; raises WriteRefused when it cannot be read."""
    named = Path(path)
    try:
        real = Path(os.path.realpath(named))
        data = real.read_bytes()
    except OSError as exc:
        raise WriteRefused(f"cannot read {named}: {_why(exc)}") from None
    return ReadSnapshot(named, real, data, _digest(data))


def replace_file(
    path: str | os.PathLike[str], data: bytes | str, expected: ReadSnapshot | None = None, mode: int | None = None
) -> Written:
    """Write `data` (text as UTF-8) to `path` atomically (see the module docstring)."""
    named = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    real = Path(os.path.realpath(named))
    if expected is not None and real != expected.real:
        raise WriteRefused(
            f"{named} now leads to {real}, not to {expected.real} that was read; not written"
        )
    folder = real.parent
    try:
        current = os.stat(real)
    except FileNotFoundError:
        current = None
    except OSError as exc:
        raise WriteRefused(f"cannot write {named}: {_why(exc)}") from None
    if current is not None and not stat.S_ISREG(current.st_mode):
        raise WriteRefused(f"{named} is not a regular file; not written")
    if expected is not None and current is None:
        raise WriteRefused(f"{named} was removed since it was read; not written")
    if mode is None:
        mode = stat.S_IMODE(current.st_mode) if current is not None else _default_mode()
    unchanged = f"{named} is unchanged" if current is not None else f"{named} was not created"
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tritonlens-tmp", dir=folder)
    except OSError as exc:
        raise WriteRefused(f"cannot write {named}: {_why(exc)}; {unchanged}") from None
    try:
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        if expected is not None:
            # Checked as late as possible: an editor's save between our read and here must not be lost.
            now = real.read_bytes()
            if _digest(now) != expected.sha256:
                raise WriteRefused(f"{named} changed since it was read; not overwritten")
        os.replace(tmp, real)
    except WriteRefused:
        _remove(tmp)
        raise
    except OSError as exc:
        _remove(tmp)
        raise WriteRefused(f"cannot write {named}: {_why(exc)}; {unchanged}") from None
    except BaseException:
        _remove(tmp)
        raise
    _fsync_folder(folder)
    return Written(named, real)


def _default_mode() -> int:
    """0o666 less the umask, read without setting it (os.umask would change it for every thread a moment)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return 0o666 & ~int(line.split()[1], 8)
    return 0o644


def _remove(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(tmp)


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
