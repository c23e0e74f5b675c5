"""The language server core: open documents, debounced analysis off the event loop, settings, the features.

What the editor sees is answered by features (lsp_feature): diagnostics, hover, code actions and code lenses are
features like the later levels' ones; the core tells them when a document's findings change.

All state is touched on the event loop thread only; triage runs in a thread pool and its result is accepted only
if the document is still at the version it was computed from. Each document has one analysis lane: at most one
triage of it runs at a time, and always of its newest version, so an often-edited or huge document occupies one
thread and never queues ahead of the others. A document a request waits for is analysed first, on a thread of its
own (responsive/urgent_pool.py); other analyses run BACKGROUND_ANALYSES at a time.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from ...analysis.core.escalation import apply_and_merge
from ...analysis.core.findings import Finding, Level
from ...analysis.state.session import Session
from ..responsive.urgent_pool import UrgentFirstPool
from ..trust.workspace_trust import restrict_folder_section, trust_of
from . import frames as lsp_io
from .analysis import analyze_text_quickly
from .collector import Pause, collect_if_due
from .commands import CommandRegistry
from .config import SECTION, ConfigStore, ServerConfig, parse_config
from .convert import plain_text
from .documents import DocState
from .feature import Features
from .protocol import TritonLensProtocol

log = logging.getLogger("tritonlens.lsp")

CONFIG_TIMEOUT_S = 5.0
# Documents analysed side by side: a document waits for a thread only when this many are busy at once.
ANALYSIS_LANES = 16
# Background analyses at once: triage is pure Python, so more only share the interpreter lock (and a hover waiting
# behind 200 just-opened documents took 60 s).
BACKGROUND_ANALYSES = 2
# Start-up work that can wait (after_first_answer) waits this long at most for a first analysis: a window with no
# Python file open still gets it.
FIRST_ANSWER_WAIT_S = 2.0


def _paused_analysis(pause: Pause, text: str, path: str, version: int) -> Any:
    pause.begin()  # ended by the event loop after the publish (_analyze_once)
    return analyze_text_quickly(text, path, version)


class TritonLensServer(LanguageServer):
    def __init__(self, version: str, session: Session | None = None) -> None:
        super().__init__(
            "tritonlens",
            version,
            protocol_cls=TritonLensProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        # The caches of this server's analyses (analysis/state/session.py); create_server installs it.
        self.session = session if session is not None else Session()
        self.docs: dict[str, DocState] = {}
        self.config = ConfigStore()
        self.commands = CommandRegistry(self)
        # Set while no open document is being analysed: background work (the workspace scan) waits for it.
        self.editor_idle = threading.Event()
        self.editor_idle.set()
        # Everything the editor is shown (diagnostics, hover, code actions, lenses, IR view, ...): lsp_feature.
        self.features = Features()
        self._pool = UrgentFirstPool(BACKGROUND_ANALYSES, ANALYSIS_LANES, "tritonlens-triage")
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._inflight: dict[str, asyncio.Task[None]] = {}  # uri -> its analysis lane, while it runs
        # uri -> ((doc, generation), settings, findings): visible_findings of what it read
        self._visible: dict[str, tuple[tuple[int, int], Any, list[Finding]]] = {}
        self._busy = 0  # analyses in flight for open documents
        self._init_options: Any = None
        self._shown_problems: set[str] = set()
        self._warmed = False  # every level's rules imported (after the first answer)
        self._answered = False  # the first analysis was published
        self._after_answer: list[Callable[[], None]] = []  # waiting for it (after_first_answer)
        self.loop: asyncio.AbstractEventLoop | None = None

    # --- transport: frames are read leniently (lsp_io) ------------------------------------------------------
    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        lsp_io.start_io(self, stdin, stdout)

    def start_tcp(self, host: str, port: int) -> None:
        lsp_io.start_tcp(self, host, port)

    # --- errors -------------------------------------------------------------------------------------------
    def report_server_error(self, error: Exception, source: Any) -> None:
        # Requests already carry their error back; everything else goes to the log, not a pop-up.
        log.error("server error (%s): %s", getattr(source, "__name__", source), error)
        try:
            self.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=f"{error}"))
        except Exception:
            pass

    # --- client capabilities ------------------------------------------------------------------------------
    def _caps(self) -> types.ClientCapabilities:
        return self.client_capabilities

    @property
    def init_options(self) -> Any:
        """The client's initializationOptions (None before initialize)."""
        return self._init_options

    def supports_configuration(self) -> bool:
        ws = self._caps().workspace
        return bool(ws and ws.configuration)

    def show_once(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        """A pop-up the first time `message` comes up in this session, the log every time (no storms)."""
        message = plain_text(message)  # pop-ups and logs are plain text: no literal Markdown backticks
        self.window_log_message(types.LogMessageParams(type=kind, message=message))
        if message in self._shown_problems:
            return
        self._shown_problems.add(message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def lenses_changed(self) -> None:
        """A feature's lenses changed (e.g. launches were recorded): the code lens feature recomputes them."""
        self.features.each("on_lenses_changed")

    # --- documents ----------------------------------------------------------------------------------------
    def save(self, uri: str) -> None:
        self._start_analysis(uri)  # skips the rest of the debounce; no-op if current
        if uri in self.docs:
            self.features.each("on_save", uri)

    def open(self, uri: str, version: int, language_id: str) -> None:
        path = to_fs_path(uri) or uri
        self.docs[uri] = DocState(uri=uri, path=path, version=version)
        self._start_analysis(uri)

    def change(self, uri: str, version: int) -> None:
        doc = self.docs.get(uri)
        if doc is None:
            return
        doc.version = version
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        delay = self.config.for_uri(uri).debounce_ms / 1000.0
        self._timers[uri] = self._event_loop().call_later(delay, self._start_analysis, uri)

    def close(self, uri: str) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self.docs.pop(uri, None)
        self._inflight.pop(uri, None)
        self._visible.pop(uri, None)
        self.features.each("on_document_closed", uri)

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        return self.loop

    def _start_analysis(self, uri: str) -> asyncio.Task[None] | None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()  # a pull or save got here first: the debounced run is not needed any more
        doc = self.docs.get(uri)
        if doc is None or doc.current:
            return None
        lane = self._inflight.get(uri)
        if lane is not None and not lane.done():
            return lane  # it analyses the newest version before it ends
        task = self._event_loop().create_task(self._analysis_lane(uri, doc))
        self._inflight[uri] = task
        return task

    async def _analysis_lane(self, uri: str, opened: DocState) -> None:
        """Analyse `opened` until its stored analysis is of its newest version (or it was closed)."""
        try:
            while self.docs.get(uri) is opened and not opened.current:
                try:
                    text = self.workspace.get_text_document(uri).source
                except Exception:
                    log.exception("no text for %s", uri)
                    return
                await self._analyze_once(uri, opened, opened.version, text)
        finally:
            if self._inflight.get(uri) is asyncio.current_task():
                self._inflight.pop(uri, None)

    async def _analyze_once(self, uri: str, opened: DocState, version: int, text: str) -> None:
        started = time.perf_counter()
        self._busy += 1
        self.editor_idle.clear()
        analyzed = started
        # The collector is off from the analysis' start until its diagnostics are out; what it owes runs after.
        pause = Pause()
        try:
            analysis = await asyncio.wrap_future(
                self._pool.submit(uri, _paused_analysis, pause, text, opened.path, version)
            )
            analyzed = time.perf_counter()
            # Same object required: a close and re-open restarts version numbers, so a version alone is ambiguous.
            if self.docs.get(uri) is not opened or not opened.set_analysis(analysis, text):
                log.debug("dropped stale analysis of %s v%s", uri, version)
                return
            self._changed(uri)  # published before background work resumes: it would share the GIL
        finally:
            pause.end()
            self._busy -= 1
            if self._busy == 0:
                self.editor_idle.set()
            self._event_loop().call_soon(collect_if_due)
        self._warm_later_levels()
        self._first_answer_out()
        log.debug(
            "%s v%s: triage %.0f ms, publish %.0f ms",
            uri,
            version,
            (analyzed - started) * 1000,
            (time.perf_counter() - analyzed) * 1000,
        )
        self.features.each("on_analysis", opened)

    def after_first_answer(self, callback: Callable[[], None]) -> None:
        """Run `callback` on the event loop once the first analysis is published (at once if it was; after
        FIRST_ANSWER_WAIT_S if none comes): start-up work such as the runner survey and the imports it needs then
        never shares the interpreter with the first diagnostics (issue 23)."""
        if self._answered:
            callback()
            return
        if not self._after_answer:
            self._event_loop().call_later(FIRST_ANSWER_WAIT_S, self._first_answer_out)
        self._after_answer.append(callback)

    def _first_answer_out(self) -> None:
        self._answered = True
        waiting, self._after_answer = self._after_answer, []
        for callback in waiting:
            try:
                callback()
            except Exception:
                log.exception("start-up work after the first answer failed")

    def _warm_later_levels(self) -> None:
        """After the first answer: import every level's rules in the background (the first later-level finding
        would otherwise pay for it on the event loop), while no document is being analysed."""
        if self._warmed:
            return
        self._warmed = True

        def warm() -> None:
            from ...analysis.core.rules import all_rules

            self.editor_idle.wait(timeout=5.0)
            all_rules()

        threading.Thread(target=warm, name="tritonlens-warm-rules", daemon=True).start()

    async def current(self, uri: str, attempts: int = 5) -> DocState | None:
        """The doc with an analysis of its latest version (analyzing now, skipping the debounce, if needed)."""
        for _ in range(attempts):
            doc = self.docs.get(uri)
            if doc is None or doc.current:
                return doc
            self._pool.prioritize(uri)  # a request waits: ahead of every background analysis
            task = self._start_analysis(uri)
            if task is None:
                return doc
            await asyncio.shield(task)
        return self.docs.get(uri)

    def _changed(self, uri: str) -> None:
        """What the doc shows changed: the diagnostics feature pushes it (or asks the client to pull), ..."""
        self.features.each("on_findings_changed", uri)

    # --- findings -----------------------------------------------------------------------------------------
    def visible_findings(self, doc: DocState) -> list[Finding]:
        """Every level's findings for the doc, filtered by its settings, one finding per confirmed cause.

        Diagnostics, hover, code actions and lenses all read this, so they agree on the merged result. Computed
        once per (analysis, layers, settings): request handlers ask per item (per kernel, per lens)."""
        configured = self.config.for_uri(doc.uri).settings
        cached = self._visible.get(doc.uri)
        if cached is not None and cached[0] == (id(doc), doc.generation) and cached[1] is configured:
            return cached[2]
        settings = configured
        if settings.target == "auto" and doc.analysis is not None:
            # decided once per analyzed version (off the event loop), never per request
            settings = replace(settings, file_platforms=doc.analysis.platforms)
        found = doc.findings()
        if doc.analysis is not None and doc.analysis.ignores:
            found = doc.analysis.ignores.apply(found)  # ignore comments and pyproject ignores, every level
        found = apply_and_merge(settings, found)
        self._visible[doc.uri] = ((id(doc), doc.generation), configured, found)
        return found

    def add_findings(
        self, uri: str, version: int, kernel: str, level: Level, findings: list[Finding]
    ) -> bool:
        """Merge later-level findings for one kernel (computed from `version`); False if the doc moved on."""
        doc = self.docs.get(uri)
        if doc is None or not doc.add_layer(version, kernel, level, findings):
            return False
        self._changed(uri)
        return True

    # --- configuration ------------------------------------------------------------------------------------
    async def refresh_config(self, pushed: Any = None) -> None:
        """Re-read the `tritonlens` section (global and per workspace folder) and re-show every open doc."""
        folders = [f.uri for f in self.workspace.folders.values()]
        raws: list[Any]
        if self.supports_configuration():
            items = [types.ConfigurationItem(section=SECTION)]
            items += [types.ConfigurationItem(scope_uri=uri, section=SECTION) for uri in folders]
            try:
                result = await asyncio.wait_for(
                    self.workspace_configuration_async(types.ConfigurationParams(items=items)),
                    CONFIG_TIMEOUT_S,
                )
                raws = list(result or [])
            except Exception as exc:
                log.warning("workspace/configuration failed: %s", exc)
                raws = []
            raws += [None] * (len(items) - len(raws))
        else:
            source = pushed if pushed is not None else self._init_options
            section = source.get(SECTION, source) if isinstance(source, dict) else None
            raws = [section] + [section] * len(folders)
        configs: list[ServerConfig] = []
        problems: list[str] = []
        trust = trust_of(self)
        for index, raw in enumerate(raws):
            if index > 0:  # a workspace folder's own settings (the first item is the user's)
                raw, dropped = restrict_folder_section(raw, trust)
                if dropped:
                    log.info("workspace not trusted: ignoring its %s settings", ", ".join(dropped))
            cfg, errs = parse_config(raw)
            configs.append(cfg)
            problems += errs
        before = {uri: self.config.for_uri(uri).settings for uri in self.docs}
        self.config.replace(configs[0], dict(zip(folders, configs[1:], strict=True)))
        for message in dict.fromkeys(problems):
            self.show_once(message)
        for uri in list(self.docs):
            # Only docs whose rule settings changed look different (a new debounce alone changes nothing).
            if self.docs[uri].analysis is not None and before.get(uri) != self.config.for_uri(uri).settings:
                self._changed(uri)
        self.features.each("on_config")

    def reanalyze_documents(self) -> None:
        """Forget every open document's analysis and analyse each again (tritonlens.reanalyze)."""
        for doc in list(self.docs.values()):
            doc.analysis = None
            doc.generation += 1
            self._start_analysis(doc.uri)

    def shutdown_resources(self) -> None:
        self.features.each("shutdown")
        self._pool.shutdown()
