"""A real runner service on a loopback port, in this process, in front of a scriptable runner."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

uvicorn = pytest.importorskip("uvicorn")
from tritonlens.ascend_runner.remote_server import ServerConfig, create_app  # noqa: E402

TOKEN = "t0ken-for-tests-0123456789abcdef"


class ScriptedRunner:
    """Echoes jobs back; a payload may ask it to sleep (cancellable) or raise, to exercise the service."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def submit(
        self, job: dict[str, Any], *, cancel: threading.Event | None = None, timeout_s: float | None = None
    ):
        self.seen.append(job)
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
            "result": {"echo": payload.get("echo"), "files": files},
        }

    def health(self) -> dict[str, Any]:
        return {"backends": {"interpret": {"available": True}}}

    def close(self) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def service(tmp_path) -> Iterator[tuple[str, ScriptedRunner]]:
    runner = ScriptedRunner()
    config = ServerConfig(
        token=TOKEN,
        max_concurrency=1,
        max_queue=2,
        max_body_bytes=64 * 1024,
        sandbox_root=tmp_path / "sandboxes",
    )
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(config, runner), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "runner service did not start"
    yield f"http://127.0.0.1:{port}", runner
    server.should_exit = True
    thread.join(timeout=10)
