"""The remote runner: an HTTP service (FastAPI + uvicorn) in front of a LocalRunner on an accelerator host.

Security model: a bearer token on every /v1 route (constant-time compare), loopback bind unless the operator
asks otherwise, request bodies capped, job ids and uploaded file names restricted to safe characters, each job
in its own sandbox directory, a bounded number of running + queued jobs (429 past that).
"""

from __future__ import annotations

import dataclasses
import functools
import hmac
import json
import re
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Query, status
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .protocol import SCHEMA_VERSION, ProtocolError, compile_request_from

SAFE_ID = r"^[A-Za-z0-9_-]{1,64}$"
SAFE_FILE_PART = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
FINISHED = ("done", "failed", "cancelled")
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "no such job (or it expired)"}}


class JobIn(BaseModel):
    """The job envelope of ascend_runner.protocol, as the HTTP API accepts it."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    schema_version: Literal[1] = Field(alias="schema", description="job schema version this runner speaks")
    id: str = Field(pattern=SAFE_ID)
    kind: Literal["compile", "run", "profile", "verify", "record"]
    backend: Literal["cuda", "ascend", "npu", "interpret"]
    payload: dict[str, Any]
    timeout_s: float | None = Field(default=None, gt=0, le=3600)

    @field_validator("payload")
    @classmethod
    def _safe_files(cls, payload: dict[str, Any]) -> dict[str, Any]:
        files = payload.get("files")
        if files is not None:
            if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
                raise ValueError("payload.files must map relative file names to text")
            for name in files:
                safe_relative_path(name)
        if "workdir" in payload:
            raise ValueError("payload.workdir is set by the runner, not the client")
        return payload


class JobOut(BaseModel):
    id: str
    state: Literal["queued", "running", "done", "failed", "cancelled"]
    result: dict[str, Any] | None = None
    error: str | None = None


class Health(BaseModel):
    status: Literal["ok"]
    schema_version: int
    running: int
    queued: int
    max_concurrency: int
    runner: dict[str, Any]


@dataclass
class ServerConfig:
    token: str
    max_concurrency: int = 2
    max_queue: int = 16
    max_body_bytes: int = 8 * 1024 * 1024
    sandbox_root: Path = field(default_factory=lambda: Path(tempfile.gettempdir()) / "tritonlens-runner")
    keep_finished: int = 256


@dataclass
class _Job:
    id: str
    state: str = "queued"
    result: dict[str, Any] | None = None
    error: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event)


class JobBoard:
    """Jobs by id, their progress events, and the bounded pool that runs them."""

    def __init__(self, config: ServerConfig, submit: Callable[..., dict[str, Any]]) -> None:
        self._config = config
        self._submit = submit
        self._jobs: OrderedDict[str, _Job] = OrderedDict()
        self._lock = threading.Condition()
        self._pool = ThreadPoolExecutor(max_workers=config.max_concurrency, thread_name_prefix="job")

    def counts(self) -> tuple[int, int]:
        with self._lock:
            states = [j.state for j in self._jobs.values()]
        return states.count("running"), states.count("queued")

    def add(self, job: JobIn) -> _Job:
        with self._lock:
            if job.id in self._jobs:
                raise HTTPException(status.HTTP_409_CONFLICT, f"job {job.id} already exists")
            active = sum(1 for j in self._jobs.values() if j.state not in FINISHED)
            if active >= self._config.max_concurrency + self._config.max_queue:
                raise HTTPException(status.HTTP_429_TOO_MANY_REQUESTS, "runner is busy: too many queued jobs")
            entry = _Job(job.id)
            self._jobs[job.id] = entry
            self._event(entry, "queued")
            self._trim()
        self._pool.submit(self._run, entry, job)
        return entry

    def get(self, job_id: str) -> _Job:
        with self._lock:
            entry = self._jobs.get(job_id)
        if entry is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no job {job_id}")
        return entry

    def cancel(self, job_id: str) -> _Job:
        entry = self.get(job_id)
        entry.cancel.set()
        with self._lock:
            if entry.state == "queued":
                entry.state = "cancelled"
                self._event(entry, "cancelled")
        return entry

    def wait(self, entry: _Job, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while entry.state not in FINISHED and time.monotonic() < deadline:
                self._lock.wait(timeout=max(0.0, deadline - time.monotonic()))

    def stream(self, entry: _Job, poll_s: float = 15.0) -> Iterator[bytes]:
        """NDJSON progress events until the job finishes (a blank keep-alive line every poll_s)."""
        sent = 0
        while True:
            with self._lock:
                if sent >= len(entry.events) and entry.state not in FINISHED:
                    self._lock.wait(timeout=poll_s)
                pending = entry.events[sent:]
                done = entry.state in FINISHED
            sent += len(pending)
            if not pending and not done:
                yield b"\n"
            for event in pending:
                yield (json.dumps(event) + "\n").encode()
            if done and sent >= len(entry.events):
                return

    def shutdown(self) -> None:
        with self._lock:
            for entry in self._jobs.values():
                entry.cancel.set()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _run(self, entry: _Job, job: JobIn) -> None:
        with self._lock:
            if entry.state == "cancelled":
                return
            entry.state = "running"
            self._event(entry, "running")
        sandbox = self._config.sandbox_root / job.id
        try:
            payload = prepare_sandbox(job.payload, sandbox)
            envelope = {
                "schema": job.schema_version,
                "id": job.id,
                "kind": job.kind,
                "backend": job.backend,
                "payload": payload,
            }
            result = self._submit(envelope, cancel=entry.cancel, timeout_s=job.timeout_s)
            state, error = ("cancelled", "cancelled") if entry.cancel.is_set() else ("done", None)
        except Exception as exc:  # the runner's own failure; the service keeps serving
            result, state, error = None, "failed", f"{type(exc).__name__}: {exc}"
        finally:
            shutil.rmtree(sandbox, ignore_errors=True)
        with self._lock:
            entry.result, entry.error, entry.state = result, error, state
            self._event(entry, state)

    def _event(self, entry: _Job, state: str) -> None:
        entry.events.append({"id": entry.id, "state": state, "time": time.time()})
        self._lock.notify_all()

    def _trim(self) -> None:
        finished = [k for k, j in self._jobs.items() if j.state in FINISHED]
        for key in finished[: max(0, len(finished) - self._config.keep_finished)]:
            del self._jobs[key]


def safe_relative_path(name: str) -> PurePosixPath:
    """A file name a client may upload: relative, no '..', no hidden parts, plain characters."""
    path = PurePosixPath(name)
    if path.is_absolute() or not path.parts or len(path.parts) > 8:
        raise ValueError(f"file name {name!r} must be a short relative path")
    for part in path.parts:
        if part in (".", "..") or part.startswith(".") or not SAFE_FILE_PART.match(part):
            raise ValueError(f"file name {name!r} has an unsafe part {part!r}")
    return path


def prepare_sandbox(payload: dict[str, Any], sandbox: Path) -> dict[str, Any]:
    """Write uploaded `files` ({relative name: text}) into the job's sandbox; the worker runs there."""
    files = payload.get("files")
    if files is None:
        return payload
    if not isinstance(files, dict):
        raise ValueError("payload.files must map relative file names to text")
    sandbox.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        if not isinstance(name, str) or not isinstance(text, str):
            raise ValueError("payload.files must map relative file names to text")
        target = sandbox / safe_relative_path(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return {**payload, "workdir": str(sandbox)}


class BodyLimit:
    """ASGI middleware: reject bodies over the limit (declared or streamed) with 413."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await JSONResponse({"detail": "request body too large"}, status_code=413)(scope, receive, send)
            return
        seen = 0

        async def limited_receive() -> dict[str, Any]:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:
                raise HTTPException(status.HTTP_413_REQUEST_ENTITY_TOO_LARGE, "request body too large")
            return message

        await self.app(scope, limited_receive, send)


def dispatch(
    runner: Any,
    envelope: dict[str, Any],
    *,
    cancel: threading.Event | None = None,
    timeout_s: float | None = None,
) -> dict[str, Any]:
    """Compile jobs go through the runner's compile (and so its result cache); record jobs run the user's command
    in the sandbox (ascend_runner.recording); others go straight to its workers."""
    if envelope["kind"] == "record":
        return record_envelope(runner, envelope, cancel=cancel, timeout_s=timeout_s)
    if envelope["kind"] != "compile" or not hasattr(runner, "compile"):
        return runner.submit(envelope, cancel=cancel, timeout_s=timeout_s)
    try:
        req = compile_request_from(envelope["payload"])
    except ProtocolError as exc:
        return {
            "schema": SCHEMA_VERSION,
            "id": envelope["id"],
            "ok": False,
            "kind": "compile",
            "error": str(exc),
        }
    result = runner.compile(req, cancel=cancel, timeout_s=timeout_s)
    return {
        "schema": SCHEMA_VERSION,
        "id": envelope["id"],
        "ok": True,
        "kind": "compile",
        "result": dataclasses.asdict(result),
    }


def record_envelope(
    runner: Any, envelope: dict[str, Any], *, cancel: threading.Event | None, timeout_s: float | None
) -> dict[str, Any]:
    from .environments import environment_for_backend
    from .recording import run_record_job

    base = {"schema": SCHEMA_VERSION, "id": envelope["id"], "kind": "record"}
    try:
        find = getattr(runner, "environment", None)
        if find is None:
            raise ValueError("this runner cannot record launches (it has no runner environments)")
        python = find(environment_for_backend(envelope["backend"])).python
        result = run_record_job(envelope["payload"], envelope["backend"], python, cancel, timeout_s or 600.0)
    except Exception as exc:  # no environment, a bad payload: the client gets the reason
        return {**base, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return {**base, "ok": True, "result": result}


def create_app(config: ServerConfig, runner: Any) -> FastAPI:
    """`runner` implements the client interface (submit/health/close) of ascend_runner.client."""
    if not config.token:
        raise ValueError("the runner service needs a non-empty token")
    board = JobBoard(config, functools.partial(dispatch, runner))
    bearer = HTTPBearer(auto_error=False)
    expected = config.token.encode()

    def authorize(creds: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        given = (creds.credentials if creds else "").encode()
        if not hmac.compare_digest(given, expected):
            raise HTTPException(
                status.HTTP_401_UNAUTHORIZED,
                "missing or wrong bearer token",
                headers={"WWW-Authenticate": "Bearer"},
            )

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        board.shutdown()
        runner.close()

    app = FastAPI(
        title="tritonlens runner",
        version=str(SCHEMA_VERSION),
        dependencies=[Depends(authorize)],
        responses={
            400: {"description": "body is not JSON"},
            401: {"description": "missing or wrong bearer token"},
        },
        lifespan=lifespan,
    )
    app.add_middleware(BodyLimit, max_bytes=config.max_body_bytes)
    app.state.board = board

    @app.get("/v1/health", response_model=Health)
    def health() -> Health:
        running, queued = board.counts()
        return Health(
            status="ok",
            schema_version=SCHEMA_VERSION,
            running=running,
            queued=queued,
            max_concurrency=config.max_concurrency,
            runner=runner.health(),
        )

    @app.post(
        "/v1/jobs",
        response_model=JobOut,
        status_code=202,
        responses={
            409: {"description": "duplicate id"},
            413: {"description": "body too large"},
            429: {"description": "queue full"},
        },
    )
    def submit(job: JobIn, wait_s: float = Query(0.0, ge=0, le=600)) -> JobOut:
        """Queue a job; with wait_s > 0 wait up to that long (max 600 s) for it to finish."""
        entry = board.add(job)
        if wait_s:
            board.wait(entry, wait_s)
        return _out(entry)

    @app.get("/v1/jobs/{job_id}", response_model=JobOut, responses=NOT_FOUND)
    def get_job(job_id: str, wait_s: float = Query(0.0, ge=0, le=600)) -> JobOut:
        entry = board.get(job_id)
        if wait_s:
            board.wait(entry, wait_s)
        return _out(entry)

    @app.get(
        "/v1/jobs/{job_id}/events",
        response_class=StreamingResponse,
        responses={200: {"content": {"application/x-ndjson": {}}}, **NOT_FOUND},
    )
    def job_events(job_id: str) -> StreamingResponse:
        return StreamingResponse(board.stream(board.get(job_id)), media_type="application/x-ndjson")

    @app.delete("/v1/jobs/{job_id}", response_model=JobOut, responses=NOT_FOUND)
    def cancel_job(job_id: str) -> JobOut:
        return _out(board.cancel(job_id))

    return app


def _out(entry: _Job) -> JobOut:
    return JobOut(id=entry.id, state=entry.state, result=entry.result, error=entry.error)  # type: ignore[arg-type]
