"""Pools of worker processes, one pool per runner environment.

A worker is `python -u ascend_runner/worker/main.py` under the environment's interpreter, in its own
process group, speaking JSON lines. Workers start lazily and are reused. A job that runs past its wall
timeout, is cancelled, or whose worker dies (segfault, os._exit, out of memory) gets a failed result
envelope with stage "worker" and a message that says what happened; the worker's whole process group is
killed and the next job gets a fresh worker. A `verify` job always gets a worker that has run nothing before and
is not reused after it (no state of one job, one client's patched torch say, survives into a verdict): local,
remote and Ray runners all run their jobs through this pool. Thread-safe: any number of threads may call `submit`.
"""

from __future__ import annotations

import atexit
import collections
import dataclasses
import json
import logging
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .proctree import TAG_ENV, kill_tree, spawn
from .protocol import SCHEMA_VERSION

log = logging.getLogger("tritonlens.runner")

WORKER_SCRIPT = Path(__file__).resolve().parent / "worker" / "main.py"
_POLL_S = 0.05  # how often a waiting job looks at its cancel event
_EOF = object()
_PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


# the pool's folder of kept reference outputs (worker/verify_isolated.py reads the same name: workers import no
# tritonlens module)
REFERENCE_STORE_ENV = "TRITONLENS_REFERENCE_STORE"
KERNEL_CACHE_ENV = "TRITONLENS_KERNEL_CACHE"  # Triton kernels kept across the pool's verify jobs (kernel_cache.py)
KERNELS_SUFFIX = ".kernels"  # beside the pool's reference store, removed with it


