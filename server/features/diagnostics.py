"""Diagnostics: every level's visible findings of an open document, pushed (`textDocument/publishDiagnostics`)
or pulled (`textDocument/diagnostic`), whichever the client asked for at `initialize`.

Positions are always those of the analysed version: a push for a version the editor has moved past is dropped
(the newest version's analysis publishes when it lands), and a pull waits for the newest version's analysis.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ..lsp.convert import LineText, to_diagnostic
from ..lsp.documents import DocState
from ..lsp.feature import Feature

if TYPE_CHECKING:
    from ..lsp.core import TritonLensServer

log = logging.getLogger("tritonlens.lsp")


class DiagnosticsFeature(Feature):
    name = "diagnostics"
    server: TritonLensServer  # set by register

    def __init__(self) -> None:
        super().__init__()
        self.pulls_waiting: dict[str, int] = {}  # uri -> pull requests waiting for an analysis
        self._revision: dict[str, int] = {}  # bumps whenever what a doc would show changes (pull resultId)

    def register(self, server: TritonLensServer) -> None:
        super().register(server)
        options = types.DiagnosticOptions(
            identifier="tritonlens", inter_file_dependencies=False, workspace_diagnostics=False
        )
        self.add_request(types.TEXT_DOCUMENT_DIAGNOSTIC, self.pull, options)

    # --- client capabilities (none before `initialize`: push, no versions, no refresh) ----------------------
    def _caps(self) -> types.ClientCapabilities:
        return getattr(self.server.protocol, "client_capabilities", None) or types.ClientCapabilities()

    @property
    def pull_mode(self) -> bool:
        """The client pulls diagnostics (it offered `textDocument.diagnostic`): nothing is pushed."""
        td = self._caps().text_document
        return bool(td and td.diagnostic)

    def _supports_version(self) -> bool:
        td = self._caps().text_document
        return bool(td and td.publish_diagnostics and td.publish_diagnostics.version_support)

    def _supports_refresh(self) -> bool:
        ws = self._caps().workspace
        return bool(ws and ws.diagnostics and ws.diagnostics.refresh_support)

    # --- hooks --------------------------------------------------------------------------------------------
    def on_findings_changed(self, uri: str) -> None:
        """Push what the doc shows now, or ask a pulling client to pull again."""
        self._revision[uri] = self._revision.get(uri, 0) + 1
        if self.pull_mode:
            # A pull waiting for this result gets it directly; otherwise the client must be told to pull.
            if not self.pulls_waiting.get(uri) and self._supports_refresh():
                self.server.workspace_diagnostic_refresh(None)
        else:
            self.publish(uri)

    def on_document_closed(self, uri: str) -> None:
        self._revision.pop(uri, None)
        if not self.pull_mode:
            self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # --- push and pull ------------------------------------------------------------------------------------
    def diagnostics(self, doc: DocState) -> list[types.Diagnostic]:
        if doc.analysis is None:
            return []
        encoding = self.server.workspace.position_encoding or types.PositionEncodingKind.Utf16
        lines = LineText(doc.text, encoding)
        version = doc.analysis.version
        return [to_diagnostic(f, lines, doc.uri, version) for f in self.server.visible_findings(doc)]

    def publish(self, uri: str) -> None:
        doc = self.server.docs.get(uri)
        if doc is None or doc.analysis is None or self.pull_mode:
            return
        if not doc.current:
            # The editor has a newer version: these positions are for text it no longer shows. The analysis
            # of the newest version (debounced or running) publishes when it lands.
            log.debug("not publishing %s v%s: the editor is at v%s", uri, doc.analysis.version, doc.version)
            return
        version = doc.analysis.version if self._supports_version() else None
        params = types.PublishDiagnosticsParams(uri=uri, diagnostics=self.diagnostics(doc), version=version)
        self.server.text_document_publish_diagnostics(params)

    def result_id(self, doc: DocState) -> str:
        version = doc.analysis.version if doc.analysis else -1
        return f"{version}.{self._revision.get(doc.uri, 0)}"

    async def pull(self, ls: Any, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        uri = params.text_document.uri
        self.pulls_waiting[uri] = self.pulls_waiting.get(uri, 0) + 1
        try:
            doc = await ls.current(uri)
        finally:
            self.pulls_waiting[uri] -= 1
        if doc is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        result_id = self.result_id(doc)
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=self.diagnostics(doc), result_id=result_id)
