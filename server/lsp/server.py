"""The tritonlens language server (pygls 2): the core's LSP methods (lifecycle, document sync, configuration),
the list of features, and `serve`.

Everything else is a `Feature` class (lsp_feature) listed in `feature_classes`, the editor's method families
(diagnostics, hover, code actions, code lenses) included: its `register(server)` runs before `initialize`
(its LSP methods, commands, custom requests), its hooks run on configuration, analysis, findings changes, save,
close and shutdown, and it contributes lenses, hover sections, code actions and kernel rows. Findings of later
levels are merged with `server.add_findings(uri, version, ...)`. Long work uses `lsp_progress.work_done` for
`$/progress` with cancellation.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
from typing import Any

from lsprotocol import types

from ...analysis.state.session import Session
from ..features.code_actions import CodeActionFeature
from ..features.code_lenses import CodeLensFeature
from ..features.diagnostics import DiagnosticsFeature
from ..features.findings import FindingsFeature
from ..features.hover import HoverFeature
from .core import TritonLensServer
from .feature import Feature
from .text_sync import install_lsp_text_documents

log = logging.getLogger("tritonlens.lsp")

# Every feature, in the order its hooks run and its contributions are asked for. The editor's method families
# come last: they collect the others' contributions, and a closed document's diagnostics are cleared after every
# feature dropped what it kept for it.
def feature_classes() -> list[type[Feature]]:
    from ..features.compile import CompileFeature
    from ..features.escalation import EscalationFeature
    from ..features.ir_view import IrViewFeature
    from ..features.optimize import OptimizeFeature
    from ..features.profile import ProfileFeature
    from ..features.record import RecordFeature
    from ..features.runner_status import RunnerStatusFeature
    from ..features.workspace import WorkspaceFeature
    from ..trust.workspace_trust import TrustFeature

    return [
        TrustFeature,
        WorkspaceFeature,
        FindingsFeature,
        CompileFeature,
        IrViewFeature,
        EscalationFeature,
        RunnerStatusFeature,
        ProfileFeature,
        RecordFeature,
        OptimizeFeature,
        DiagnosticsFeature,
        HoverFeature,
        CodeActionFeature,
        CodeLensFeature,
    ]


def _version() -> str:
    from ..cli import package_version

    return package_version()


def create_server() -> TritonLensServer:
    """The language server with every feature, and its own session (its caches) in force."""
    server = TritonLensServer(_version(), Session())
    server.session.install()
    register_core_methods(server)
    for cls in feature_classes():
        server.features.create(cls, server)
    return server


def register_core_methods(server: TritonLensServer) -> None:
    """The LSP methods the core answers itself: lifecycle, document sync, configuration, the commands list."""
    @server.feature(types.INITIALIZE)
    def on_initialize(ls: TritonLensServer, params: types.InitializeParams) -> None:
        ls._init_options = params.initialization_options
        install_lsp_text_documents(ls.workspace)  # before any didOpen: the server's text is the editor's

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: TritonLensServer, params: types.InitializedParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.features.each("on_initialized")
        await ls.refresh_config()

    @server.feature(types.SHUTDOWN)
    def on_shutdown(ls: TritonLensServer, params: None) -> None:
        ls.shutdown_resources()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TritonLensServer, params: types.DidOpenTextDocumentParams) -> None:
        td = params.text_document
        ls.open(td.uri, td.version, td.language_id)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TritonLensServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.change(params.text_document.uri, params.text_document.version)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TritonLensServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.save(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TritonLensServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_config(ls: TritonLensServer, params: types.DidChangeConfigurationParams) -> None:
        await ls.refresh_config(pushed=params.settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def on_folders(ls: TritonLensServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        added = [f.uri for f in params.event.added]
        ls.features.each("on_folders_changed", added, [f.uri for f in params.event.removed])
        await ls.refresh_config()

    @server.feature("tritonlens/commands")
    def list_commands(ls: TritonLensServer, params: Any) -> list[dict[str, str]]:
        return [{"command": s.name, "title": s.title} for s in ls.commands.specs()]


def _setup_logging(log_file: str | None) -> None:
    level_name = os.environ.get("TRITONLENS_LOG_LEVEL", "INFO").upper()
    level = getattr(logging, level_name, logging.INFO)
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    handlers[0].setLevel(logging.WARNING)  # stderr stays quiet unless something is wrong
    if log_file:
        file_handler = logging.FileHandler(log_file, encoding="utf-8")
        file_handler.setLevel(level)
        handlers.append(file_handler)
    logging.basicConfig(
        level=level, handlers=handlers, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    from ..trust.secrets import install_log_redaction

    install_log_redaction(*handlers)  # a key or token never reaches the log
    # pygls logs every message body at INFO: only keep that when asked for debug logs.
    logging.getLogger("pygls").setLevel(logging.DEBUG if level <= logging.DEBUG else logging.WARNING)


# Triage allocates many short-lived AST objects; with default thresholds the collector runs full passes over
# every long-lived object (lsprotocol's types, cattrs' converters, rule modules) several times per analysis,
# which measured as about half of a 2,000-line file's triage time. Freeze what start-up created and collect
# young objects less often.
GC_THRESHOLDS = (20_000, 20, 20)


def prepare_process() -> None:
    """Import the rule modules once (warm-up), then move everything alive into the GC's permanent generation."""
    from .analysis import analyze_text

    analyze_text("import triton\n\n@triton.jit\ndef k(x):\n    pass\n", "<warm-up>", 0)
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def serve(tcp_host: str | None = None, tcp_port: int | None = None, log_file: str | None = None) -> None:
    """Run the language server over stdio, or TCP when a port is given."""
    _setup_logging(log_file)
    server = create_server()
    # The warm-up and GC freeze run before `initialize` is answered: run after the answer instead, they delayed the
    # first didOpen of a fresh server by as much (cold first diagnostics p95 464 -> 538 ms), and the client sends
    # didOpen right after `initialized`, so a fresh window's first squiggle gained nothing.
    prepare_process()
    if tcp_port is not None:
        server.start_tcp(tcp_host or "127.0.0.1", tcp_port)
    else:
        server.start_io()