def references_parent() -> str:
    """The one folder (mode 0700) holding every pool's kept references: every confined candidate gets it covered,
    whichever pool it runs in (worker/verify_isolated.py, `references_parent`, the same path)."""
    folder = os.path.join(tempfile.gettempdir(), f"tritonlens-references-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


def _new_store() -> str:
    for _ in range(3):  # another pool may remove the (empty) parent between makedirs and mkdtemp
        try:
            return tempfile.mkdtemp(prefix="pool-", dir=references_parent())
        except FileNotFoundError:
            continue
    return tempfile.mkdtemp(prefix="pool-", dir=references_parent())


def _remove_store(store: str) -> None:
    """The pool's kept references and kernels, and their parent once no other pool uses it: nothing stays in the
    temp folder."""
    shutil.rmtree(store, ignore_errors=True)
    shutil.rmtree(store + KERNELS_SUFFIX, ignore_errors=True)
    try:
        os.rmdir(os.path.dirname(store))
    except OSError:
        pass  # another pool's store is still there


@dataclass
class PoolConfig:
    python: str
    size: int = 1  # concurrent workers (each holds one job at a time)
    # Per worker: resident memory watched by the pool, plus an address-space cap (RLIMIT_AS) where no
    # accelerator is visible (GPU/NPU drivers reserve huge address ranges, so there only RSS is watched).
    memory_limit_mb: float | None = 16384
    address_space_cap: bool | None = None  # None: cap where no accelerator is visible
    default_timeout_s: float = 120.0
    env: dict[str, str] = field(default_factory=dict)  # extra environment variables for workers
    max_jobs: int = 500  # a worker is replaced after this many jobs (bounds leaks in long sessions)
    name: str = "worker"


def failure(job: Mapping[str, Any], message: str, reason: str) -> dict[str, Any]:
    """A result envelope for a job that did not run to completion."""
    return {
        "schema": SCHEMA_VERSION,
        "id": job.get("id"),
        "kind": job.get("kind"),
        "ok": False,
        "error": {"stage": "worker", "message": message, "reason": reason},
    }


def accelerator_visible() -> bool:
    """Whether this machine exposes an NVIDIA GPU or an Ascend NPU device node."""
    try:
        names = os.listdir("/dev")
    except OSError:
        return False
    return any(
        (n.startswith("nvidia") and n[6:].isdigit()) or (n.startswith("davinci") and n[7:].isdigit())
        for n in names
    )


def resident_mb(pid: int) -> float | None:
    """Resident set size of a process from /proc (None where /proc is unavailable)."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * _PAGE_BYTES / (1024 * 1024)


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "is still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        if -code == signal.SIGKILL:
            return f"was killed ({name}; often the kernel's out-of-memory killer)"
        return f"crashed ({name})"
    return f"exited with status {code}"


class Worker:
    """One worker process and the threads that read its stdout and stderr."""

    def __init__(self, config: PoolConfig) -> None:
        env = dict(os.environ)
        env.update(config.env)
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # a job never leaves __pycache__ in the user's folders
        # Everything the worker starts inherits the tag, so a child that left its session is still found;
        # the parent's pid lets the worker notice it was orphaned (see worker/main.py, _die_with_parent).
        self.tag = uuid.uuid4().hex
        env[TAG_ENV] = self.tag
        env["TRITONLENS_PARENT_PID"] = str(os.getpid())
        env.pop("PYTHONPATH", None)  # the environment's own packages only, never the server's
        # Triton's own on-disk cache goes to a directory private to this worker, removed with it, instead
        # of growing ~/.triton/cache with every keystroke's compile.
        # Its other temporary files (snapshots nobody asked to keep, ncu reports) go there too.
        self.scratch: str | None = tempfile.mkdtemp(prefix="tritonlens-worker-")
        env["TRITONLENS_WORKER_SCRATCH"] = self.scratch
        if "TRITON_CACHE_DIR" not in config.env:
            env["TRITON_CACHE_DIR"] = os.path.join(self.scratch, "triton")
            os.mkdir(env["TRITON_CACHE_DIR"], 0o700)
        cap = config.address_space_cap
        if config.memory_limit_mb and (cap if cap is not None else not accelerator_visible()):
            env["TRITONLENS_WORKER_MEMORY_MB"] = str(config.memory_limit_mb)
        self.config = config
        self.started = time.monotonic()
        try:
            self.proc = spawn(
                lambda: subprocess.Popen(
                    [config.python, "-u", str(WORKER_SCRIPT)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env,
                    start_new_session=True,  # own process group: killing it also kills ptxas & co
                    text=True,
                    encoding="utf-8",
                    errors="replace",
                    bufsize=1,
                )
            )
        except OSError:
            if self.scratch:
                shutil.rmtree(self.scratch, ignore_errors=True)
            raise
        self.jobs_done = 0
        self._killed = False
        self.replies: queue.Queue[Any] = queue.Queue()
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=40)
        self.stderr_lines = 0  # lines read so far; a job's own log starts at its mark
        self._log_mark = 0
        threading.Thread(target=self._read_stdout, name=f"{config.name}-out", daemon=True).start()
        threading.Thread(target=self._read_stderr, name=f"{config.name}-err", daemon=True).start()
        log.debug("started %s worker pid %d", config.name, self.proc.pid)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(line)
        self.replies.put(_EOF)
        self.proc.stdout.close()  # closed by its reader only: a close from another thread would block

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_tail.append(line.rstrip("\n"))
            self.stderr_lines += 1
            log.debug("[%s %d] %s", self.config.name, self.proc.pid, line.rstrip("\n"))
        self.proc.stderr.close()

    def kill(self) -> None:
        """Kill the worker and everything it started (its group, its session, detached grandchildren), reap
        it, and return without waiting on its pipes: a grandchild that escaped may still hold them, and the
        reader threads close them when they reach their end."""
        if self._killed:  # once only: after the reap below its pid may belong to another process
            return
        self._killed = True
        kill_tree(self.proc.pid, self.tag)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            log.warning("worker %d did not die after SIGKILL", self.proc.pid)
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except (OSError, ValueError):
            pass
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def last_log(self, lines: int = 6) -> str:
        """The end of what the worker logged during the current job (crash reports, tracebacks)."""
        time.sleep(0.05)  # let the stderr reader catch up with a process that just died
        fresh = min(self.stderr_lines - self._log_mark, len(self.stderr_tail))
        recent = list(self.stderr_tail)[len(self.stderr_tail) - fresh :] if fresh > 0 else []
        tail = [line.strip() for line in recent[-lines:] if line.strip()]
        return ("; last worker log: " + " | ".join(tail)) if tail else ""

    def run(
        self,
        job: Mapping[str, Any],
        timeout_s: float,
        cancel: threading.Event | None,
        limit_s: float | None = None,
    ) -> dict[str, Any]:
        """Send one job and wait up to timeout_s for its reply; on timeout/cancel/crash the worker is killed.

        limit_s is the job's whole timeout, for the message (timeout_s may be less after queueing).
        """
        self._log_mark = self.stderr_lines
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            self.kill()
            return failure(
                job, f"the runner worker {_describe_exit(self.proc.poll())}{self.last_log()}", "crash"
            )
        deadline = time.monotonic() + timeout_s
        while True:
            if cancel is not None and cancel.is_set():
                self.kill()
                return failure(job, "the job was cancelled; its worker was stopped", "cancelled")
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                return failure(
                    job,
                    f"the job ran past its {limit_s or timeout_s:g} s timeout; its worker was stopped",
                    "timeout",
                )
            try:
                line = self.replies.get(timeout=min(_POLL_S, left))
            except queue.Empty:
                limit = self.config.memory_limit_mb
                rss = resident_mb(self.proc.pid) if limit else None
                if limit and rss is not None and rss > limit:
                    self.kill()
                    return failure(
                        job,
                        f"the job used {rss:.0f} MB, over the {limit:g} MB limit; its worker was stopped",
                        "memory",
                    )
                continue
            if line is _EOF:
                try:
                    self.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
                code = self.proc.poll()
                self.kill()
                reason = "memory" if code is not None and code < 0 and -code == signal.SIGKILL else "crash"
                return failure(
                    job, f"the runner worker {_describe_exit(code)} during the job{self.last_log()}", reason
                )
            try:
                reply = json.loads(line)
            except ValueError:
                log.warning("worker %d wrote a non-JSON line: %.200s", self.proc.pid, line)
                continue
            if not isinstance(reply, dict) or reply.get("id") != job.get("id"):
                log.warning("worker %d replied to another job: %.200s", self.proc.pid, line)
                continue
            self.jobs_done += 1
            if reply.get("fatal"):
                self.kill()
            if not reply.get("ok") and isinstance(reply.get("error"), dict):
                if "out of memory" in str(reply["error"].get("message", "")):
                    reply["error"].setdefault("reason", "memory")
            return reply


class WorkerPool:
    """Up to `config.size` workers for one environment; jobs wait for a free worker."""

    def __init__(self, config: PoolConfig) -> None:
        # Reference outputs kept across this pool's verify jobs (worker/verify_isolated.py: each job checks the
        # digest the client holds before reusing them); removed with the pool.
        self.reference_store = _new_store()
        atexit.register(_remove_store, self.reference_store)  # also when close() is never called
        kernels = self.reference_store + KERNELS_SUFFIX
        os.makedirs(kernels, mode=0o700, exist_ok=True)
        self.config = dataclasses.replace(config, env={**config.env, REFERENCE_STORE_ENV: self.reference_store,
                                                       KERNEL_CACHE_ENV: kernels})
        self._lock = threading.Condition()
        self._idle: list[Worker] = []
        self._busy: set[Worker] = set()
        self._starting = 0  # workers being spawned outside the lock; they count against the size
        self._closed = False
        self.started_workers = 0  # how many processes were ever started (tests watch replacements)

    def _acquire(self, cancel: threading.Event | None, deadline: float, fresh: bool = False) -> Worker | None:
        """A free worker; with `fresh`, one that has run no job (a used idle one is stopped to make room)."""
        with self._lock:
            while True:
                if self._closed:
                    raise RuntimeError("the runner pool is closed")
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive() and not (fresh and worker.jobs_done):
                        self._busy.add(worker)
                        return worker
                    worker.kill()
                if len(self._busy) + self._starting < max(1, self.config.size):
                    break
                if (cancel is not None and cancel.is_set()) or time.monotonic() >= deadline:
                    return None
                self._lock.wait(timeout=_POLL_S)
            self.started_workers += 1
            self._starting += 1
        # Start outside the lock: spawning takes a while and must not block other threads' releases.
        try:
            worker = Worker(self.config)
        finally:
            with self._lock:
                self._starting -= 1
                self._lock.notify_all()
        with self._lock:
            self._busy.add(worker)
            if self._closed:
                self._busy.discard(worker)
                worker.kill()
                raise RuntimeError("the runner pool is closed")
        return worker

    def _release(self, worker: Worker, retire: bool = False) -> None:
        with self._lock:
            self._busy.discard(worker)
            if not retire and worker.alive() and not self._closed and worker.jobs_done < self.config.max_jobs:
                self._idle.append(worker)
            else:
                worker.kill()
            self._lock.notify_all()

    def submit(
        self,
        job: Mapping[str, Any],
        *,
        cancel: threading.Event | None = None,
        timeout_s: float | None = None,
        on_start: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """Run one job envelope on a worker; always returns a result envelope.

        on_start is called once a worker has taken the job (until then the job is queued, not running)."""
        timeout = self.config.default_timeout_s if timeout_s is None else float(timeout_s)
        deadline = time.monotonic() + timeout
        single_use = job.get("kind") == "verify"  # a fresh worker, stopped after the job
        try:
            worker = self._acquire(cancel, deadline, fresh=single_use)
        except OSError as exc:
            return failure(job, f"cannot start a runner worker with {self.config.python}: {exc}", "start")
        if worker is None:
            if cancel is not None and cancel.is_set():
                return failure(job, "the job was cancelled before a worker was free", "cancelled")
            return failure(job, f"no runner worker became free within {timeout:g} s", "timeout")
        try:
            if on_start is not None:
                on_start()
            return worker.run(job, max(0.0, deadline - time.monotonic()), cancel, limit_s=timeout)
        finally:
            self._release(worker, retire=single_use)

    def prestart(self) -> None:
        """Start one worker now (e.g. when the server opens a Triton file) so the first job is warm."""
        with self._lock:
            if self._idle or self._busy or self._starting or self._closed:
                return
            self.started_workers += 1
            self._starting += 1
        try:
            worker = Worker(self.config)
        finally:
            with self._lock:
                self._starting -= 1
        with self._lock:
            if self._closed:
                worker.kill()
                return
            self._idle.append(worker)
            self._lock.notify_all()

    def saturated(self) -> bool:
        """Every worker the pool may have is busy (or starting): a new job would wait."""
        with self._lock:
            return not self._idle and len(self._busy) + self._starting >= max(1, self.config.size)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "idle": len(self._idle),
                "busy": len(self._busy),
                "started": self.started_workers,
                "idle_pids": [w.pid for w in self._idle],
            }

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers = self._idle + list(self._busy)
            self._idle = []
            self._lock.notify_all()
        for worker in workers:
            worker.kill()
        _remove_store(self.reference_store)
