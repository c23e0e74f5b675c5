"""Code lenses in two steps, so that a file of thousands of kernels never blocks the event loop.

`textDocument/codeLens` answers ranges only: one row per (kernel, feature that puts a lens on it), with data
naming the feature, document version and kernel. The rows of an analysed version are built once, off the event
loop (the kernel positions, in the negotiated encoding, and each feature's `lens_kernels`), and sent as
JSON-ready rows (`Prebuilt`: no per-lens object conversion on the loop). `codeLens/resolve` then fills one
lens's command from that feature (`Feature.lens_command`): O(1) in the document, for the lenses the editor shows.
The rows are built again when the document's analysis changes or a feature says its lenses did
(`server.lenses_changed()`), and the client is asked to refresh them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ..lsp.convert import LineText, Prebuilt
from ..lsp.documents import DocState
from ..lsp.feature import Feature
from ..lsp.views import DocVersion, kernel_findings_of

if TYPE_CHECKING:
    from ..lsp.core import TritonLensServer

log = logging.getLogger("tritonlens.lsp")


# A lens whose kernel is gone by the time it is resolved: the editor asks for lenses again after a change.
STALE_TITLE = "tritonlens: changed, updating..."


def _position(lines: LineText, line: int, col: int) -> dict[str, int]:
    p = lines.to_lsp(line, col)
    return {"line": p.line, "character": p.character}


def build_rows(version: DocVersion, encoding: str, features: list[Any]) -> Prebuilt:
    """Every lens of one analysed version (runs in a worker thread: reads only immutable analysis data)."""
    analysis = version.analysis
    lines = LineText(version.text, encoding)
    wanted = []
    for feature in features:
        try:
            names = feature.lens_kernels(version)
        except Exception:  # one feature's failure costs its lenses only
            log.exception("%s.lens_kernels failed", type(feature).__name__)
            continue
        if names is None or names:
            wanted.append((feature.name, names))
    rows = Prebuilt()
    for n, kernel in enumerate(analysis.kernels):
        if n % 256 == 255:
            time.sleep(0)  # hand the GIL to the event loop now and then: this thread must not make requests wait
        span = kernel.name_span
        rng = {"start": _position(lines, span.line, span.col), "end": _position(lines, span.end_line, span.end_col)}
        for name, names in wanted:
            if names is None or kernel.name in names:
                data = {"uri": version.uri, "version": analysis.version, "kernel": kernel.name, "feature": name}
                rows.append({"range": rng, "data": data})
    return rows


class LensCache:
    """The lens rows of each open document's analysed version, built at most once per (analysis, lens epoch,
    encoding); concurrent requests for the same version share one build."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[tuple[int, int, str], Prebuilt]] = {}
        self._building: dict[str, tuple[tuple[int, int, str], asyncio.Future[Prebuilt]]] = {}
        self.builds = 0  # for tests: how often rows were built

    async def rows(self, server: Any, doc: DocState, epoch: int) -> Prebuilt:
        analysis = doc.analysis
        if analysis is None or analysis.syntax_error:
            return Prebuilt()
        encoding = str(server.workspace.position_encoding or types.PositionEncodingKind.Utf16)
        key = (id(analysis), epoch, encoding)
        hit = self._rows.get(doc.uri)
        if hit is not None and hit[0] == key:
            return hit[1]
        building = self._building.get(doc.uri)
        if building is None or building[0] != key:
            loop = asyncio.get_running_loop()
            self.builds += 1
            snapshot = DocVersion(doc.uri, doc.path, analysis, doc.text)
            future = loop.run_in_executor(None, build_rows, snapshot, encoding, list(server.features))
            building = (key, asyncio.ensure_future(future))
            self._building[doc.uri] = building
        try:
            rows = await asyncio.shield(building[1])
        finally:
            if self._building.get(doc.uri) is building and building[1].done():
                self._building.pop(doc.uri, None)
        if doc.analysis is analysis:
            self._rows[doc.uri] = (key, rows)
        return rows

    def forget(self, uri: str) -> None:
        self._rows.pop(uri, None)
        self._building.pop(uri, None)


def resolve_code_lens(server: Any, lens: types.CodeLens) -> types.CodeLens:
    """Fill `lens`'s command from the feature its data names, against the document's analysed version."""
    data = lens.data if isinstance(lens.data, dict) else {}
    feature = server.features.named(str(data.get("feature")))
    doc = server.docs.get(data.get("uri"))
    kernel = None
    if feature is not None and doc is not None and doc.analysis is not None:
        kernel = doc.analysis.kernel_named(str(data.get("kernel")))
    command = None
    if kernel is not None:
        try:
            command = feature.lens_command(doc, kernel, kernel_findings_of(server, doc, kernel))
        except Exception:
            log.exception("%s.lens_command failed", type(feature).__name__)
    lens.command = command or types.Command(title=STALE_TITLE, command="")
    return lens


class CodeLensFeature(Feature):
    name = "code-lens"
    server: TritonLensServer  # set by register

    def __init__(self) -> None:
        super().__init__()
        self.cache = LensCache()
        self.epoch = 0  # bumped when a feature's lenses change without a new document version

    def register(self, server: TritonLensServer) -> None:
        super().register(server)
        self.add_request(types.TEXT_DOCUMENT_CODE_LENS, self.on_lens, types.CodeLensOptions(resolve_provider=True))
        self.add_request(types.CODE_LENS_RESOLVE, self.on_resolve)

    def _refresh(self) -> None:
        ws = self.server.client_capabilities.workspace
        if ws and ws.code_lens and ws.code_lens.refresh_support:
            self.server.workspace_code_lens_refresh(None)

    def on_findings_changed(self, uri: str) -> None:
        self._refresh()

    def on_lenses_changed(self) -> None:
        self.epoch += 1
        self._refresh()

    def on_document_closed(self, uri: str) -> None:
        self.cache.forget(uri)

    async def on_lens(self, ls: Any, params: types.CodeLensParams) -> Any:
        doc = await ls.current(params.text_document.uri)
        return None if doc is None else await self.lenses(doc)

    async def lenses(self, doc: DocState) -> Prebuilt:
        """Ranges only: commands come with codeLens/resolve."""
        return await self.cache.rows(self.server, doc, self.epoch)

    def on_resolve(self, ls: Any, params: types.CodeLens) -> types.CodeLens:
        return resolve_code_lens(ls, params)
