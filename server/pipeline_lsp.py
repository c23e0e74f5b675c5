"""Levels 3-4 in the language server: the `tritonlens.analyzeKernel` command, escalation on save or on a
triage symptom, the `tritonlens/ir` request, a code lens per kernel with the compiler's summary, and the
`tritonlens/status` notification (runner reachability).

Installed through `server.lsp.EXTENSION_MODULES`. Compiles run in a worker thread via `server.pipeline`;
results are merged per kernel with `server.add_findings` (dropped by the server when the document moved on)
and kept for the IR view while the kernel's text is unchanged. Escalation (`tritonlens.escalation`:
{onSave, onSymptom}) compiles only kernels whose text changed since their last IR analysis; a newer save
cancels an older escalation of the same document.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from ..analysis.findings import Level, Severity
from ..analysis.platform import compile_target_for
from ..ascend_runner.settings import RunnerSettings, parse_runner_settings
from .compile_inputs import compile_inputs_digest
from .lsp_commands import CommandError, arg
from .lsp_progress import work_done
from .pipeline import (
    TARGETS,
    KernelAnalysis,
    analyze_kernel,
    find_pyproject_overrides,
    launchable_kernels,
)

log = logging.getLogger(__name__)

ANALYZE_COMMAND = "tritonlens.analyzeKernel"
IR_REQUEST = "tritonlens/ir"
STATUS_NOTIFICATION = "tritonlens/status"
DEFAULT_IR_TARGET = "sm_90"
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


@dataclass
class Stored:
    version: int
    target: str
    analysis: KernelAnalysis


class PipelineService:
    """Runner, worker thread and the last analysis per (uri, kernel); touched on the event loop only."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.results: dict[tuple[str, str], Stored] = {}
        # (uri, kernel, target) -> digest of everything that compile read (compile_inputs): a save recompiles
        # a kernel when it changed, e.g. a launch site's block size outside the kernel's own lines.
        self.analyzed_hash: dict[tuple[str, str, str], str] = {}
        self._runner: Any = None
        self._runner_config: Any = None
        self._runner_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tritonlens-pipeline")

    # -- configuration -------------------------------------------------------------------------------
    def target_for(self, uri: str, requested: Any = None) -> str:
        if requested is not None and requested != "auto":
            if requested not in TARGETS:
                raise CommandError(f"unknown target {requested!r}; use one of {', '.join(TARGETS)}")
            return str(requested)
        config = self.server.config.for_uri(uri)
        raw = config.raw if isinstance(config.raw, dict) else {}
        target = raw.get("irTarget")
        if target in TARGETS:
            return str(target)
        platforms = config.settings.platforms
        if config.settings.target == "auto":
            doc = self.server.docs.get(uri)
            platforms = doc.analysis.platforms if doc is not None and doc.analysis is not None else ("cuda",)
        # no irTarget: the compile target of the platform the file is written for
        return compile_target_for(platforms, DEFAULT_IR_TARGET)

    def runner_settings(self, uri: str) -> RunnerSettings:
        """`tritonlens.runners` for the folder of `uri`, relative paths taken from that folder."""
        raw = self.server.config.for_uri(uri).extra.get("runners")
        folder = self.server.config.folder_for(uri)
        settings, problems = parse_runner_settings(raw, to_fs_path(folder) if folder else None)
        for problem in problems:
            self.server.show_once(f"tritonlens: {problem}")
        return settings

    def escalation(self, uri: str) -> EscalationSettings:
        settings, problems = escalation_settings(self.server.config.for_uri(uri).extra.get("escalation"))
        for problem in problems:
            self.server.show_once(f"tritonlens: {problem}")
        return settings

    def runner(self, uri: str) -> Any:
        """The runner the settings name (remote when configured); an unusable remote falls back to local."""
        from ..ascend_runner.factory import get_runner

        config = self.runner_settings(uri).runner_config()
        with self._runner_lock:
            if self._runner is None or config != self._runner_config:
                if self._runner is not None:
                    self._runner.close()
                try:
                    self._runner = get_runner(config)
                except Exception as exc:  # e.g. the token variable is not set in the server's environment
                    self.server.show_once(
                        f"tritonlens: the remote runner {config.get('url')} is unusable ({exc}); "
                        "compiling with the local runner"
                    )
                    self._runner = get_runner(None)
                self._runner_config = config
            return self._runner

    def close(self) -> None:
        with self._runner_lock:
            if self._runner is not None:
                self._runner.close()
                self._runner = None
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- analysis ------------------------------------------------------------------------------------
    async def analyze(
        self, uri: str, kernel: str, target: str, cancel: threading.Event, version: int | None = None
    ) -> KernelAnalysis | None:
        """Compile and analyze `kernel`; None when the document is no longer at `version` (if given)."""
        doc = await self.server.current(uri)
        if doc is None:
            raise CommandError(f"{uri} is not open")
        if version is not None and doc.version != version:
            return None
        version, text, path = doc.version, doc.text, doc.path
        runner = self.runner(uri)
        inputs: list[str | None] = []

        def compile_and_analyze() -> KernelAnalysis:
            # The digest first: a file changed during the compile then reads as changed at the next save.
            inputs.append(compile_inputs_digest(text, path, kernel))
            overrides = find_pyproject_overrides(path) if path else {}
            return analyze_kernel(text, path or uri, kernel, target, runner, overrides=overrides, cancel=cancel)

        analysis = await asyncio.get_running_loop().run_in_executor(self._pool, compile_and_analyze)
        source_hash = inputs[0] if inputs else None
        if not analysis.cancelled and self.server.add_findings(
            uri, version, kernel, Level.COMPILER, list(analysis.findings)
        ):
            self.results[(uri, kernel)] = Stored(version, target, analysis)
            if source_hash is not None and not analysis.runner_unavailable:
                self.analyzed_hash[(uri, kernel, target)] = source_hash
        return analysis

    def stored(self, uri: str, kernel: str, target: str) -> KernelAnalysis | None:
        """The kept analysis if the kernel's text is unchanged since (the server dropped the layer otherwise)."""
        hit = self.results.get((uri, kernel))
        doc = self.server.docs.get(uri)
        if hit is None or doc is None or hit.target != target:
            return None
        if (kernel, Level.COMPILER) not in doc.layers:
            self.results.pop((uri, kernel), None)
            return None
        return hit.analysis

    def with_symptoms(self, doc: Any) -> set[str]:
        """Kernels with a level-1 warning or error (on the event loop: it reads the server's findings)."""
        return {
            f.kernel
            for f in self.server.visible_findings(doc)
            if f.level == Level.TRIAGE and f.severity <= Severity.WARNING and f.kernel
        }

    def changed_kernels(
        self, uri: str, text: str, path: str | None, target: str, among: set[str] | None = None
    ) -> list[str]:
        """Launchable kernels (of `among`, if given) whose compile inputs changed since their last IR analysis
        for `target`. Reads the text and files: call it off the event loop."""
        return [
            n
            for n in launchable_kernels(text)
            if (among is None or n in among)
            and self.analyzed_hash.get((uri, n, target)) != compile_inputs_digest(text, path, n)
        ]

    def forget(self, uri: str) -> None:
        self.results = {k: v for k, v in self.results.items() if k[0] != uri}
        self.analyzed_hash = {k: v for k, v in self.analyzed_hash.items() if k[0] != uri}


