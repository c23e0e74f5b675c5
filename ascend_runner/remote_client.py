"""RemoteRunner: the client interface of ascend_runner.client over the runner service's HTTP API (stdlib only)."""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..analysis.core.targets import platform_of
from .cache import sibling_files
from .protocol import (
    CompileRequest,
    CompileResult,
    StageError,
    compile_result_from,
    new_job,
)
from .recording import RecordRun
from .runner import JobMethods

DEFAULT_TIMEOUT_S = 600.0
POLL_S = 2.0  # server-side long-poll slice: short enough to notice a cancel promptly


class RemoteRunnerError(RuntimeError):
    """The runner service could not be reached or refused the job; the message says which and why."""


def resolve_token(config: Mapping[str, Any]) -> str:
    """The bearer token from config: "token", else the variable named by "tokenEnv", else "tokenFile"."""
    if config.get("token"):
        return str(config["token"])
    if config.get("tokenEnv"):
        value = os.environ.get(str(config["tokenEnv"]), "")
        if not value:
            raise RemoteRunnerError(f"runner token variable ${config['tokenEnv']} is not set")
        return value
    if config.get("tokenFile"):
        try:
            return Path(str(config["tokenFile"])).expanduser().read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise RemoteRunnerError(
                f"cannot read runner token file {config['tokenFile']}: {exc.strerror}"
            ) from None
    raise RemoteRunnerError("a remote runner needs token, tokenEnv or tokenFile in its settings")


def with_local_files(job: dict[str, Any]) -> dict[str, Any]:
    """The job with what a remote runner cannot read from this machine: the buffer's text (when only its
    path was given) and the user's own modules it imports (`files`), found as the compile cache finds them."""
    payload = dict(job.get("payload") or {})
    if job.get("kind") == "compile":
        source, path = payload.get("source"), payload.get("path")
    else:
        harness = dict(payload.get("harness") or {})
        path = harness.get("path")
        if harness.get("source") is None and isinstance(path, str):
            try:
                harness["source"] = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                pass  # the runner's own message says the file is missing
            payload["harness"] = harness
        source = harness.get("source")
    if not payload.get("files") and isinstance(source, str) and isinstance(path, str):
        files = sibling_files(source, path)
        if files:
            payload["files"] = files
    return {**job, "payload": payload}


class RemoteRunner(JobMethods):
    """config: {"url": "http://host:port", "token" | "tokenEnv" | "tokenFile": ...}."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> RemoteRunner:
        return cls(str(config["url"]), resolve_token(config))

    def __init__(self, url: str, token: str, *, connect_timeout_s: float = 10.0) -> None:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"runner URL must start with http:// or https://, got {url!r}")
        self.url = url.rstrip("/")
        self._token = token
        self._connect_timeout_s = connect_timeout_s

    def _request(self, method: str, path: str, body: Any = None, timeout_s: float | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self._token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout_s or self._connect_timeout_s) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:500]
            raise RemoteRunnerError(
                f"runner {self.url} answered {exc.code} to {method} {path}: {detail}"
            ) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            raise RemoteRunnerError(f"runner {self.url} is not reachable: {exc}") from None

    def health(self) -> dict[str, Any]:
        return self._request("GET", "/v1/health")

    def submit(
        self, job: dict[str, Any], *, cancel: threading.Event | None = None, timeout_s: float | None = None
    ) -> dict[str, Any]:
        """Send a job envelope and wait for its result envelope; cancel or timeout cancels it on the server."""
        deadline = time.monotonic() + (timeout_s or DEFAULT_TIMEOUT_S)
        job = with_local_files(job)
        body = {**job, "timeout_s": timeout_s} if timeout_s else dict(job)
        state = self._request("POST", f"/v1/jobs?wait_s={POLL_S}", body, timeout_s=POLL_S + 30)
        while state["state"] in ("queued", "running"):
            if (cancel is not None and cancel.is_set()) or time.monotonic() > deadline:
                self._request("DELETE", f"/v1/jobs/{job['id']}")
                why = "cancelled" if cancel is not None and cancel.is_set() else "timed out"
                return {
                    "schema": job["schema"],
                    "id": job["id"],
                    "ok": False,
                    "kind": job["kind"],
                    "error": why,
                }
            state = self._request("GET", f"/v1/jobs/{job['id']}?wait_s={POLL_S}", timeout_s=POLL_S + 30)
        if state["state"] == "done" and state.get("result") is not None:
            return state["result"]
        return {
            "schema": job["schema"],
            "id": job["id"],
            "ok": False,
            "kind": job["kind"],
            "error": state.get("error") or state["state"],
        }

    def compile(
        self, req: CompileRequest, *, cancel: threading.Event | None = None, timeout_s: float | None = None
    ) -> CompileResult:
        backend = platform_of(req.target)  # the runner's backends are named like the platforms
        envelope = self.submit(new_job("compile", backend, req), cancel=cancel, timeout_s=timeout_s)
        if envelope.get("ok") and isinstance(envelope.get("result"), dict):
            return compile_result_from(envelope["result"])
        error = StageError(stage="worker", message=str(envelope.get("error") or "remote compile failed"))
        return CompileResult(ok=False, target=req.target, errors=[error])

    def record(
        self,
        argv: list[str],
        files: dict[str, str],
        cwd: str,
        backend: str,
        *,
        cancel: threading.Event | None = None,
        timeout_s: float | None = None,
    ) -> RecordRun:
        """Run `argv` on the runner in a copy of `files` (the workspace), in folder `cwd` of it, with every
        Triton launch recorded; launch files come back relative to the workspace."""
        payload = {"argv": list(argv), "files": files, "cwd": cwd}
        envelope = self.submit(new_job("record", backend, payload), cancel=cancel, timeout_s=timeout_s)
        if envelope.get("ok") and isinstance(envelope.get("result"), dict):
            return RecordRun.from_dict(envelope["result"])
        run = RecordRun(argv=list(argv), cwd=cwd, backend=backend)
        run.errors.append(f"the remote runner could not record: {envelope.get('error') or 'unknown error'}")
        return run

    def close(self) -> None:
        """Nothing to release: every call opens its own connection."""
