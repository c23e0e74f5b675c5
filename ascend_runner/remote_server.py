"""The remote runner: an HTTP service (FastAPI + uvicorn) in front of a LocalRunner on an accelerator host.

Security model: a bearer token on every route, /openapi.json included, checked from the headers before any
body is read (remote_gate.Gate; /docs and /redoc are not served: `tritonlens-runner serve --openapi` prints the
spec without a token), loopback bind unless the operator asks otherwise, request bodies capped in size and
read time, header deadlines and a cap on connections that have not sent a request (remote_gate), job ids and
uploaded file names restricted to safe characters, each job in its own private folder with every payload path
confined to it (remote_sandbox), numbers finite, a bounded number of running + queued jobs (429 past that).
Waiting (long polls, progress streams) is async: open streams never hold a thread, so they cannot starve
health or other requests.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.concurrency import run_in_threadpool

from .protocol import SCHEMA_VERSION, ProtocolError, compile_request_from
from .remote_gate import CLIENT_SCOPE_KEY, Gate
from .remote_jobs import JobBoard, ServerConfig, _Job
from .remote_sandbox import SandboxError, confine_payload, safe_relative_path

SAFE_ID = r"^[A-Za-z0-9_-]{1,64}$"

NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "no such job (or it expired)"}}


class JobIn(BaseModel):
    """The job envelope of ascend_runner.protocol, as the HTTP API accepts it."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", allow_inf_nan=False)

    schema_version: Literal[1] = Field(alias="schema", description="job schema version this runner speaks")
    id: str = Field(pattern=SAFE_ID)
    kind: Literal["compile", "run", "profile", "verify", "record"]
    backend: Literal["cuda", "ascend", "npu", "interpret"]
    payload: dict[str, Any]
    timeout_s: float | None = Field(default=None, gt=0, le=3600)

    @field_validator("schema_version", "timeout_s", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any) -> Any:
        # JSON true is no number: pydantic's lax mode would read it as 1, which the published schema forbids
        if isinstance(value, bool):
            raise ValueError("must be a number, not a boolean")
        return value

    @field_validator("payload")
    @classmethod
    def _safe_payload(cls, payload: dict[str, Any]) -> dict[str, Any]:
        bad = non_finite(payload)
        if bad:
            raise ValueError(f"payload.{bad} must be a finite number")
        files = payload.get("files")
        if files is not None:
            if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
                raise ValueError("payload.files must map relative file names to text")
            for name in files:
                safe_relative_path(name)
        if payload.get("workdir"):
            raise ValueError("payload.workdir is set by the runner, not the client")
        return payload


def non_finite(value: Any, where: str = "", depth: int = 0) -> str | None:
    """The dotted location of the first NaN or infinity in a JSON value (None when all numbers are finite)."""
    if isinstance(value, float):
        return where or "value" if not math.isfinite(value) else None
    if depth > 32:
        return where or "value"  # deeper than any payload: refuse rather than recurse without end
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = non_finite(item, f"{where}.{key}" if where else str(key), depth + 1)
        if found:
            return found
    return None


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


def _accepts_on_start(method: Any) -> bool:
    try:
        return "on_start" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


