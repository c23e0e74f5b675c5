"""Levels 3-4 in the language server: the `tritonlens.analyzeKernel` command, the `tritonlens/ir` request and
a code lens per kernel with the compiler's summary.

Installed through `server.lsp.EXTENSION_MODULES`. Compiles run in a worker thread via `server.pipeline`;
results are merged per kernel with `server.add_findings` (dropped by the server when the document moved on)
and kept for the IR view while the kernel's text is unchanged.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from tritonlens.analysis.findings import Level
from tritonlens.server.lsp_commands import CommandError, arg
from tritonlens.server.lsp_progress import work_done
from tritonlens.server.pipeline import (
    TARGETS,
    KernelAnalysis,
    analyze_kernel,
    find_pyproject_overrides,
    launchable_kernels,
)

log = logging.getLogger(__name__)

ANALYZE_COMMAND = "tritonlens.analyzeKernel"
IR_REQUEST = "tritonlens/ir"
DEFAULT_IR_TARGET = "sm_90"


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
        self._runner: Any = None
        self._runner_config: Any = None
        self._runner_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tritonlens-pipeline")

    # -- configuration -------------------------------------------------------------------------------
    def target_for(self, uri: str, requested: Any = None) -> str:
        if requested is not None:
            if requested not in TARGETS:
                raise CommandError(f"unknown target {requested!r}; use one of {', '.join(TARGETS)}")
            return str(requested)
        raw = self.server.config.for_uri(uri).raw
        target = raw.get("irTarget", DEFAULT_IR_TARGET) if isinstance(raw, dict) else DEFAULT_IR_TARGET
        return target if target in TARGETS else DEFAULT_IR_TARGET

    def runner(self, uri: str) -> Any:
        from tritonlens.ascend_runner.client import get_runner

        config = self.server.config.for_uri(uri).extra.get("runners")
        config = config if isinstance(config, dict) else None
        with self._runner_lock:
            if self._runner is None or config != self._runner_config:
                if self._runner is not None:
                    self._runner.close()
                try:
                    self._runner = get_runner(config)
                except (NotImplementedError, ValueError, TypeError) as exc:
                    log.warning("runner config %r unusable (%s); using the local runner", config, exc)
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
    async def analyze(self, uri: str, kernel: str, target: str, cancel: threading.Event) -> KernelAnalysis:
        doc = await self.server.current(uri)
        if doc is None:
            raise CommandError(f"{uri} is not open")
        version, text, path = doc.version, doc.text, doc.path
        runner = self.runner(uri)
        overrides = find_pyproject_overrides(path) if path else {}
        loop = asyncio.get_running_loop()
        analysis = await loop.run_in_executor(
            self._pool,
            lambda: analyze_kernel(
                text, path or uri, kernel, target, runner, overrides=overrides, cancel=cancel
            ),
        )
        if not analysis.cancelled and self.server.add_findings(
            uri, version, kernel, Level.COMPILER, list(analysis.findings)
        ):
            self.results[(uri, kernel)] = Stored(version, target, analysis)
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
    parts.append(f"{sum(1 for f in analysis.findings if int(f.level) >= 3)} compiler finding(s)")
    return "tritonlens " + ", ".join(parts)


def install(server: Any) -> None:
    service = PipelineService(server)
    server.pipeline = service

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
                out.append(_kernel_row(analysis))
                if analysis.runner_unavailable:
                    ls.window_show_message(
                        types.ShowMessageParams(
                            type=types.MessageType.Warning, message=f"tritonlens: {analysis.error}"
                        )
                    )
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
            analysis = await service.analyze(uri, kernel, target, threading.Event())
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
        from tritonlens.server.lsp_features import _lines

        target = service.target_for(doc.uri)
        analysis = service.stored(doc.uri, kernel.name, target)
        title = lens_title(analysis) if analysis else f"tritonlens: compile for {target} and explain"
        cmd = types.Command(title=title, command=ANALYZE_COMMAND, arguments=[doc.uri, kernel.name, target])
        return [types.CodeLens(range=_lines(ls, doc).range(kernel.name_span), command=cmd)]

    server.lens_providers.append(lens)

    shutdown = getattr(server, "shutdown_resources", None)
    if callable(shutdown):

        def shutdown_resources() -> None:
            service.close()
            shutdown()

        server.shutdown_resources = shutdown_resources
