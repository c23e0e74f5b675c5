"""Levels 3-4 without an explicit command (`tritonlens.escalation`: {onSave, onSymptom}): on save, or once
typing pauses on a kernel with a level-1 symptom, compile the kernels whose compile inputs changed since their
last IR analysis; a newer save cancels an older escalation of the same document."""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...analysis.core.findings import Level, Severity
from ..lsp.feature import Feature
from ..lsp.progress import work_done
from ..trust.workspace_trust import may_escalate
from .compile import CompileFeature

if TYPE_CHECKING:
    from ..lsp.core import TritonLensServer

log = logging.getLogger(__name__)

SYMPTOM_IDLE_S = 2.0  # on-symptom escalation waits for the typing to pause this long


@dataclass(frozen=True)
class EscalationSettings:
    on_save: bool = True  # a save is a deliberate "I am done for now": worth a compile
    on_symptom: bool = False  # compiles while typing pauses: opt-in (CPU on small machines)


def escalation_settings(raw: Any) -> tuple[EscalationSettings, list[str]]:
    if raw is None:
        return EscalationSettings(), []
    if not isinstance(raw, dict):
        return EscalationSettings(), ["tritonlens.escalation must be an object {onSave, onSymptom}"]
    problems: list[str] = []
    values: dict[str, bool] = {}
    for key, attr in (("onSave", "on_save"), ("onSymptom", "on_symptom")):
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, bool):
            values[attr] = value
        else:
            problems.append(f"tritonlens.escalation.{key} must be true or false")
    return EscalationSettings(**values), problems



class EscalationFeature(Feature):
    """Levels 3-4 without an explicit command: on save, or once typing pauses on a kernel with a symptom."""

    name = "escalation"
    server: TritonLensServer  # set by register

    def __init__(self, compile: CompileFeature) -> None:
        super().__init__()
        self.compile = compile
        self.running: dict[str, tuple[asyncio.Task[None], threading.Event]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self.runs = 0  # escalations started (for tests and logs)
        self._restored: set[str] = set()  # documents whose cached levels 3-4 were looked up since they opened
        self.restored = 0  # kernels whose analysis came back from the compile cache (for tests and logs)

    def register(self, server: TritonLensServer) -> None:
        super().register(server)
        self.service = self.compile.service

    def escalation(self, uri: str) -> EscalationSettings:
        settings, problems = escalation_settings(self.server.config.for_uri(uri).extra.get("escalation"))
        for problem in problems:
            self.server.show_once(f"tritonlens: {problem}")
        return settings

    def on_save(self, uri: str) -> None:
        if may_escalate(self.server) and self.escalation(uri).on_save:
            self.start(uri, "save")

    def on_analysis(self, doc: Any) -> None:
        if doc.uri not in self._restored and may_escalate(self.server) and self.escalation(doc.uri).on_save:
            # A reopened file (a window reload) gets its cached levels 3-4 back without waiting for a save; only
            # in a trusted workspace (reading the compile cache starts runner workers), and for the version just
            # analysed: it never forces an analysis of a newer one (a burst of edits would analyse every version).
            self._restored.add(doc.uri)
            asyncio.get_running_loop().create_task(self._restore(doc))
        if not may_escalate(self.server) or not self.escalation(doc.uri).on_symptom:
            return
        timer = self._timers.pop(doc.uri, None)
        if timer is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()
        self._timers[doc.uri] = loop.call_later(SYMPTOM_IDLE_S, self.start, doc.uri, "symptom")

    def start(self, uri: str, why: str) -> None:
        self._timers.pop(uri, None)
        older = self.running.pop(uri, None)
        if older is not None and not older[0].done():
            older[1].set()  # the compile in the worker thread stops at its next check
            log.debug("escalation of %s superseded by a newer %s", uri, why)
        cancel = threading.Event()
        task = asyncio.get_running_loop().create_task(self._escalate(uri, why, cancel))
        self.running[uri] = (task, cancel)

    def with_symptoms(self, doc: Any) -> set[str]:
        """Kernels with a level-1 warning or error (on the event loop: it reads the server's findings)."""
        return {
            f.kernel
            for f in self.server.visible_findings(doc)
            if f.level == Level.TRIAGE and f.severity <= Severity.WARNING and f.kernel
        }

    def on_document_closed(self, uri: str) -> None:
        self.stop(uri)
        self._restored.discard(uri)

    async def _restore(self, doc: Any) -> None:
        """Levels 3-4 of the document's kernels from the compile cache only (compile_restore.py): no compile."""
        uri = doc.uri
        try:
            if doc.analysis is None or doc.analysis.syntax_error or not doc.current:
                return
            target = self.service.target_for(uri)
            names = await asyncio.get_running_loop().run_in_executor(
                None, self.service.changed_kernels, uri, doc.text, doc.path, target, None
            )
            for name in names:
                analysis = await self.service.analyze(
                    uri, name, target, threading.Event(), version=doc.version, cache_only=True
                )
                if analysis is not None:
                    self.restored += 1
                    log.info("levels 3-4 of %s restored from the compile cache", name)
        except Exception:
            log.exception("restoring cached analyses of %s failed", uri)

    def shutdown(self) -> None:
        for uri in list(self.running):
            self.stop(uri)

    def stop(self, uri: str) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        running = self.running.pop(uri, None)
        if running is not None:
            running[1].set()

    async def _escalate(self, uri: str, why: str, cancel: threading.Event) -> None:
        try:
            doc = await self.server.current(uri)
            if doc is None or cancel.is_set():
                return
            version = doc.version
            target = self.service.target_for(uri)
            if doc.analysis is None or doc.analysis.syntax_error:
                return
            among = self.with_symptoms(doc) if why == "symptom" else None
            text, path = doc.text, doc.path
            names = await asyncio.get_running_loop().run_in_executor(
                None, self.service.changed_kernels, uri, text, path, target, among
            )
            if not names:
                return
            self.runs += 1
            title = f"tritonlens: compiling {len(names)} changed kernel(s) for {target} ({why})"
            async with work_done(self.server, title, cancel_event=cancel) as progress:
                for n, name in enumerate(names):
                    if progress.cancelled:
                        break
                    progress.report(f"{name} ({n + 1}/{len(names)})", int(100 * n / len(names)))
                    analysis = await self.service.analyze(uri, name, target, cancel, version=version)
                    if analysis is None:
                        log.debug("escalation of %s dropped: the document changed", uri)
                        break
                    if analysis.runner_unavailable:
                        # One pop-up per session; the lens and the log keep saying it.
                        self.server.show_once(f"tritonlens: IR analysis is off: {analysis.error}")
                        break
        except Exception:
            log.exception("escalation of %s failed", uri)
        finally:
            current = self.running.get(uri)
            if current is not None and current[1] is cancel:
                self.running.pop(uri, None)
