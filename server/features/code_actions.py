"""Code actions: quick fixes of the fixable findings touching a range, then every feature's own actions
(`Feature.code_actions`); edits are attached by `codeAction/resolve` when the client can resolve them.

A quick fix's edit is a versioned WorkspaceEdit of the document's current analysed version: the server never
writes user files, and an edit of a version the editor has left is never offered.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ...analysis.core.findings import Finding
from ..lsp.convert import LineText, plain_text, to_diagnostic, to_text_edit
from ..lsp.documents import DocState, finding_key
from ..lsp.feature import Feature
from ..lsp.views import lines_for

if TYPE_CHECKING:
    from ..lsp.core import TritonLensServer

log = logging.getLogger("tritonlens.lsp")


def _overlaps(f: Finding, start: tuple[int, int], end: tuple[int, int]) -> bool:
    return (f.span.line, f.span.col) <= end and start <= (f.span.end_line, f.span.end_col)


def supports_resolve_edit(server: Any) -> bool:
    td = server.client_capabilities.text_document
    support = td.code_action.resolve_support if td and td.code_action else None
    return bool(support and "edit" in (support.properties or []))


def code_actions(server: Any, doc: DocState, rng: types.Range) -> list[types.CodeAction]:
    """Quick fixes for fixable findings touching `rng`; edits are left to codeAction/resolve when possible."""
    if doc.analysis is None:
        return []
    lines = lines_for(server, doc)
    start, end = lines.from_lsp(rng.start), lines.from_lsp(rng.end)
    version = doc.analysis.version
    lazy = supports_resolve_edit(server)
    out: list[types.CodeAction] = []
    for f in server.visible_findings(doc):
        if f.fix is None or not _overlaps(f, start, end):
            continue
        action = types.CodeAction(
            title=plain_text(f.fix.title),
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[to_diagnostic(f, lines, doc.uri, version)],
            is_preferred=True,
            data={"uri": doc.uri, "version": version, "key": finding_key(f)},
        )
        if not lazy:
            action.edit = workspace_edit(doc, f, lines)
        out.append(action)
    for feature in server.features:
        try:
            out.extend(feature.code_actions(doc, rng))
        except Exception:  # one feature's bug must not hide the quick fixes
            log.exception("%s.code_actions failed", type(feature).__name__)
    return out


def workspace_edit(doc: DocState, f: Finding, lines: LineText) -> types.WorkspaceEdit:
    assert f.fix is not None and doc.analysis is not None
    ident = types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=doc.analysis.version)
    edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = [
        to_text_edit(e, lines) for e in f.fix.edits
    ]
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=ident, edits=edits)])


async def resolve_code_action(server: Any, action: types.CodeAction) -> types.CodeAction:
    """Attach the edit for the doc's *current* version, or none if that finding is gone after an edit; an action
    of another feature goes back to it (its data names the provider)."""
    data = action.data if isinstance(action.data, dict) else {}
    feature = server.features.named(str(data.get("provider"))) if data.get("provider") else None
    if feature is not None:
        return await feature.resolve_action(action)
    uri, key = data.get("uri"), data.get("key")
    if not isinstance(uri, str) or not isinstance(key, str):
        return action
    doc = await server.current(uri)
    if doc is None or doc.analysis is None or not doc.current:
        return action
    for f in server.visible_findings(doc):
        if f.fix is not None and finding_key(f) == key:
            action.edit = workspace_edit(doc, f, lines_for(server, doc))
            action.data = {**data, "version": doc.analysis.version}
            return action
    return action


class CodeActionFeature(Feature):
    name = "code-action"
    server: TritonLensServer  # set by register

    def register(self, server: TritonLensServer) -> None:
        super().register(server)
        options = types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite],
            resolve_provider=True,
        )
        self.add_request(types.TEXT_DOCUMENT_CODE_ACTION, self.on_code_action, options)
        self.add_request(types.CODE_ACTION_RESOLVE, self.on_resolve)

    def on_code_action(self, ls: Any, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        # Listed from the last analysis without waiting: resolve checks the version again.
        doc = ls.docs.get(params.text_document.uri)
        return None if doc is None else code_actions(ls, doc, params.range)

    async def on_resolve(self, ls: Any, params: types.CodeAction) -> types.CodeAction:
        return await resolve_code_action(ls, params)
