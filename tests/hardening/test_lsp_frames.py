"""Issue 14 item 4: header spellings clients send are read, and a malformed frame costs that message only."""

from __future__ import annotations

import pytest
from raw_lsp import RawServer, frame


@pytest.fixture
def server():
    s = RawServer()
    yield s
    s.close()


def alive(server: RawServer, style: str = "standard") -> bool:
    reply = server.request("tritonlens/commands", None, timeout=15, style=style)
    return reply is not None and isinstance(reply.get("result"), list)


def test_header_spellings_are_read(server: RawServer):
    assert server.initialize(style="lowercase") is not None
    for style in ["lf", "spaces", "upper", "lowercase", "standard"]:
        assert alive(server, style), style


def test_malformed_frames_fail_alone(server: RawServer):
    assert server.initialize() is not None
    server.write(b"Content-Length: 9\r\n\r\n{not json")  # a body that is not JSON
    parse_error = server.wait_for(lambda m: m.get("error", {}).get("code") == -32700, 10)
    assert parse_error is not None and parse_error["id"] is None
    assert alive(server)
    server.write(b"Content-Length: twelve\r\n\r\n")  # an unreadable length
    server.write(b"X-Garbage\r\n\r\n")  # a header block without a length
    server.write(
        frame({"jsonrpc": "2.0", "id": 1, "method": "tritonlens/commands"}, "none")
    )  # no header at all
    assert alive(server)
    server.write(frame([1, 2, 3]))  # JSON, but not a message
    server.write(frame({"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": {"x": 1}}))
    bad_params = server.response(5)
    assert bad_params is not None and "error" in bad_params  # answered, not left waiting
    assert alive(server)
