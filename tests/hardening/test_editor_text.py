"""Issue 14 item 18: what the editor shows says each thing once and in plain text where Markdown is not rendered.

A hover over a finding in VS Code shows the diagnostic's message and then the server's hover: a client that says so
(`hoverShowsDiagnostics`) gets a hover without the message; other clients (Neovim's hover shows no diagnostics)
get it once. No evidence line repeats the rule's title or the message. Pop-ups are plain text.
"""

from __future__ import annotations

from typing import Any

import pytest
from inprocess import make_server
from lsprotocol import types
from raw_lsp import RawServer

from tritonlens.analysis.core import rules
from tritonlens.analysis.core.findings import Evidence, Finding, Severity, Span
from tritonlens.server.features.hover_markdown import finding_markdown

KERNEL = """import triton
import triton.language as tl


@triton.jit
def k(X, N, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(X + offs, tl.load(X + offs) * 2)


def run(x):
    k[(1,)](x, x.numel(), BLOCK_SIZE=100)
"""


def _hovers(options: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    """(code, diagnostic message, hover Markdown) for every diagnostic of KERNEL, from a real server."""
    server = RawServer()
    try:
        assert server.initialize(options=options) is not None
        uri = "file:///tmp/tritonlens-hover/k.py"
        server.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": KERNEL}},
        )
        assert server.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics", 30)
        (published,) = server.publishes(uri)[-1:]
        out = []
        for d in published["diagnostics"]:
            params = {"textDocument": {"uri": uri}, "position": d["range"]["start"]}
            reply = server.request("textDocument/hover", params, 30)
            assert reply is not None and reply.get("result"), f"no hover for {d['code']}"
            out.append((d["code"], d["message"], reply["result"]["contents"]["value"]))
        return out
    finally:
        server.close()


@pytest.mark.parametrize("options", [None, {"hoverShowsDiagnostics": True}])
def test_hover_says_the_message_once_or_leaves_it_to_the_client(options: dict[str, Any] | None):
    hovers = _hovers(options)
    assert hovers, "the kernel has findings"
    for code, message, md in hovers:
        title = rules.get(code).title
        assert md.count(title) == 1, f"{code}: the title is repeated:\n{md}"
        expected = 0 if options else 1
        # The diagnostic's message is plain text; the hover's is Markdown: compare the first line, where both agree.
        head = message.split(":")[0]
        assert md.count(head) == expected, f"{code}: message shown {md.count(head)} times, wanted {expected}:\n{md}"


def test_evidence_that_repeats_the_title_or_message_is_not_said_again():
    f = Finding(
        "TL101",
        "`tl.load` without a mask",
        Span(1, 0, 1, 4),
        Severity.WARNING,
        evidence=(
            Evidence(kind="ast", summary=rules.get("TL101").title, excerpt="tl.load(x)"),
            Evidence(kind="ir", summary="`tl.load` without a mask", stage="ttir"),
            Evidence(kind="ir", summary="a different fact", stage="ttgir"),
        ),
    )
    md = finding_markdown(f)
    assert md.count(rules.get("TL101").title) == 1 and md.count("`tl.load` without a mask") == 1
    assert "1. *ast*\n" in md and "2. *ir · ttir*\n" in md and "3. *ir · ttgir*: a different fact" in md
    assert "`tl.load` without a mask" not in finding_markdown(f, with_message=False)


def test_pop_ups_are_plain_text():
    server, _ = make_server()
    shown: list[str] = []
    logged: list[str] = []
    server.window_show_message = lambda p: shown.append(p.message)  # type: ignore[method-assign]
    server.window_log_message = lambda p: logged.append(p.message)  # type: ignore[method-assign]
    server.show_once("the `tritonlens` setting must be an object", types.MessageType.Warning)
    assert shown == ["the tritonlens setting must be an object"] and logged == shown
