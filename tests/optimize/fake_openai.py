"""A real HTTP server on 127.0.0.1 (random port) that speaks the OpenAI chat-completions API with scripted replies.

Each request pops the next `Scripted` reply; every request (headers and JSON body) is recorded."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    content: str | None = None
    finish_reason: str = "stop"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    usage: dict[str, int] | None = field(default_factory=lambda: {"prompt_tokens": 900, "completion_tokens": 100,
                                                                   "total_tokens": 1000})


class FakeOpenAI:
    def __init__(self) -> None:
        self.script: list[Scripted] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                with fake._lock:
                    fake.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                    step = fake.script.pop(0) if fake.script else Scripted(status=500, content="script exhausted")
                if step.delay_s:
                    time.sleep(step.delay_s)
                if step.status != 200:
                    payload = {"error": {"message": step.content or "error", "type": "test", "code": step.status}}
                else:
                    payload = {
                        "id": f"chatcmpl-{len(fake.requests)}", "object": "chat.completion", "created": 0,
                        "model": body.get("model", "?"),
                        "choices": [{"index": 0, "finish_reason": step.finish_reason,
                                     "message": {"role": "assistant", "content": step.content}}],
                    }
                    if step.usage is not None:
                        payload["usage"] = step.usage
                data = json.dumps(payload).encode()
                try:
                    self.send_response(step.status)
                    for k, v in step.headers.items():
                        self.send_header(k, v)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)
