"""A bare LSP client over the real server's stdio: frames written byte for byte as a test wants them (also
malformed ones), every message the server sends recorded in arrival order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

SERVER_COMMAND = [sys.executable, "-m", "tritonlens.server.cli", "serve"]


def frame(message: Any, style: str = "standard") -> bytes:
    """One message framed in a header style clients in the wild use."""
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    n = len(body)
    headers = {
        "standard": f"Content-Length: {n}\r\n\r\n",
        "lowercase": f"content-length: {n}\r\n\r\n",
        "lf": f"Content-Length: {n}\n\n",
        "spaces": f"Content-Length:   {n}  \r\nContent-Type: application/vscode-jsonrpc; charset=utf-8 \r\n\r\n",
        "upper": f"CONTENT-LENGTH:{n}\r\n\r\n",
        "none": "",
    }[style]
    return headers.encode() + body


class RawServer:
    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            SERVER_COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        self.received: list[dict[str, Any]] = []
        self._lock = threading.Condition()
        self._ids = 1000
        self.writes = 0  # frames (and garbage chunks) written
        self.reads = 0  # messages received (`received` may have been trimmed by `forget`)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("latin-1").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if length is None:
                continue
            message = json.loads(out.read(length))
            with self._lock:
                self.received.append(message)
                self.reads += 1
                self._lock.notify_all()

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise AssertionError(f"the server died (exit status {self.proc.wait(5)})") from None
        self.writes += 1

    def send(self, message: dict[str, Any], style: str = "standard") -> None:
        self.write(frame(message, style))

    def notify(self, method: str, params: Any, style: str = "standard") -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params}, style)

    def request_async(self, method: str, params: Any, style: str = "standard") -> int:
        self._ids += 1
        self.send({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}, style)
        return self._ids

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        seen = 0
        with self._lock:
            while True:
                for message in self.received[seen:]:
                    if predicate(message):
                        return message
                seen = len(self.received)
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    return None
                self._lock.wait(min(left, 0.2))

    def response(self, request_id: int, timeout: float = 10.0) -> dict[str, Any] | None:
        return self.wait_for(lambda m: m.get("id") == request_id and "method" not in m, timeout)

    def request(
        self, method: str, params: Any, timeout: float = 10.0, style: str = "standard"
    ) -> dict[str, Any] | None:
        return self.response(self.request_async(method, params, style), timeout)

    def server_requests(self) -> None:
        """Answer what the server asks (configuration, refreshes, progress) with empty results."""
        with self._lock:
            pending = [m for m in self.received if "method" in m and "id" in m and not m.get("_answered")]
            for m in pending:
                m["_answered"] = True
        for m in pending:
            result: Any = (
                [None] * len(m["params"].get("items", []))
                if m["method"] == "workspace/configuration"
                else None
            )
            self.send({"jsonrpc": "2.0", "id": m["id"], "result": result})

    def initialize(
        self,
        capabilities: dict[str, Any] | None = None,
        style: str = "standard",
        options: dict[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        caps = capabilities or {"textDocument": {"publishDiagnostics": {"versionSupport": True}}}
        params: dict[str, Any] = {"processId": None, "rootUri": None, "capabilities": caps}
        if options is not None:
            params["initializationOptions"] = options
        reply = self.request("initialize", params, 30, style)
        self.notify("initialized", {})
        return reply

    def forget(self) -> None:
        """Drop what was received and handled, so a long run's waits scan only the current case's messages
        (server requests not answered yet are kept)."""
        with self._lock:
            self.received = [
                m for m in self.received if "method" in m and "id" in m and not m.get("_answered")
            ]

    def publishes(self, uri: str) -> list[dict[str, Any]]:
        with self._lock:
            return [
                m["params"]
                for m in self.received
                if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
            ]

    def close(self) -> None:
        try:
            rid = self.request_async("shutdown", None)
            self.response(rid, 5)
            self.notify("exit", None)
            self.proc.wait(5)
        except Exception:
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(5)