class Escalator:
    """Levels 3-4 without an explicit command: on save, or once typing pauses on a kernel with a symptom."""

    def __init__(self, server: Any, service: PipelineService) -> None:
        self.server = server
        self.service = service
        self.running: dict[str, tuple[asyncio.Task[None], threading.Event]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self.runs = 0  # escalations started (for tests and logs)

    def on_save(self, server: Any, uri: str) -> None:
        if self.service.escalation(uri).on_save:
            self.start(uri, "save")

    def on_triage(self, server: Any, doc: Any) -> None:
        if not self.service.escalation(doc.uri).on_symptom:
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
            among = self.service.with_symptoms(doc) if why == "symptom" else None
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


class StatusReporter:
    """Sends `tritonlens/status` {runners: [{name, reachable, detail}]} when the runner settings change."""

    def __init__(self, server: Any, service: PipelineService) -> None:
        self.server = server
        self.service = service
        self._last: Any = None
        self.rows: list[dict[str, Any]] = []

    def settings(self) -> list[RunnerSettings]:
        uris = list(self.server.config.folders) or [""]
        out: list[RunnerSettings] = []
        for uri in uris:
            settings = self.service.runner_settings(uri)
            if settings not in out:
                out.append(settings)
        return out

    def on_config(self, server: Any) -> None:
        settings = self.settings()
        if settings == self._last:
            return
        self._last = settings
        asyncio.get_running_loop().create_task(self.report(settings))

    async def report(self, settings: list[RunnerSettings] | None = None) -> list[dict[str, Any]]:
        from .commands.runners import survey

        settings = settings if settings is not None else self.settings()
        loop = asyncio.get_running_loop()
        rows: dict[str, dict[str, Any]] = {}
        for one in settings:
            # Health checks are network calls: off the event loop. Local envs are only looked up, not started.
            for row in await loop.run_in_executor(None, lambda s=one: survey(s, probe_local=False)):
                rows.setdefault(row["name"], row)
        self.rows = [{k: r[k] for k in ("name", "reachable", "detail")} for r in rows.values()]
        self.server.protocol.notify(STATUS_NOTIFICATION, {"runners": self.rows})
        return self.rows


def _kernel_row(analysis: KernelAnalysis) -> dict[str, Any]:
    return {
        "kernel": analysis.kernel,
        "target": analysis.target,
        "error": analysis.error,
        "runnerUnavailable": analysis.runner_unavailable,
        "cancelled": analysis.cancelled,
        "summary": analysis.summary,
        "findings": len(analysis.findings),
        "specializations": [s.to_dict() for s in analysis.specializations],
    }


def lens_title(analysis: KernelAnalysis) -> str:
    """One line for the code lens: what the compiler did with this kernel."""
    s = analysis.summary
    if analysis.runner_unavailable:
        return f"{analysis.target}: no runner environment (run scripts/bootstrap)"
    if analysis.error:
        return f"{analysis.target}: not analyzed ({analysis.error[:80]})"
    if not analysis.primary:
        return f"{analysis.target}: does not compile"
    parts = [analysis.target]
    for key, label in (("registers", "regs"), ("spill_stores", "B spilled"), ("shared", "B smem")):
        if isinstance(s.get(key), int):
            parts.append(f"{s[key]} {label}")
    for key in ("mix_mode", "dot_lowering"):
        if isinstance(s.get(key), str):
            parts.append(str(s[key]))
    ub = ub_lens_part(s)
    if ub:
        parts.append(ub)
    parts.append(f"{sum(1 for f in analysis.findings if int(f.level) >= 3)} compiler finding(s)")
    return "tritonlens " + ", ".join(parts)


def ub_lens_part(s: dict[str, Any]) -> str | None:
    """Ascend UB use as bishengir decided it (PlanMemory, or its overflow error); nothing when it did not run."""
    cap = s.get("ub_capacity_bits") or s.get("ub_available_bits")
    if s.get("ub_overflow") and isinstance(s.get("ub_required_bits"), int) and isinstance(cap, int):
        return f"UB overflow {s['ub_required_bits'] // 8192} of {cap // 8192} KB (bishengir)"
    if isinstance(s.get("ub_used_bits"), int) and isinstance(cap, int):
        return f"UB {s['ub_used_bits'] // 8192} of {cap // 8192} KB (bishengir PlanMemory)"
    return None


def install(server: Any) -> None:
    service = PipelineService(server)
    server.pipeline = service
    escalator = Escalator(server, service)
    server.escalator = escalator
    server.save_hooks.append(escalator.on_save)
    server.analysis_hooks.append(escalator.on_triage)
    status = StatusReporter(server, service)
    server.runner_status = status
    server.config_hooks.append(status.on_config)

    def closed(ls: Any, uri: str) -> None:
        escalator.stop(uri)
        service.forget(uri)

    server.close_hooks.append(closed)

    async def analyze_command(ls: Any, args: list[Any]) -> list[dict[str, Any]]:
        uri = arg(args, 0, str, "document URI")
        kernel = args[1] if len(args) > 1 and args[1] else None
        if kernel is not None and not isinstance(kernel, str):
            raise CommandError("argument 2 (kernel name) must be a string")
        target = service.target_for(uri, args[2] if len(args) > 2 else None)
        doc = await ls.current(uri)
        if doc is None:
            raise CommandError(f"{uri} is not open")
        names = [kernel] if kernel else launchable_kernels(doc.text)
        out: list[dict[str, Any]] = []
        async with work_done(ls, f"tritonlens: compiling for {target}") as progress:
            for n, name in enumerate(names):
                if progress.cancelled:
                    break
                progress.report(f"{name} ({n + 1}/{len(names)})", int(100 * n / max(len(names), 1)))
                analysis = await service.analyze(uri, name, target, progress.cancel_event)
                if analysis is None:
                    break
                out.append(_kernel_row(analysis))
                if analysis.runner_unavailable:
                    ls.show_once(f"tritonlens: IR analysis is off: {analysis.error}")
                    break
        return out

    server.commands.add(ANALYZE_COMMAND, "Compile this kernel and explain the IR", analyze_command)

    @server.feature(IR_REQUEST)
    async def ir_request(ls: Any, params: Any) -> dict[str, Any]:
        get = params.get if isinstance(params, dict) else lambda k, d=None: getattr(params, k, d)
        uri, kernel, stage = get("uri"), get("kernel"), get("stage")
        if not isinstance(uri, str) or not isinstance(kernel, str):
            return {"error": "tritonlens/ir needs {uri, kernel, stage}", "stages": []}
        try:
            target = service.target_for(uri, get("target"))
        except CommandError as exc:
            return {"error": str(exc), "stages": []}
        analysis = service.stored(uri, kernel, target)
        if analysis is None:
            try:
                analysis = await service.analyze(uri, kernel, target, threading.Event())
            except CommandError as exc:  # e.g. the document is not open: a sentence, not a traceback
                return {"error": str(exc), "stages": [], "target": target}
        if analysis is None:
            return {"error": "the document changed; ask again", "stages": [], "target": target}
        primary = analysis.primary
        if primary is None:
            return {"error": analysis.error or "the kernel did not compile", "stages": [], "target": target}
        stages = list(primary.stages)
        stage = (
            stage if isinstance(stage, str) and stage in primary.stages else (stages[0] if stages else None)
        )
        return {
            "kernel": kernel,
            "target": target,
            "variant": primary.specialization.label,
            "stage": stage,
            "stages": stages,
            "text": primary.stages.get(stage, "") if stage else "",
            "lineMap": [list(p) for p in primary.line_maps.get(stage, [])] if stage else [],
            "summary": analysis.summary,
        }

    def lens(ls: Any, doc: Any, kernel: Any, findings: list[Any]) -> list[types.CodeLens]:
        from .lsp_features import _lines

        target = service.target_for(doc.uri)
        analysis = service.stored(doc.uri, kernel.name, target)
        title = lens_title(analysis) if analysis else f"tritonlens: compile for {target} and explain"
        cmd = types.Command(title=title, command=ANALYZE_COMMAND, arguments=[doc.uri, kernel.name, target])
        return [types.CodeLens(range=_lines(ls, doc).range(kernel.name_span), command=cmd)]

    server.lens_providers.append(lens)

    shutdown = getattr(server, "shutdown_resources", None)
    if callable(shutdown):

        def shutdown_resources() -> None:
            for uri in list(escalator.running):
                escalator.stop(uri)
            service.close()
            shutdown()

        server.shutdown_resources = shutdown_resources
