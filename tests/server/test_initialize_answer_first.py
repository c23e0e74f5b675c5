"""Start-up work queued on `after_initialize_answer` (serve's warm-up and GC freeze) runs only once the `initialize`
answer is written, and before the next message is handled: the answer no longer waits for it (issue 23)."""

from __future__ import annotations

import io
import json
import os
import threading

from tritonlens.server.lsp.server import create_server


class Captured(io.RawIOBase):
    """A stdout that keeps what the server wrote."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, b: bytes) -> int:  # type: ignore[override]
        with self.lock:
            self.data += b
        return len(b)

    def text(self) -> str:
        with self.lock:
            return self.data.decode("utf-8", "replace")


def frame(msg: dict) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_start_up_work_runs_after_the_initialize_answer_and_before_the_next_message() -> None:
    server = create_server()
    out = Captured()
    seen: dict[str, object] = {}

    def warm_up() -> None:
        seen["answer_written_before"] = '"id": 0' in out.text() or '"id":0' in out.text()
        seen["docs_before"] = list(server.docs)

    server.after_initialize_answer.append(warm_up)
    read_fd, write_fd = os.pipe()
    stdin = os.fdopen(read_fd, "rb")
    runner = threading.Thread(target=server.start_io, args=(stdin, out), daemon=True)
    runner.start()
    uri = "file:///tmp/tritonlens-init-order/k.py"
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": "import triton\n"}}},
        {"jsonrpc": "2.0", "id": 1, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ]
    os.write(write_fd, b"".join(frame(m) for m in messages))  # all at once: the callback must still come between
    runner.join(timeout=60)
    os.close(write_fd)
    assert not runner.is_alive(), "the server did not exit"
    assert seen.get("answer_written_before") is True, seen  # the answer did not wait for the work
    assert seen.get("docs_before") == []  # and the work ran before didOpen was handled
    assert server.after_initialize_answer == []  # run once
    assert '"capabilities"' in out.text()
