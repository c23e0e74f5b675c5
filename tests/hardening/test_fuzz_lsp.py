"""Fuzzing LSP message sequences against a real server process: open/change/close, configuration, hover,
codeAction, codeLens, with random incremental edits (unicode line separators included) and malformed frames.

Properties: the process never dies (0 crashes); every request is answered within HANG_S (0 hangs); no publish
sent after the server read version v (known from a barrier request's answer) carries a version older than v
(0 stale publishes); and the
server's text equals the editor's, observed exactly: after the edits, the document's diagnostics equal those
the same server publishes for the editor's final text opened fresh (analysis is deterministic in the text).
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
from fuzz_profile import HANG_S, Tally, fuzz_settings
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
PIECES = st.sampled_from(FRAGMENTS) | st.text(max_size=8)
_names = itertools.count()
TALLY = Tally("lsp_sequences")


@pytest.fixture(scope="module")
def server():
    TALLY.start()
    s = RawServer()
    assert s.initialize({"textDocument": {"publishDiagnostics": {"versionSupport": True}}}) is not None
    yield s
    alive = s.proc.poll() is None
    s.close()
    TALLY.counts.update(frames_written=s.writes, messages_received=s.reads)
    data = TALLY.save(server_alive_at_end=alive)
    # Shown with `pytest -s` (the long profile's numbers in docs/hardening.md come from here).
    print(f"\nLSP fuzz: {data}")


def timed_response(server: RawServer, request_id: int, what: str) -> dict[str, Any]:
    started = time.monotonic()
    reply = server.response(request_id, HANG_S)
    TALLY.step(time.monotonic() - started)
    assert reply is not None, f"{what}: no answer within {HANG_S} s (hang) or the server died"
    return reply


def barrier(server: RawServer) -> int:
    """A request answered only after everything sent before it was handled; returns its position."""
    reply = timed_response(server, server.request_async("tritonlens/commands", None), "barrier")
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


def check_no_stale(server: RawServer, uri: str, since: int, floor: int) -> None:
    """No publish for `uri` received after position `since` is older than `floor`."""
    stale = [
        m["params"]["version"]
        for m in server.received[since:]
        if m.get("method") == "textDocument/publishDiagnostics"
        and m["params"]["uri"] == uri
        and m["params"].get("version") is not None
        and m["params"]["version"] < floor
    ]
    TALLY.counts["stale_publishes"] += len(stale)
    assert not stale, f"stale publish {stale} after v{floor} was read"


def final_publish(server: RawServer, uri: str, version: int) -> dict[str, Any]:
    started = time.monotonic()
    found = server.wait_for(
        lambda m: (
            m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri
            and m["params"].get("version") == version
        ),
        HANG_S,
    )
    TALLY.step(time.monotonic() - started)
    assert found is not None, f"no publish for {uri} v{version} within {HANG_S} s"
    return [p for p in server.publishes(uri) if p.get("version") == version][-1]


@st.composite
def sessions(draw: st.DrawFn) -> list[tuple[str, Any]]:
    ops: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(["edit", "edit", "edit", "config", "hover", "action", "lens", "garbage"]))
        if kind == "edit":
            # One didChange carries 1-3 changes, applied in order (LSP); rarely a whole-document replacement.
            changes = [
                (draw(st.floats(0, 1)), draw(st.floats(0, 1)), draw(PIECES))
                for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3])))
            ]
            if draw(st.integers(0, 19)) == 0:
                changes.append((None, None, draw(st.sampled_from(SEED_TEXTS))))
            ops.append(("edit", changes))
        elif kind == "config":
            ops.append(("config", draw(st.sampled_from(CONFIGS))))
        elif kind == "garbage":
            ops.append(("garbage", draw(st.sampled_from(GARBAGE))))
        else:
            ops.append((kind, (draw(st.integers(0, 400)), draw(st.integers(0, 120)))))
        ops.append(("style", draw(st.sampled_from(STYLES))))
    return ops


@fuzz_settings(ci_examples=200)
@given(seed=st.sampled_from(SEED_TEXTS), ops=sessions())
def test_message_sequences(server: RawServer, seed: str, ops: list[tuple[str, Any]]):
    TALLY.counts["sequences"] += 1
    try:
        run_sequence(server, seed, ops)
    except BaseException:
        TALLY.counts["sequences_failed"] += 1
        raise
    TALLY.counts["sequences_passed"] += 1


def run_sequence(server: RawServer, seed: str, ops: list[tuple[str, Any]]) -> None:
    n = next(_names)
    server.forget()
    uri = f"file:///tmp/tritonlens-fuzz/doc_{n}.py"
    text, version, style = seed, 1, "standard"
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}},
    )
    since, floor = barrier(server), version
    for kind, arg in ops:
        if kind == "style":
            style = arg
        elif kind == "edit":
            changes: list[dict[str, Any]] = []
            for fa, fb, piece in arg:
                if fa is None:
                    changes.append({"text": piece})
                    text = piece
                    continue
                a = int(fa * len(text))
                b = max(a, int(fb * len(text)))
                a -= inside_crlf(text, a)
                b += inside_crlf(text, b)
                changes.append({"range": {"start": _pos(text, a), "end": _pos(text, b)}, "text": piece})
                text = text[:a] + piece + text[b:]
            version += 1
            server.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": changes},
                style,
            )
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
            timed_response(server, server.request_async(method, params, style), method)
        # Once a barrier is answered, the server has read every version sent before it: whatever it publishes
        # after that answer must be of that version or newer. So each publish is held to the version known at the
        # barrier before it (a publish before this op's barrier may predate the server reading this op's edit).
        at = barrier(server)
        check_no_stale(server, uri, since, floor)
        check_no_stale(server, uri, at, version)
        since, floor = at, version
    check_no_stale(server, uri, since, floor)
    server.server_requests()
    # A request needs the newest analysis: it skips the rest of the debounce, which would otherwise dominate
    # a long run's time (the debounce itself is exercised by every edit above).
    hover = {"textDocument": {"uri": uri}, "position": _pos(text, 0)}
    timed_response(server, server.request_async("textDocument/hover", hover), "final hover")
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
