"""Issue 8 item 4: the editor's LSP method families (diagnostics, hover, code actions, code lens) and the IR view
are features like the later levels' ones; the core only tells features that a document's findings changed.

In-process (no client): a server as `initialize` leaves it, documents opened through the core.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types
from pygls.workspace import Workspace

from tritonlens.server.features.code_actions import CodeActionFeature
from tritonlens.server.features.code_lenses import CodeLensFeature
from tritonlens.server.features.compile import CompileFeature
from tritonlens.server.features.diagnostics import DiagnosticsFeature
from tritonlens.server.features.hover import HoverFeature
from tritonlens.server.features.ir_view import IR_REQUEST, IrViewFeature
from tritonlens.server.lsp.core import TritonLensServer
from tritonlens.server.lsp.feature import Feature
from tritonlens.server.lsp.server import create_server, feature_classes, register_core_methods
from tritonlens.server.lsp.text_sync import install_lsp_text_documents

SOURCE = (
    "import triton\nimport triton.language as tl\n\n\n"
    "@triton.jit\ndef k(X, N, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    tl.store(X + offs, tl.load(X + offs, mask=offs < N) * 2, mask=offs < N)\n\n\n"
    "def run(x):\n    k[(x.numel() // 100,)](x, x.numel(), BLOCK=100)\n"
)
URI = "file:///tmp/method_features.py"


class Recorder(Feature):
    """A feature that records what the core tells it and contributes a hover section and a code action."""

    name = "recorder"

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.changed: list[str] = []
        self.fail = fail

    def on_findings_changed(self, uri: str) -> None:
        self.changed.append(uri)

    def hover(self, doc: Any, line: int, col: int) -> str | None:
        if self.fail:
            raise RuntimeError("a broken contribution")
        return f"recorder at {line}:{col}"

    def code_actions(self, doc: Any, rng: types.Range) -> list[types.CodeAction]:
        return [types.CodeAction(title="recorder action", data={"provider": self.name})]


def _initialized(server: TritonLensServer) -> list[types.PublishDiagnosticsParams]:
    server.protocol._workspace = Workspace(None, types.TextDocumentSyncKind.Incremental)
    install_lsp_text_documents(server.workspace)
    server.protocol.client_capabilities = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)
        )
    )
    published: list[types.PublishDiagnosticsParams] = []
    server.text_document_publish_diagnostics = published.append  # type: ignore[method-assign]
    server.workspace_code_lens_refresh = lambda *a: None  # type: ignore[method-assign]
    return published


async def _open(server: TritonLensServer) -> Any:
    item = types.TextDocumentItem(uri=URI, language_id="python", version=1, text=SOURCE)
    server.workspace.put_text_document(item)
    server.open(URI, 1, "python")
    return await asyncio.wait_for(server.current(URI), 60)


def test_every_editor_method_is_answered_by_a_feature():
    methods = (
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.TEXT_DOCUMENT_HOVER,
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CODE_ACTION_RESOLVE,
        types.TEXT_DOCUMENT_CODE_LENS,
        types.CODE_LENS_RESOLVE,
        IR_REQUEST,
        "tritonlens/kernels",
    )
    core = TritonLensServer("test")
    register_core_methods(core)  # what the core answers itself: lifecycle, document sync, configuration
    assert not [m for m in methods if m in core.protocol.fm.features]
    assert types.TEXT_DOCUMENT_DID_CHANGE in core.protocol.fm.features
    classes = feature_classes()
    for cls in (DiagnosticsFeature, HoverFeature, CodeActionFeature, CodeLensFeature, CompileFeature, IrViewFeature):
        assert cls in classes
        core.features.create(cls, core)  # IrViewFeature is given the CompileFeature created before it
    assert [m for m in methods if m not in core.protocol.fm.features] == ["tritonlens/kernels"]  # FindingsFeature
    server = create_server()
    assert all(m in server.protocol.fm.features for m in methods)
    server.shutdown_resources()
    core.shutdown_resources()


async def test_the_core_publishes_nothing_itself():
    # A core without the diagnostics feature tells features what changed and pushes nothing.
    server = TritonLensServer("test")
    recorder = Recorder()
    server.features.add(recorder, server)
    published = _initialized(server)
    doc = await _open(server)
    assert doc is not None and doc.analysis is not None and doc.findings()
    assert recorder.changed == [URI] and published == []
    server.close(URI)
    assert published == []  # clearing a closed document's diagnostics is the diagnostics feature's job
    server.shutdown_resources()


async def test_method_features_ask_every_feature_for_its_part():
    server = create_server()
    recorder, broken = Recorder(), Recorder(fail=True)
    broken.name = "broken"
    server.features.add(broken, server)
    server.features.add(recorder, server)
    published = _initialized(server)
    doc = await _open(server)
    assert published and published[-1].diagnostics and published[-1].version == 1
    assert recorder.changed == [URI]
    # the launch line: a finding on BLOCK=100, and the recorder's section (the broken one is left out)
    line = SOURCE.splitlines().index("    k[(x.numel() // 100,)](x, x.numel(), BLOCK=100)")
    position = types.Position(line, SOURCE.splitlines()[line].index("BLOCK=100") + len("BLOCK="))
    hover = await server.features.get(HoverFeature).on_hover(
        server, types.HoverParams(types.TextDocumentIdentifier(URI), position)
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.value.startswith(f"recorder at {line + 1}:") and "TL" in hover.contents.value
    rng = types.Range(position, position)
    actions = server.features.get(CodeActionFeature).on_code_action(
        server, types.CodeActionParams(types.TextDocumentIdentifier(URI), rng, types.CodeActionContext([]))
    )
    assert actions is not None and "recorder action" in [a.title for a in actions]
    assert doc.current
    server.close(URI)
    assert published[-1].uri == URI and published[-1].diagnostics == []
    server.shutdown_resources()
