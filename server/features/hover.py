"""Hover: the findings under the cursor (hover_markdown) after every feature's own section (`Feature.hover`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ..lsp.documents import DocState
from ..lsp.feature import Feature
from ..lsp.views import lines_for
from .hover_markdown import client_shows_diagnostics_in_hover, hover_markdown

if TYPE_CHECKING:
    from ..lsp.core import TritonLensServer

log = logging.getLogger("tritonlens.lsp")


def hover(server: Any, doc: DocState, pos: types.Position) -> types.Hover | None:
    lines = lines_for(server, doc)
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


class HoverFeature(Feature):
    name = "hover"
    server: TritonLensServer  # set by register

    def register(self, server: TritonLensServer) -> None:
        super().register(server)
        self.add_request(types.TEXT_DOCUMENT_HOVER, self.on_hover)

    async def on_hover(self, ls: Any, params: types.HoverParams) -> types.Hover | None:
        doc = await ls.current(params.text_document.uri)
        return None if doc is None else hover(ls, doc, params.position)
