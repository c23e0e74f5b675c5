"""Request handlers that read analysis results: hover, code actions (+ resolve), code lenses (+ resolve), kernels list;
each asks every feature (lsp_feature) for its part.

No handler does O(document) work per item: the line table of a document version and its findings grouped by
kernel are built once (per version and settings) and shared by every request and lens provider.
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path

from ..analysis.findings import Finding
from .documents import DocState, finding_key
from .lsp_convert import LineText, plain_text, to_diagnostic, to_text_edit
from .lsp_hover import client_shows_diagnostics_in_hover, hover_markdown
from .lsp_lenses import Prebuilt, resolve
from .lsp_server import TritonLensServer
from .workspace_index import findings_by_kernel
from .workspace_lsp import WorkspaceFeature

log = logging.getLogger("tritonlens.lsp")

# uri -> (the text it was built from, encoding, its line table); compared by identity of the text object.
_LINE_TABLES: dict[str, tuple[str, str, LineText]] = {}


def lines_for(server: TritonLensServer, doc: DocState) -> LineText:
    """Position converter for the analyzed text of `doc`, in the negotiated encoding (for lens providers);
    built once per analysed version, however many items of a request ask for it."""
    encoding = str(server.workspace.position_encoding or types.PositionEncodingKind.Utf16)
    cached = _LINE_TABLES.get(doc.uri)
    if cached is not None and cached[0] is doc.text and cached[1] == encoding:
        return cached[2]
    table = LineText(doc.text, encoding)
    if len(_LINE_TABLES) > 256:  # closed documents' tables: drop them all, open ones are rebuilt on demand
        _LINE_TABLES.clear()
    _LINE_TABLES[doc.uri] = (doc.text, encoding, table)
    return table


_lines = lines_for


def hover(server: TritonLensServer, doc: DocState, pos: types.Position) -> types.Hover | None:
    lines = _lines(server, doc)
    line, col = lines.from_lsp(pos)
    hits = [f for f in server.visible_findings(doc) if f.span.contains(line, col)]
    extra: list[str] = []
    for feature in server.features:
        try:
            section = feature.hover(doc, line, col)
        except Exception:  # a later level's hover must not take the findings' hover down with it
            log.exception("%s.hover failed", type(feature).__name__)
            continue
        if section:
            extra.append(section)
    if not hits and not extra:
        return None
    with_message = not client_shows_diagnostics_in_hover(server.init_options)
    value = "\n\n---\n\n".join(extra + ([hover_markdown(hits, with_message)] if hits else []))
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value),
        range=lines.range(hits[0].span) if hits else None,
    )


def _overlaps(f: Finding, start: tuple[int, int], end: tuple[int, int]) -> bool:
    return (f.span.line, f.span.col) <= end and start <= (f.span.end_line, f.span.end_col)


def code_actions(server: TritonLensServer, doc: DocState, rng: types.Range) -> list[types.CodeAction]:
    """Quick fixes for fixable findings touching `rng`; edits are left to codeAction/resolve when possible."""
    if doc.analysis is None:
        return []
    lines = _lines(server, doc)
    start, end = lines.from_lsp(rng.start), lines.from_lsp(rng.end)
    version = doc.analysis.version
    lazy = server.supports_resolve_edit()
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


async def resolve_code_action(server: TritonLensServer, action: types.CodeAction) -> types.CodeAction:
    """Attach the edit for the doc's *current* version, or none if that finding is gone after an edit."""
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
            action.edit = workspace_edit(doc, f, _lines(server, doc))
            action.data = {**data, "version": doc.analysis.version}
            return action
    return action


# uri -> (the visible findings it was built from, kernel name and first line -> that kernel's findings).
_BY_KERNEL: dict[str, tuple[list[Finding], dict[tuple[str, int], list[Finding]]]] = {}


