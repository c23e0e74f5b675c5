"""Fuzzing LSP message sequences against a real server process: open/change/close, configuration, hover,
codeAction, codeLens, with random incremental edits (unicode line separators included) and malformed frames.

Properties: the process never dies (0 crashes); every request is answered within HANG_S (0 hangs); no publish
read after a barrier carries a version older than the last one sent before it (0 stale publishes); and the
server's text equals the editor's, observed exactly: after the edits, the document's diagnostics equal those
the same server publishes for the editor's final text opened fresh (analysis is deterministic in the text).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from fuzz_profile import HANG_S, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st
from raw_lsp import RawServer, frame
from test_fuzz_sources import FRAGMENTS, SEED_TEXTS
from test_text_sync import inside_crlf, position

STYLES = ["standard", "lowercase", "lf", "spaces", "upper"]
GARBAGE = [
    b"Content-Length: 9\r\n\r\n{not json",
    b"Content-Length: x\r\n\r\n",
    b"X-Nothing: 1\r\n\r\n",
    frame({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"bad": 1}}),
    frame([1, 2]),
    frame({"jsonrpc": "2.0", "id": "s", "method": "textDocument/hover", "params": None}),
]
CONFIGS = [{}, {"ignore": ["TL1"]}, {"severity": {"TL102": "hint"}}, {"target": "cuda"}, {"target": "ascend"}]
_names = itertools.count()


@pytest.fixture(scope="module")
def server():
    s = RawServer()
    assert s.initialize({"textDocument": {"publishDiagnostics": {"versionSupport": True}}}) is not None
    yield s
    received = len(s.received)
    s.close()
    # Shown with `pytest -s` (the long profile's numbers in docs/hardening.md come from this line).
    print(f"\nLSP fuzz: {next(_names)} sequences, {s.writes} frames written, {received} messages received")


def barrier(server: RawServer) -> int:
    """A request answered only after everything sent before it was handled; returns its position."""
    rid = server.request_async("tritonlens/commands", None)
    reply = server.response(rid, HANG_S)
    assert reply is not None, f"no answer within {HANG_S} s (hang) or the server died"
    return server.received.index(reply)


def diagnostics_key(params: dict[str, Any]) -> list[tuple[Any, ...]]:
    return sorted(
        (
            d.get("code"),
            d["range"]["start"]["line"],
            d["range"]["start"]["character"],
            d["range"]["end"]["line"],
            d["range"]["end"]["character"],
            d["message"],
        )
        for d in params["diagnostics"]
    )


def final_publish(server: RawServer, uri: str, version: int) -> dict[str, Any]:
    found = server.wait_for(
        lambda m: (
            m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri
            and m["params"].get("version") == version
        ),
        60,
    )
    assert found is not None, f"no publish for {uri} v{version}"
    return [p for p in server.publishes(uri) if p.get("version") == version][-1]


@st.composite
def sessions(draw: st.DrawFn) -> list[tuple[str, Any]]:
    ops: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(["edit", "edit", "edit", "config", "hover", "action", "lens", "garbage"]))
        if kind == "edit":
            ops.append(
                (
                    "edit",
                    (
                        draw(st.floats(0, 1)),
                        draw(st.floats(0, 1)),
                        draw(st.sampled_from(FRAGMENTS) | st.text(max_size=8)),
                    ),
                )
            )
        elif kind == "config":
            ops.append(("config", draw(st.sampled_from(CONFIGS))))
        elif kind == "garbage":
            ops.append(("garbage", draw(st.sampled_from(GARBAGE))))
        else:
            ops.append((kind, (draw(st.integers(0, 400)), draw(st.integers(0, 120)))))
        ops.append(("style", draw(st.sampled_from(STYLES))))
    return ops


@fuzz_settings(ci_examples=12, long_examples=500)
@given(seed=st.sampled_from(SEED_TEXTS), ops=sessions())
def test_message_sequences(server: RawServer, seed: str, ops: list[tuple[str, Any]]):
    n = next(_names)
    uri = f"file:///tmp/tritonlens-fuzz/doc_{n}.py"
    text, version, style = seed, 1, "standard"
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}},
    )
    barrier(server)
    for kind, arg in ops:
        if kind == "style":
            style = arg
        elif kind == "edit":
            a = int(arg[0] * len(text))
            b = max(a, int(arg[1] * len(text)))
            a -= inside_crlf(text, a)
            b += inside_crlf(text, b)
            rng = {"start": _pos(text, a), "end": _pos(text, b)}
            version += 1
            server.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"range": rng, "text": arg[2]}],
                },
                style,
            )
            text = text[:a] + arg[2] + text[b:]
        elif kind == "config":
            server.notify("workspace/didChangeConfiguration", {"settings": {"tritonlens": arg}}, style)
        elif kind == "garbage":
            server.write(arg)
        else:
            pos = {"line": arg[0], "character": arg[1]}
            method, params = {
                "hover": ("textDocument/hover", {"textDocument": {"uri": uri}, "position": pos}),
                "action": (
                    "textDocument/codeAction",
                    {
                        "textDocument": {"uri": uri},
                        "range": {"start": pos, "end": pos},
                        "context": {"diagnostics": []},
                    },
                ),
                "lens": ("textDocument/codeLens", {"textDocument": {"uri": uri}}),
            }[kind]
            reply = server.response(server.request_async(method, params, style), HANG_S)
            assert reply is not None, f"{method} not answered within {HANG_S} s"
        # Everything sent so far is handled once the barrier answers: later publishes must be current.
        # (Publishes before the barrier may be for a version the server had not read yet: not checked.)
        at = barrier(server)
        stale = [
            m["params"]["version"]
            for m in server.received[at:]
            if m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri
            and m["params"].get("version") is not None
            and m["params"]["version"] < version
        ]
        assert not stale, f"stale publish {stale} after v{version} was read"
    server.server_requests()
    mine = final_publish(server, uri, version)
    fresh = f"file:///tmp/tritonlens-fuzz/fresh_{n}.py"
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": fresh, "languageId": "python", "version": 1, "text": text}},
    )
    theirs = final_publish(server, fresh, 1)
    assert diagnostics_key(mine) == diagnostics_key(theirs), "the server's text differs from the editor's"
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    server.notify("textDocument/didClose", {"textDocument": {"uri": fresh}})
    assert server.proc.poll() is None, "the server died"


def _pos(text: str, offset: int) -> dict[str, int]:
    p = position(text, offset, "utf-16")
    return {"line": p.line, "character": p.character}
