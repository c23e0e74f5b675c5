"""The runner service's job board: jobs by id, their states and progress events, the bounded thread pool that
runs them, and each job's private folder (see remote_sandbox). Waiting for a change is async (an event per
waiter, set from the job threads), so long polls and progress streams never hold a thread."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import HTTPException, status

from .remote_sandbox import SandboxError, confine_payload, make_job_dir, private_root, write_files
from .remote_tokens import DEFAULT_CLIENT

FINISHED = ("done", "failed", "cancelled")


@dataclass
class ServerConfig:
    token: str  # the single client's token ("" when `tokens` names the clients)
    max_concurrency: int = 2
    max_queue: int = 16
    max_body_bytes: int = 8 * 1024 * 1024
    body_timeout_s: float = 30.0  # the whole body must arrive within this
    header_timeout_s: float = 10.0  # a request head must arrive within this (see remote_gate)
    max_pending_connections: int = 256  # connections that have not sent a request head yet
    # Where job folders are made; None: a fresh private folder (mkdtemp). An operator's folder is checked.
    sandbox_root: Path | None = None
    # Folders payload paths may name besides the job's own (`--allow-path`).
    allowed_paths: list[Path] = field(default_factory=list)
    keep_finished: int = 256
    # Client name -> token (remote_tokens); empty: one client, DEFAULT_CLIENT, holding `token`.
    tokens: dict[str, str] = field(default_factory=dict)

    def clients(self) -> dict[str, str]:
        return dict(self.tokens) if self.tokens else {DEFAULT_CLIENT: self.token}


@dataclass
class _Job:
    id: str
    client: str = DEFAULT_CLIENT
    state: str = "queued"
    result: dict[str, Any] | None = None
    error: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event)


class JobBoard:
    """Jobs by (client, id), their progress events, and the bounded pool that runs them. Each client has its own
    id space and sees only its own jobs: another client's job is "no such job" (404), so ids do not leak."""

    def __init__(self, config: ServerConfig, submit: Callable[..., dict[str, Any]]) -> None:
        self._config = config
        self._submit = submit
        self._jobs: OrderedDict[tuple[str, str], _Job] = OrderedDict()
        self._lock = threading.Condition()
        self._pool = ThreadPoolExecutor(max_workers=config.max_concurrency, thread_name_prefix="job")
        # An operator's root is checked now (a bad one stops the service at start); a private one is made
        # with the first job, so building the app (e.g. to print its spec) leaves nothing behind.
        self._root: Path | None = private_root(config.sandbox_root) if config.sandbox_root else None
        self._owns_root = config.sandbox_root is None
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def counts(self) -> tuple[int, int]:
        with self._lock:
            states = [j.state for j in self._jobs.values()]
        return states.count("running"), states.count("queued")

    def add(self, job: Any, client: str = DEFAULT_CLIENT) -> _Job:  # a remote_server.JobIn
        with self._lock:
            if (client, job.id) in self._jobs:
                raise HTTPException(status.HTTP_409_CONFLICT, f"job {job.id} already exists")
            active = sum(1 for j in self._jobs.values() if j.state not in FINISHED)
            if active >= self._config.max_concurrency + self._config.max_queue:
                raise HTTPException(status.HTTP_429_TOO_MANY_REQUESTS, "runner is busy: too many queued jobs")
            entry = _Job(job.id, client)
            self._jobs[(client, job.id)] = entry
            self._event(entry, "queued")
            self._trim()
        self._pool.submit(self._run, entry, job)
        return entry

    def get(self, job_id: str, client: str = DEFAULT_CLIENT) -> _Job:
        with self._lock:
            entry = self._jobs.get((client, job_id))
        if entry is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no job {job_id}")
        return entry

    def cancel(self, job_id: str, client: str = DEFAULT_CLIENT) -> _Job:
        entry = self.get(job_id, client)
        entry.cancel.set()
        with self._lock:
            if entry.state == "queued":
                entry.state = "cancelled"
                self._event(entry, "cancelled")
        return entry

    async def _changed(self, timeout_s: float) -> None:
        """Wait (without holding a thread) until some job's state changes or timeout_s passes."""
        event = asyncio.Event()
        key = (asyncio.get_running_loop(), event)
        with self._lock:
            self._waiters.add(key)
        try:
            await asyncio.wait_for(event.wait(), max(0.0, timeout_s))
        except TimeoutError:
            pass
        finally:
            with self._lock:
                self._waiters.discard(key)

    async def wait(self, entry: _Job, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while entry.state not in FINISHED and time.monotonic() < deadline:
            await self._changed(deadline - time.monotonic())

    async def stream(self, entry: _Job, poll_s: float = 15.0) -> AsyncIterator[bytes]:
        """NDJSON progress events until the job finishes (a blank keep-alive line every poll_s)."""
        sent = 0
        while True:
            with self._lock:
                pending = entry.events[sent:]
                done = entry.state in FINISHED
            sent += len(pending)
            for event in pending:
                yield (json.dumps(event) + "\n").encode()
            if done:
                return
            if not pending:
                before = len(entry.events)
                await self._changed(poll_s)
                if len(entry.events) == before:
                    yield b"\n"

    def shutdown(self) -> None:
        with self._lock:
            for entry in self._jobs.values():
                entry.cancel.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._owns_root and self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)

    def _job_root(self) -> Path:
        with self._lock:
            if self._root is None:
                self._root = private_root(None)
            return self._root

    def _run(self, entry: _Job, job: Any) -> None:
        with self._lock:
            if entry.state == "cancelled":
                return
        job_dir: Path | None = None

        def started() -> None:  # a worker took the job: until then it is queued
            with self._lock:
                if entry.state == "queued":
                    entry.state = "running"
                    self._event(entry, "running")

        try:
            job_dir = make_job_dir(self._job_root(), job.id)
            payload = prepare_job(job.kind, job.payload, job_dir, self._config.allowed_paths)
            envelope = {
                "schema": job.schema_version,
                "id": job.id,
                "kind": job.kind,
                "backend": job.backend,
                "payload": payload,
            }
            result = self._submit(envelope, cancel=entry.cancel, timeout_s=job.timeout_s, on_start=started)
            state, error = ("cancelled", "cancelled") if entry.cancel.is_set() else ("done", None)
        except SandboxError as exc:
            result, state, error = None, "failed", str(exc)
        except Exception as exc:  # the runner's own failure; the service keeps serving
            result, state, error = None, "failed", f"{type(exc).__name__}: {exc}"
        finally:
            if job_dir is not None:
                shutil.rmtree(job_dir, ignore_errors=True)
        with self._lock:
            entry.result, entry.error, entry.state = result, error, state
            self._event(entry, state)

    def _event(self, entry: _Job, state: str) -> None:
        entry.events.append({"id": entry.id, "state": state, "time": time.time()})
        self._lock.notify_all()
        for loop, event in list(self._waiters):
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # that loop has closed
                self._waiters.discard((loop, event))

    def _trim(self) -> None:
        finished = [k for k, j in self._jobs.items() if j.state in FINISHED]
        for key in finished[: max(0, len(finished) - self._config.keep_finished)]:
            del self._jobs[key]


def prepare_job(kind: str, payload: dict[str, Any], job_dir: Path, allowed: list[Path]) -> dict[str, Any]:
    """Write uploaded `files` into the job's private folder and confine every path the payload names to it."""
    files = payload.get("files")
    if files is not None:
        if not isinstance(files, dict):
            raise SandboxError("payload.files must map relative file names to text")
        write_files(job_dir, files)
    return confine_payload(kind, payload, job_dir, allowed)