def dispatch(
    runner: Any,
    envelope: dict[str, Any],
    *,
    cancel: threading.Event | None = None,
    timeout_s: float | None = None,
    on_start: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Compile jobs go through the runner's compile (and so its result cache); record jobs run the user's command
    in the sandbox (ascend_runner.recording); others go straight to its workers.
    on_start reaches runners that can say when a worker took the job; for others the job starts now."""
    if envelope["kind"] == "record":
        if on_start is not None:
            on_start()
        return record_envelope(runner, envelope, cancel=cancel, timeout_s=timeout_s)
    compile_job = envelope["kind"] == "compile" and hasattr(runner, "compile")
    method = runner.compile if compile_job else runner.submit
    extra: dict[str, Any] = {}
    if on_start is not None:
        if _accepts_on_start(method):
            extra["on_start"] = on_start
        else:
            on_start()
    if not compile_job:
        return runner.submit(envelope, cancel=cancel, timeout_s=timeout_s, **extra)
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
    result = runner.compile(req, cancel=cancel, timeout_s=timeout_s, **extra)
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
    clients = config.clients()
    if not all(clients.values()):
        raise ValueError("the runner service needs a non-empty token")
    board = JobBoard(config, functools.partial(dispatch, runner))

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        board.shutdown()
        runner.close()

    app = FastAPI(
        title="tritonlens runner",
        version=str(SCHEMA_VERSION),
        # The Gate checks the token on every route; declared here so the spec says so.
        dependencies=[Depends(HTTPBearer(auto_error=False))],
        responses={
            400: {"description": "body is not JSON"},
            401: {"description": "missing or wrong bearer token"},
            408: {"description": "the body took too long to arrive"},
        },
        lifespan=lifespan,
        docs_url=None,  # browsers cannot send the bearer token to /docs or /redoc; the spec is at /openapi.json
        redoc_url=None,
    )
    app.add_middleware(
        Gate, token=clients, max_bytes=config.max_body_bytes, body_timeout_s=config.body_timeout_s
    )
    app.state.board = board

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        # The offending input may hold NaN or infinity, which JSON cannot carry: describe it instead.
        errors = [{k: v for k, v in e.items() if k not in ("input", "ctx")} for e in exc.errors()]
        return JSONResponse({"detail": jsonable_encoder(errors)}, status_code=422)

    @app.get("/v1/health", response_model=Health)
    async def health() -> Health:
        running, queued = board.counts()
        return Health(
            status="ok",
            schema_version=SCHEMA_VERSION,
            running=running,
            queued=queued,
            max_concurrency=config.max_concurrency,
            runner=await run_in_threadpool(runner.health),
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
    async def submit(request: Request, job: JobIn, wait_s: float = Query(0.0, ge=0, le=600, allow_inf_nan=False)) -> JobOut:
        """Queue a job; with wait_s > 0 wait up to that long (max 600 s) for it to finish."""
        try:
            confine_payload(job.kind, job.payload, None, config.allowed_paths)  # refuse bad paths now: 422
        except SandboxError as exc:
            raise HTTPException(422, str(exc)) from None
        entry = board.add(job, client_of(request))
        if wait_s:
            await board.wait(entry, wait_s)
        return _out(entry)

    @app.get("/v1/jobs/{job_id}", response_model=JobOut, responses=NOT_FOUND)
    async def get_job(
        request: Request, job_id: str, wait_s: float = Query(0.0, ge=0, le=600, allow_inf_nan=False)
    ) -> JobOut:
        entry = board.get(job_id, client_of(request))
        if wait_s:
            await board.wait(entry, wait_s)
        return _out(entry)

    @app.get(
        "/v1/jobs/{job_id}/events",
        response_class=StreamingResponse,
        responses={200: {"content": {"application/x-ndjson": {}}}, **NOT_FOUND},
    )
    async def job_events(request: Request, job_id: str) -> StreamingResponse:
        entry = board.get(job_id, client_of(request))
        return StreamingResponse(board.stream(entry), media_type="application/x-ndjson")

    @app.delete("/v1/jobs/{job_id}", response_model=JobOut, responses=NOT_FOUND)
    async def cancel_job(request: Request, job_id: str) -> JobOut:
        return _out(board.cancel(job_id, client_of(request)))

    return app


def client_of(request: Request) -> str:
    """The client the Gate authenticated (every route is behind it, so the key is always there)."""
    return str(request.scope[CLIENT_SCOPE_KEY])


def _out(entry: _Job) -> JobOut:
    return JobOut(id=entry.id, state=entry.state, result=entry.result, error=entry.error)  # type: ignore[arg-type]
