"""Job folders of the runner service, and confinement of every path a payload names.

Each job gets a fresh private folder (mkdtemp: a random name, mode 0700, made with O_EXCL, so a name planted
by another user is never reused) under a root the service owns (checked: a real directory, owned by this
user, writable by nobody else). Uploaded files are written inside it without following symlinks. Every path
in a payload (harness.path when the runner must read it, artifacts_dir, replay.snapshot) must resolve inside
the job's folder, or inside a folder the operator allowed with `--allow-path`; relative paths are taken
relative to the job's folder. The job's folder becomes the import folder of the job (`workdir`).
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

SAFE_FILE_PART = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class SandboxError(ValueError):
    """A path or folder the service refuses; the message says which and why."""


def safe_relative_path(name: str) -> PurePosixPath:
    """A file name a client may upload: relative, no '..', no hidden parts, plain characters."""
    path = PurePosixPath(name)
    if path.is_absolute() or not path.parts or len(path.parts) > 8:
        raise SandboxError(f"file name {name!r} must be a short relative path")
    for part in path.parts:
        if part in (".", "..") or part.startswith(".") or not SAFE_FILE_PART.match(part):
            raise SandboxError(f"file name {name!r} has an unsafe part {part!r}")
    return path


def private_root(path: str | os.PathLike[str] | None) -> Path:
    """The folder job folders are made in: a fresh private one, or the operator's, checked."""
    if path is None:
        return Path(tempfile.mkdtemp(prefix="tritonlens-runner-"))
    root = Path(path)
    try:
        os.mkdir(root, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise SandboxError(f"cannot create sandbox root {root}: {exc.strerror}") from None
    info = os.lstat(root)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise SandboxError(f"sandbox root {root} must be a real directory, not a link or a file")
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        raise SandboxError(f"sandbox root {root} belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o022:
        raise SandboxError(f"sandbox root {root} is writable by other users: chmod go-w it or pick another")
    return root


def make_job_dir(root: Path, job_id: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"{job_id}-", dir=root))


def write_files(job_dir: Path, files: dict[str, str]) -> None:
    """Write uploaded {relative name: text} into the job's folder; never through a symlink."""
    for name, text in files.items():
        rel = safe_relative_path(name)
        folder = job_dir
        for part in rel.parts[:-1]:
            folder = folder / part
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                if not stat.S_ISDIR(os.lstat(folder).st_mode):
                    raise SandboxError(f"{name!r}: {part!r} is not a folder") from None
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(folder / rel.parts[-1], flags, 0o600)
        except FileExistsError:
            raise SandboxError(f"file {name!r} is uploaded twice") from None
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    real = Path(os.path.realpath(path))
    return any(real == r or real.is_relative_to(r) for r in (Path(os.path.realpath(x)) for x in roots))


def confine_path(value: Any, field: str, job_dir: Path | None, allowed: Sequence[Path]) -> str:
    """A payload path made absolute: relative ones under the job's folder; absolute ones only inside the job's
    folder or an allowed root. With job_dir None only the shape is checked (at submission)."""
    if not isinstance(value, str) or not value or "\0" in value:
        raise SandboxError(f"{field} must be a non-empty path")
    path = PurePosixPath(value)
    if not path.is_absolute():
        if ".." in path.parts:
            raise SandboxError(f"{field} {value!r} must not climb out of the job's folder")
        return str(job_dir / path) if job_dir is not None else value
    roots = [*allowed, *([job_dir] if job_dir is not None else [])]
    if job_dir is None and not allowed:
        raise SandboxError(_outside(field, value))
    if job_dir is None:
        if not any(Path(value).is_relative_to(r) for r in allowed):
            raise SandboxError(_outside(field, value))
        return value
    if not _inside(Path(value), roots):
        raise SandboxError(_outside(field, value))
    return value


def _outside(field: str, value: str) -> str:
    return (
        f"{field} {value!r} is outside the job's folder: use a path relative to it (upload inputs as `files`), "
        "or ask the runner's operator to start it with --allow-path FOLDER"
    )


# Payload fields that name a file or folder the runner reads or writes: (path of keys, needed when).
def confine_payload(
    kind: str, payload: dict[str, Any], job_dir: Path | None, allowed: Sequence[Path]
) -> dict[str, Any]:
    """The payload with every runner-side path confined (see the module docstring); raises SandboxError."""
    out = dict(payload)
    if kind in ("run", "profile", "verify"):
        harness = out.get("harness")
        if isinstance(harness, dict) and harness.get("source") is None and "path" in harness:
            # The runner reads this file: it must be one the client uploaded (or an allowed one).
            out["harness"] = {**harness, "path": confine_path(harness["path"], "harness.path", job_dir, allowed)}
        if out.get("artifacts_dir"):
            out["artifacts_dir"] = confine_path(out["artifacts_dir"], "artifacts_dir", job_dir, allowed)
        replay = out.get("replay")
        if isinstance(replay, dict) and "snapshot" in replay:
            out["replay"] = {**replay, "snapshot": confine_path(replay["snapshot"], "replay.snapshot", job_dir, allowed)}
    if job_dir is not None:
        out["workdir"] = str(job_dir)
    return out
