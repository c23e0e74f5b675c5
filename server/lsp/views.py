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


# uri -> (the text it was built from, encoding, its line table); compared by identity of the text object.
_LINE_TABLES: dict[str, tuple[str, str, LineText]] = {}


def lines_for(server: Any, doc: DocState) -> LineText:
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


# uri -> (the visible findings it was built from, kernel name and first line -> that kernel's findings).
_BY_KERNEL: dict[str, tuple[list[Finding], dict[tuple[str, int], list[Finding]]]] = {}


def kernel_findings_of(server: Any, doc: DocState, kernel: Any) -> list[Finding]:
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
