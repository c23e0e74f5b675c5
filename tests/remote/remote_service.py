"""A real runner service on a loopback port, in this process, in front of a scriptable runner (test helper)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

uvicorn = pytest.importorskip("uvicorn")
from tritonlens.ascend_runner.remote_gate import uvicorn_server  # noqa: E402
from tritonlens.ascend_runner.remote_server import ServerConfig, create_app  # noqa: E402

TOKEN = "t0ken-for-tests-0123456789abcdef"


class ScriptedRunner:
    """Echoes jobs back; a payload may ask it to sleep (cancellable) or raise, to exercise the service."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.one_worker = threading.Lock()

    def submit(
        self,
        job: dict[str, Any],
        *,
        cancel: threading.Event | None = None,
        timeout_s: float | None = None,
        on_start=None,
    ):
        self.seen.append(job)
        with self.one_worker:  # one worker, as a pool of size 1: a second job waits here, queued
            if on_start is not None:
                on_start()
            return self._answer(job, cancel)

    def _answer(self, job: dict[str, Any], cancel: threading.Event | None) -> dict[str, Any]:
        payload = job["payload"]
        deadline = time.monotonic() + float(payload.get("sleep_s", 0))
        while time.monotonic() < deadline:
            if cancel is not None and cancel.wait(0.02):
                return {"schema": 1, "id": job["id"], "ok": False, "kind": job["kind"], "error": "cancelled"}
        if payload.get("raise"):
            raise RuntimeError("worker exploded")
        files = {}
        if "workdir" in payload:
            from pathlib import Path

            root = Path(payload["workdir"])
            files = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}
        return {
            "schema": 1,
            "id": job["id"],
            "ok": True,
            "kind": job["kind"],
            "result": {"echo": payload.get("echo"), "files": files, "payload": payload, "workdir_mode": _mode(payload)},
        }

    def health(self) -> dict[str, Any]:
        return {"backends": {"interpret": {"available": True}}}

    def close(self) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(tmp_path, runner=None, **overrides: Any) -> Iterator[tuple[str, Any]]:
    """A real service on a free loopback port in front of `runner` (a ScriptedRunner by default)."""
    runner = runner if runner is not None else ScriptedRunner()
    options: dict[str, Any] = {
        "token": TOKEN,
        "max_concurrency": 1,
        "max_queue": 2,
        "max_body_bytes": 64 * 1024,
        "sandbox_root": tmp_path / "sandboxes",
    }
    options.update(overrides)
    header_timeout_s = options.pop("header_timeout_s", 10.0)
    max_pending = options.pop("max_pending_connections", 64)
    config = ServerConfig(**options)
    port = _free_port()
    server = uvicorn_server(
        create_app(config, runner),
        token=TOKEN,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        header_timeout_s=header_timeout_s,
        max_pending=max_pending,
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "runner service did not start"
    try:
        yield f"http://127.0.0.1:{port}", runner
    finally:
        server.should_exit = True
        thread.join(timeout=10)



def _mode(payload: dict[str, Any]) -> int | None:
    import os

    workdir = payload.get("workdir")
    return os.stat(workdir).st_mode & 0o777 if workdir and os.path.isdir(workdir) else None
