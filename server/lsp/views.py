"""Per-version views of an open document that every request shares: its line table, its visible findings
grouped by kernel, and the snapshot a worker thread reads (DocVersion).

No request does O(document) work per item: both are built once per analysed version (and settings), however
many hover, code action, lens or kernel-row requests ask for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from ...analysis.core.findings import Finding
from ..features.workspace_index import findings_by_kernel
from .convert import LineText
from .documents import DocState


@dataclass(frozen=True)
class DocVersion:
    """One analysed version of a document, as the lens builder's thread sees it (the DocState moves on)."""

    uri: str
    path: str
    analysis: Any
    text: str


def lines_for(server: Any, doc: DocState) -> LineText:
    """Position converter for the analyzed text of `doc`, in the negotiated encoding (for lens providers);
    built once per analysed version, however many items of a request ask for it."""
    encoding = str(server.workspace.position_encoding or types.PositionEncodingKind.Utf16)
    # The server's session keeps uri -> (the text it was built from, encoding, its line table); the text is
    # compared by identity. Bounded: closed documents' tables age out, open ones are rebuilt on demand.
    tables = server.session.line_tables
    cached = tables.get(doc.uri)
    if cached is not None and cached[0] is doc.text and cached[1] == encoding:
        return cached[2]  # type: ignore[no-any-return]
    table = LineText(doc.text, encoding)
    tables.put(doc.uri, (doc.text, encoding, table))
    return table


def kernel_findings_of(server: Any, doc: DocState, kernel: Any) -> list[Finding]:
    """Visible findings of `kernel` (its own, or unowned ones on its lines), in the order of visible_findings;
    grouped once for all kernels of the analysed version (lens providers and the kernels list ask per kernel)."""
    visible = server.visible_findings(doc)  # cached: the same list object while nothing changed
    # The server's session keeps uri -> (the visible findings it was built from, kernel name and first line ->
    # that kernel's findings).
    groups_of = server.session.kernel_findings
    cached = groups_of.get(doc.uri)
    if cached is None or cached[0] is not visible:
        kernels = doc.analysis.kernels if doc.analysis is not None else ()
        rows = [(k.name, k.span.line, k.span.end_line) for k in kernels]
        groups = dict(zip(((k.name, k.span.line) for k in kernels), findings_by_kernel(visible, rows), strict=True))
        cached = (visible, groups)
        groups_of.put(doc.uri, cached)
    found = cached[1].get((kernel.name, kernel.span.line))
    if found is None:  # a kernel record of another analysis: group it alone
        found = findings_by_kernel(visible, [(kernel.name, kernel.span.line, kernel.span.end_line)])[0]
    return found
