"""Start worker processes safely, and find and kill every process a worker started, including ones that left its process group or session.

A job may start a grandchild that calls setsid() (or double-forks so it is re-parented to init): killing the
worker's process group misses it, and it keeps the worker's pipes open. Every worker is started with a tag
in its environment (TAG_ENV=<random>); children inherit the environment, so a scan of /proc finds the whole
tree however it detached. The process group, the session and the parent chain are searched as well, for a
child that cleared its environment. Linux only (/proc); elsewhere only the process group is killed.
"""

from __future__ import annotations

import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")

TAG_ENV = "TRITONLENS_WORKER_TAG"
_PROC = "/proc"


def _stat_fields(pid: int) -> tuple[int, int, int] | None:
    """(ppid, pgid, sid) of a live process from /proc/PID/stat (None when it is gone, a zombie or unreadable)."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself hold spaces or parentheses: split after the last ')'.
    fields = raw[raw.rfind(b")") + 2 :].split()
    if not fields or fields[0] in (b"Z", b"X"):
        return None
    try:
        return int(fields[1]), int(fields[2]), int(fields[3])
    except (IndexError, ValueError):
        return None


def _has_tag(pid: int, needle: bytes) -> bool:
    try:
        with open(f"{_PROC}/{pid}/environ", "rb") as f:
            return needle in f.read().split(b"\0")
    except OSError:
        return False


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir(_PROC) if name.isdigit()]
    except OSError:
        return []


def tree(root: int, tag: str | None = None) -> set[int]:
    """Pids of `root` and everything it started: same group or session, descendants, or carrying `tag`."""
    me = os.getpid()
    needle = f"{TAG_ENV}={tag}".encode() if tag else None
    parents: dict[int, int] = {}
    found: set[int] = {root}
    for pid in _pids():
        fields = _stat_fields(pid)
        if fields is None or pid == me:
            continue
        ppid, pgid, sid = fields
        parents[pid] = ppid
        if pgid == root or sid == root or (needle is not None and _has_tag(pid, needle)):
            found.add(pid)
    grew = True
    while grew:  # descendants of anything found so far
        grew = False
        for pid, ppid in parents.items():
            if ppid in found and pid not in found:
                found.add(pid)
                grew = True
    found.discard(me)
    return found


def kill_tree(root: int, tag: str | None = None, rounds: int = 4, reaped: bool = False) -> None:
    """SIGKILL the process group of `root` and every process of its tree; repeat while new ones appear
    (a process may fork between the scan and the kill). reaped: `root` itself has exited and was waited for,
    so only what it left behind is killed (its pid is not signalled: it may belong to another process now)."""
    if not reaped:
        try:
            os.killpg(root, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
    if not os.path.isdir(_PROC):
        return
    for _ in range(rounds):
        alive = [pid for pid in tree(root, tag) if pid != root and _stat_fields(pid) is not None]
        if not alive:
            return
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)


class _Spawner:
    """Starts processes from one long-lived thread.

    Workers ask the kernel for PR_SET_PDEATHSIG, which fires when the *thread* that forked them exits, not
    the process: a worker started from a short-lived request thread would be killed with that thread.
    """

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future[Any]]] = queue.Queue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def run(self, start: Callable[[], T]) -> T:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="tritonlens-spawner", daemon=True)
                self._thread.start()
        done: Future[T] = Future()
        self._jobs.put((start, done))
        return done.result()

    def _loop(self) -> None:
        while True:
            start, done = self._jobs.get()
            try:
                done.set_result(start())
            except BaseException as exc:  # handed to the caller, who raises it
                done.set_exception(exc)


_SPAWNER = _Spawner()


def spawn(start: Callable[[], T]) -> T:
    """Run `start` (which starts a process, e.g. subprocess.Popen) on the long-lived spawner thread."""
    return _SPAWNER.run(start)
