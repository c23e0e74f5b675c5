"""Levels 3-4 in the language server: the `tritonlens.analyzeKernel` command and a code lens per kernel with
the compiler's summary (CompileFeature), over CompileService: the runner the settings name, one worker thread,
and the last analysis per (uri, kernel). The IR view (ir_view_lsp) reads the same service.

Compiles run in the service's thread through the diagnose engine; results are merged per kernel with
`server.add_findings` (dropped by the server when the document moved on) and kept for the IR view while the
kernel's text is unchanged. The IR view, escalation, runner status, profiling, recording and optimizing are
given the CompileFeature in their constructors and share its service.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from ...analysis.core.findings import Level
from ...analysis.core.targets import choose_compile_target
from ..engine.diagnose.inputs import compile_inputs_digest, launchable_kernels, read_compile_inputs
from ..lsp.commands import CommandError, arg
from ..lsp.feature import Feature
from ..lsp.progress import work_done
from .compile_restore import CacheOnlyRunner, supports_cache_only

if TYPE_CHECKING:
    # The compile engine and the runner client are imported by the first compile or runner lookup, never at
    # server start (issue 23: the first answer needs neither).
    from ...ascend_runner.client import RunnerSettings
    from ..engine.diagnose.result import KernelAnalysis
    from ..lsp.core import TritonLensServer

log = logging.getLogger(__name__)

ANALYZE_COMMAND = "tritonlens.analyzeKernel"


@dataclass
class Stored:
    version: int
    target: str
    analysis: KernelAnalysis


class CompileService:
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
        """The compile target: the request's, else `tritonlens.irTarget`, else the file's platform's default."""
        config = self.server.config.for_uri(uri)
        raw = config.raw if isinstance(config.raw, dict) else {}
        platforms = config.settings.platforms
        if config.settings.target == "auto":
            doc = self.server.docs.get(uri)
            platforms = doc.analysis.platforms if doc is not None and doc.analysis is not None else ("cuda",)
        try:
            return choose_compile_target(requested, raw.get("irTarget"), platforms)
        except ValueError as exc:
            raise CommandError(str(exc)) from None

    def runner_settings(self, uri: str) -> RunnerSettings:
        """`tritonlens.runners` for the folder of `uri`, relative paths taken from that folder."""
        from ...ascend_runner.client import parse_runner_settings

        raw = self.server.config.for_uri(uri).extra.get("runners")
        folder = self.server.config.folder_for(uri)
        settings, problems = parse_runner_settings(raw, to_fs_path(folder) if folder else None)
        for problem in problems:
            self.server.show_once(f"tritonlens: {problem}")
        return settings

    def runner(self, uri: str) -> Any:
        """The runner the settings name (remote when configured); an unusable remote falls back to local."""
        from ...ascend_runner.client import get_runner

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
        self,
        uri: str,
        kernel: str,
        target: str,
        cancel: threading.Event,
        version: int | None = None,
        cache_only: bool = False,
    ) -> KernelAnalysis | None:
        """Compile and analyze `kernel`; None when the document is no longer at `version` (if given), or, with
        `cache_only`, when some compile it needs is not in the compile cache (nothing is compiled then)."""
        from ..engine.diagnose.run import analyze_kernel

        doc = await self.server.current(uri)
        if doc is None:
            raise CommandError(f"{uri} is not open")
        if version is not None and doc.version != version:
            return None
        version, text, path = doc.version, doc.text, doc.path
        runner: Any = self.runner(uri)
        if cache_only:
            if not supports_cache_only(runner):
                return None
            runner = CacheOnlyRunner(runner)
        inputs: list[str | None] = []

        def compile_and_analyze() -> KernelAnalysis:
            # The digest first: a file changed during the compile then reads as changed at the next save. The
            # compile gets the same pyproject table and stored launches (each file read once).
            read = read_compile_inputs(text, path, kernel)
            inputs.append(read.digest)
            recorded = read.recorded if path else None
            return analyze_kernel(
                text, path or uri, kernel, target, runner, overrides=read.overrides, recorded=recorded, cancel=cancel,
                foreign=read.foreign if path else (),
            )

        analysis = await asyncio.get_running_loop().run_in_executor(self._pool, compile_and_analyze)
        if cache_only and (runner.missed or analysis.runner_unavailable):
            return None  # not all of it was cached: the next save or Analyze kernel compiles it
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




class CompileFeature(Feature):
    """`tritonlens.analyzeKernel` and the compiler's summary lens per kernel."""

    name = "compile"
    server: TritonLensServer  # set by register

    def __init__(self) -> None:
        super().__init__()
        self.service: CompileService | None = None

    def register(self, server: TritonLensServer) -> None:
        super().register(server)
        self.service = CompileService(server)
        server.commands.add(ANALYZE_COMMAND, "Compile this kernel and explain the IR", self.analyze_command)

    def on_document_closed(self, uri: str) -> None:
        assert self.service is not None
        self.service.forget(uri)

    def shutdown(self) -> None:
        if self.service is not None:
            self.service.close()

    async def analyze_command(self, ls: Any, args: list[Any]) -> list[dict[str, Any]]:
        service = self.service
        assert service is not None
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

    def lens_kernels(self, doc: Any) -> set[str] | None:
        return None

    def lens_command(self, doc: Any, kernel: Any, findings: list[Any]) -> types.Command:
        assert self.service is not None
        target = self.service.target_for(doc.uri)
        analysis = self.service.stored(doc.uri, kernel.name, target)
        title = lens_title(analysis) if analysis else f"tritonlens: compile for {target} and explain"
        return types.Command(title=title, command=ANALYZE_COMMAND, arguments=[doc.uri, kernel.name, target])