def kernel_findings_of(server: TritonLensServer, doc: DocState, kernel: Any) -> list[Finding]:
    """Visible findings of `kernel` (its own, or unowned ones on its lines), in the order of visible_findings;
    grouped once for all kernels of the analysed version (lens providers and the kernels list ask per kernel)."""
    visible = server.visible_findings(doc)  # cached: the same list object while nothing changed
    cached = _BY_KERNEL.get(doc.uri)
    if cached is None or cached[0] is not visible:
        kernels = doc.analysis.kernels if doc.analysis is not None else ()
        rows = [(k.name, k.span.line, k.span.end_line) for k in kernels]
        groups = dict(zip(((k.name, k.span.line) for k in kernels), findings_by_kernel(visible, rows), strict=True))
        if len(_BY_KERNEL) > 256:
            _BY_KERNEL.clear()
        cached = _BY_KERNEL[doc.uri] = (visible, groups)
    found = cached[1].get((kernel.name, kernel.span.line))
    if found is None:  # a kernel record of another analysis: group it alone
        found = findings_by_kernel(visible, [(kernel.name, kernel.span.line, kernel.span.end_line)])[0]
    return found


async def code_lenses(server: TritonLensServer, doc: DocState) -> Prebuilt:
    """Ranges only (lsp_lenses): commands come with codeLens/resolve."""
    return await server.lens_cache.rows(server, doc)


def resolve_code_lens(server: TritonLensServer, lens: types.CodeLens) -> types.CodeLens:
    return resolve(server, lens, kernel_findings_of)


def _finding_row(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code,
        "message": plain_text(f.message),
        "severity": f.severity.name.lower(),
        "level": int(f.level),
        "line": f.span.line,
        "col": f.span.col,
    }


def kernel_finding_rows(server: TritonLensServer, uri: str, name: str) -> list[dict[str, Any]]:
    """The findings of one kernel, as the kernels list shows them: an open document's kernel from its analysis
    (O(that kernel), never the whole workspace), a closed file's from the workspace rows."""
    doc = server.docs.get(uri)
    if doc is not None and doc.analysis is not None:
        for k in doc.analysis.kernels:
            if k.name == name:
                return [_finding_row(f) for f in kernel_findings_of(server, doc, k)]
        return []
    rows = [r for r in kernels(server) if r["uri"] == uri and r["name"] == name]
    return rows[0]["findings"] if rows else []


def kernels(server: TritonLensServer) -> list[dict[str, Any]]:
    """Every kernel in the workspace: open documents from the editor's text, the rest from disk."""
    rows: list[dict[str, Any]] = []
    open_paths = set()
    for doc in server.docs.values():
        open_paths.add(os.path.abspath(doc.path))
        if doc.analysis is None:
            continue
        for k in doc.analysis.kernels:
            row = {
                "uri": doc.uri,
                "path": doc.path,
                "name": k.name,
                "line": k.name_span.line,
                "findings": [_finding_row(f) for f in kernel_findings_of(server, doc, k)],
                "open": True,
            }
            for feature in server.features:
                try:
                    row.update(feature.kernel_fields(doc, k))
                except Exception:
                    log.exception("%s.kernel_fields failed", type(feature).__name__)
            rows.append(row)
    try:
        indexed = server.features.get(WorkspaceFeature).indexed_files()
    except LookupError:
        indexed = []
    if indexed:
        for entry in indexed:
            if entry.path in open_paths:
                continue
            uri = from_fs_path(entry.path) or entry.path
            settings = server.config.for_uri(uri).settings
            if settings.target == "auto":
                settings = replace(settings, file_platforms=entry.platforms)
            groups = findings_by_kernel(entry.findings, [(k.name, k.start_line, k.end_line) for k in entry.kernels])
            for k, grouped in zip(entry.kernels, groups, strict=True):
                found = settings.apply(grouped)
                rows.append(
                    {
                        "uri": uri,
                        "path": entry.path,
                        "name": k.name,
                        "line": k.line,
                        "findings": [_finding_row(f) for f in found],
                        "open": False,
                    }
                )
    rows.sort(key=lambda r: (r["path"], r["line"]))
    return rows
