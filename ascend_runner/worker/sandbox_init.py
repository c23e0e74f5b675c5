"""The inside of an `unshare` sandbox (sandbox_exec.py, used where bubblewrap is missing): runs as the namespace's
root in a private mount namespace, makes every mount read-only, puts fresh tmpfs on /dev/shm and the hidden folders,
binds the one writable folder back, then execs the command.

    python -I -S sandbox_init.py WRITABLE HIDDEN,... -- COMMAND...
Any step that fails stops here (exit 97): the command never runs half-confined. Stdlib only.
"""

from __future__ import annotations

import os
import subprocess
import sys


def _mount(*args: str) -> None:
    proc = subprocess.run(["mount", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(f"sandbox: mount {' '.join(args)} failed: {proc.stderr.strip()}\n")
        sys.exit(97)


def _mount_points() -> list[str]:
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        points = [line.split()[4].replace("\\040", " ") for line in fh]
    return sorted(set(points), key=len)


def main(argv: list[str]) -> None:
    writable, hidden_arg, sep, *command = argv
    if sep != "--" or not command:
        sys.exit(97)
    hidden = [h for h in hidden_arg.split(",") if h]
    _mount("--make-rprivate", "/")
    keep = os.open(writable, os.O_RDONLY | os.O_DIRECTORY)
    for point in _mount_points():
        if point == "/proc" or point.startswith("/proc/"):
            continue  # the namespace's own procfs (--mount-proc)
        _mount("-o", "remount,bind,ro", point)
    for folder in ["/dev/shm", *hidden]:
        if os.path.isdir(folder):
            _mount("-t", "tmpfs", "-o", "mode=1777,nosuid,nodev", "tmpfs", folder)
    os.makedirs(writable, exist_ok=True)
    _mount("--no-canonicalize", "--bind", f"/proc/{os.getpid()}/fd/{keep}", writable)  # by fd: the path is under the tmpfs now
    _mount("-o", "remount,bind,rw", writable)
    os.close(keep)
    os.chdir(writable)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
