"""Code actions: for every finding touching a range, its quick fix (when it has one), "Ignore TLxxx on this line"
and "... in this file" (server/ignores/actions.py), "Show IR for this line" and "Optimize this kernel" (the
client's IR view and the server's Optimize command, scoped to the finding's kernel with the finding as evidence);
then every feature's own actions (`Feature.code_actions`). Edits are attached by `codeAction/resolve` when the
client can resolve them.

A quick fix's edit is a versioned WorkspaceEdit of the document's current analysed version: the server never
writes user files, and an edit of a version the editor has left is never offered.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types

from ...analysis.core.findings import Finding, TextEdit
from ...analysis.core.front_rules import UNUSED_IGNORE
from ..ignores.actions import FILE, LINE, file_ignore_edit, line_ignore_edit
from ..lsp.convert import LineText, plain_text, to_diagnostic, to_text_edit
from ..lsp.documents import DocState, finding_key
from ..lsp.feature import Feature
from ..lsp.views import lines_for

log = logging.getLogger("tritonlens.lsp")

SHOW_IR_COMMAND = "tritonlens.showIr"  # the client's IR view (client-vscode), at the finding's line
OPTIMIZE_COMMAND = "tritonlens.optimizeKernel"  # optimize_lsp's command: [uri, kernel, {code, line}]


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
    later: list[types.CodeAction] = []  # ignores and commands come after every quick fix of the range
    for f in server.visible_findings(doc):
        if not _overlaps(f, start, end):
            continue
        diagnostic = [to_diagnostic(f, lines, doc.uri, version)]
        key = finding_key(f)
        if f.fix is not None:
            action = types.CodeAction(
                title=plain_text(f.fix.title),
                kind=types.CodeActionKind.QuickFix,
                diagnostics=diagnostic,
                is_preferred=True,
                data={"uri": doc.uri, "version": version, "key": key},
            )
            if not lazy:
                action.edit = workspace_edit(doc, f, lines)
            out.append(action)
        if f.code != UNUSED_IGNORE.code:  # its fix removes the ignore; ignoring it would be circular
            for scope, title in ((LINE, f"Ignore {f.code} on this line"), (FILE, f"Ignore {f.code} in this file")):
                action = types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=diagnostic,
                    data={"uri": doc.uri, "version": version, "key": key, "ignore": scope},
                )
                edit = None if lazy else ignore_edit(doc, f, scope, lines)
                if lazy or edit is not None:
                    action.edit = edit
                    later.append(action)
        later.extend(command_actions(doc, f, diagnostic))
    out.extend(later)
    for feature in server.features:
        try:
            out.extend(feature.code_actions(doc, rng))
        except Exception:  # one feature's bug must not hide the quick fixes
            log.exception("%s.code_actions failed", type(feature).__name__)
    return out


def command_actions(doc: DocState, f: Finding, diagnostic: list[types.Diagnostic]) -> list[types.CodeAction]:
    """"Show IR for this line" and "Optimize this kernel" for a finding inside a kernel (commands, no edit)."""
    if f.kernel is None or doc.analysis is None or doc.analysis.kernel_named(f.kernel) is None:
        return []
    evidence = {"code": f.code, "line": f.span.line}
    return [
        types.CodeAction(
            title=f"Show IR for line {f.span.line} of {f.kernel}",
            kind=types.CodeActionKind.Empty,
            diagnostics=diagnostic,
            command=types.Command(
                title="Show IR", command=SHOW_IR_COMMAND, arguments=[{"uri": doc.uri, "kernel": f.kernel, "line": f.span.line}]
            ),
        ),
        types.CodeAction(
            title=f"Optimize {f.kernel} ({f.code} as evidence)",
            kind=types.CodeActionKind.RefactorRewrite,
            diagnostics=diagnostic,
            command=types.Command(
                title="Optimize this kernel", command=OPTIMIZE_COMMAND, arguments=[doc.uri, f.kernel, evidence]
            ),
        ),
    ]


def workspace_edit(doc: DocState, f: Finding, lines: LineText) -> types.WorkspaceEdit:
    assert f.fix is not None
    return _versioned(doc, f.fix.edits, lines)


def ignore_edit(doc: DocState, f: Finding, scope: str, lines: LineText) -> types.WorkspaceEdit | None:
    """The edit that writes the ignore comment for `f` into the analysed text (None: no comment can go there)."""
    edit = file_ignore_edit(doc.text, f.code) if scope == FILE else line_ignore_edit(doc.text, f.span.line, f.code)
    return None if edit is None else _versioned(doc, (edit,), lines)


def _versioned(doc: DocState, edits: tuple[TextEdit, ...], lines: LineText) -> types.WorkspaceEdit:
    assert doc.analysis is not None
    ident = types.OptionalVersionedTextDocumentIdentifier(uri=doc.uri, version=doc.analysis.version)
    converted: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = [
        to_text_edit(e, lines) for e in edits
    ]
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=ident, edits=converted)])


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
    scope = data.get("ignore")
    for f in server.visible_findings(doc):
        if finding_key(f) != key:
            continue
        if scope in (LINE, FILE):
            edit = ignore_edit(doc, f, str(scope), lines_for(server, doc))
            if edit is not None:
                action.edit = edit
                action.data = {**data, "version": doc.analysis.version}
            return action
        if f.fix is not None:
            action.edit = workspace_edit(doc, f, lines_for(server, doc))
            action.data = {**data, "version": doc.analysis.version}
            return action
    return action


class CodeActionFeature(Feature):
    name = "code-action"

    def register(self, server: Any) -> None:
        super().register(server)
        options = types.CodeActionOptions(
            code_action_kinds=[
                types.CodeActionKind.QuickFix,
                types.CodeActionKind.RefactorRewrite,
                types.CodeActionKind.Empty,
            ],
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
