"""Level 2 in the language server: `tritonlens.profileKernel` runs the document's harness on the configured
runner (local or remote), records and times every Triton launch, and shows the result in the editor:
profiling findings (TL2xx) as diagnostics, a code lens per profiled kernel (median time, GB/s, % of peak,
roofline class) and a hover table on the kernel's `def` line (per launch: time, GB/s, % of peak, roofline
class, waves).

Registered after CompileFeature, whose runner settings and local runner it shares.
Arguments: [uri, kernelName?]. The harness is the document itself (KernelBench module or script, as
`tritonlens profile` detects it), with its unsaved text. Backend: `tritonlens.profileBackend` (cuda | npu |
interpret) or, when unset, cuda if the runner sees a GPU, npu if it sees an NPU, else interpret (timings
from the interpreter are marked meaningless and give no roofline verdicts).
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from ...analysis.core.findings import Finding, Level
from ..lsp.commands import CommandError, arg
from ..lsp.feature import Feature
from ..lsp.progress import work_done
from .compile import CompileFeature, CompileService
from .runner_status import RunnerStatusFeature

if TYPE_CHECKING:
    from ...analysis.profile.analyze import ProfileReport
    from ...analysis.profile.launch import LaunchAnalysis
    from ..lsp.core import TritonLensServer

log = logging.getLogger(__name__)

PROFILE_COMMAND = "tritonlens.profileKernel"
# charts/roofline_request.py's method; the charts and the profiling engine are imported by a request or a run, never
# at server start (issue 23: the first answer needs none of them). A test keeps the two names equal.
ROOFLINE_REQUEST = "tritonlens/roofline"


@dataclass
class ProfiledKernel:
    """What one profile said about one kernel of a document; valid while its PROFILE layer is kept."""

    kernel: str
    version: int
    device: str
    backend: str
    runner: str
    timing_meaningful: bool
    launches: list[LaunchAnalysis] = field(default_factory=list)
    measured_at: str = ""


@dataclass
class RunnerChoice:
    runner: Any
    name: str  # as the status notification names it: "local cuda", "remote https://..."
    owned: bool  # close it after the job (a remote client made for this profile)


def _us(ms: float | None) -> str:
    return "n/a" if ms is None else f"{ms * 1e3:,.1f} us"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def _gbps(x: float | None) -> str:
    return "n/a" if x is None else f"{x:,.0f} GB/s"


def _peak_fraction(la: LaunchAnalysis) -> float | None:
    return la.compute_fraction if la.bound == "compute" else la.bandwidth_fraction


def lens_title(p: ProfiledKernel) -> str:
    """One line per profiled kernel: its slowest launch's median time, GB/s, % of peak and roofline class."""
    if not p.launches:
        return f"tritonlens profile ({p.device}): no launch of this kernel recorded"
    if not p.timing_meaningful:
        grids = ", ".join(str(la.grid) for la in p.launches[:3])
        return (
            f"tritonlens profile ({p.device}): {len(p.launches)} launch(es), grid {grids}; "
            "timings meaningless on this backend"
        )
    la = max(p.launches, key=lambda x: x.time_ms or 0.0)
    parts = [f"median {_us(la.time_ms)}", _gbps(la.achieved_gbps), f"{_pct(_peak_fraction(la))} of peak"]
    parts.append(f"{la.bound}-bound")
    if la.waves is not None:
        parts.append(f"{la.waves:.2f} waves")
    more = f" (slowest of {len(p.launches)} launches)" if len(p.launches) > 1 else ""
    return f"tritonlens profile ({p.device}): " + ", ".join(parts) + more


def hover_markdown(p: ProfiledKernel) -> str:
    head = f"**Profile** of `{p.kernel}` on {p.device} (backend `{p.backend}`, runner {p.runner}, {p.measured_at})"
    if not p.timing_meaningful:
        head += "\n\n*Timings from this backend are meaningless: no roofline verdicts.*"
    rows = [
        "| launch | grid | median | moved | GB/s | % of peak | roofline | waves |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for la in p.launches:
        waves = "n/a" if la.waves is None else f"{la.waves:.2f}"
        rows.append(
            f"| {la.index} | {la.grid} x{la.count} | {_us(la.time_ms)} | {la.bytes_moved / 2**20:,.2f} MiB | "
            f"{_gbps(la.achieved_gbps)} | {_pct(_peak_fraction(la))} | {la.bound} | {waves} |"
        )
    notes = [n for la in p.launches for n in la.notes]
    tail = "\n\n" + "\n".join(f"- {n}" for n in dict.fromkeys(notes)) if notes else ""
    return head + "\n\n" + "\n".join(rows) + tail


class ProfileService:
    """The last profile per (uri, kernel), the worker thread that waits on runners, and backend choice."""

    def __init__(
        self, server: TritonLensServer, compile: CompileService, status: RunnerStatusFeature | None = None
    ) -> None:
        self.server, self.compile, self.status = server, compile, status
        self.results: dict[tuple[str, str], ProfiledKernel] = {}
        self._backends: dict[str, str] = {}  # runner config (as JSON) -> backend its devices call for
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tritonlens-profile")
        self.last_elapsed_s: float | None = None
        self.reports: dict[str, list[tuple[str, ProfileReport]]] = {}  # uri -> its last profiles (roofline view)

    def choose_runner(self, uri: str) -> RunnerChoice:
        """The remote runner when configured (its token problems are errors), else the pipeline's local one."""
        from ...ascend_runner.client import get_runner

        settings = self.compile.runner_settings(uri)
        remote = settings.remote
        if remote is not None:
            try:
                runner = get_runner(remote.client_config())
            except Exception as exc:
                raise RuntimeError(f"the remote runner {remote.url} is unusable: {exc}") from None
            return RunnerChoice(runner, f"remote {remote.url}", owned=True)
        return RunnerChoice(self.compile.runner(uri), "local", owned=False)

    def backend(self, uri: str, choice: RunnerChoice) -> str:
        """Blocking (health check of a remote runner): call from the worker thread."""
        from ..engine.profile.jobs import backend_from_health, backend_setting, local_devices

        raw = self.server.config.for_uri(uri).raw
        chosen = backend_setting(raw.get("profileBackend") if isinstance(raw, dict) else None)
        if chosen:
            return chosen
        if choice.name == "local":
            devices = local_devices()
            return "cuda" if devices["cuda"] else "npu" if devices["npu"] else "interpret"
        if choice.name not in self._backends:
            self._backends[choice.name] = backend_from_health(choice.runner.health())
        return self._backends[choice.name]

    def stored(self, doc: Any, kernel: str) -> ProfiledKernel | None:
        hit = self.results.get((doc.uri, kernel))
        if hit is None:
            return None
        if (kernel, Level.PROFILE) not in doc.layers:  # the kernel's text changed: the numbers are stale
            self.results.pop((doc.uri, kernel), None)
            return None
        return hit

    def forget(self, uri: str) -> None:
        self.results = {k: v for k, v in self.results.items() if k[0] != uri}
        self.reports.pop(uri, None)

    def _refresh_status(self) -> None:
        """A runner just failed us: tell the editor what is reachable now (in the background)."""
        if self.status is not None:
            asyncio.get_running_loop().create_task(self.status.report())

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- the job -------------------------------------------------------------------------------------
    async def profile(self, uri: str, kernel: str | None, progress: Any) -> list[dict[str, Any]]:
        from ...ascend_runner.client import environment_for_backend
        from ..charts.roofline_request import remember
        from ..engine.profile.ceilings import needs_measuring
        from ..engine.profile.jobs import (
            DEFAULT_PROFILE_TIMEOUT_S,
            analyze_result,
            harness_spec,
            interpret_sizes,
            profile_request,
            reply_error,
            reply_unavailable,
        )
        from ..engine.record.launch_store import keep_profiled_launches

        doc = await self.server.current(uri)
        if doc is None:
            raise CommandError(f"{uri} is not open")
        version, text, path = doc.version, doc.text, doc.path or uri
        names = [k.name for k in doc.analysis.kernels] if doc.analysis else []
        if kernel is not None and kernel not in names:
            raise CommandError(f"no Triton kernel named {kernel!r} in {uri}")
        if not names:
            raise CommandError(f"{uri} has no Triton kernel to profile")
        try:
            choice = self.choose_runner(uri)
        except RuntimeError as exc:
            self.server.show_once(f"tritonlens: {exc}")
            return [self._row(kernel or names[0], "remote", error=str(exc), unavailable=True)]
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        try:
            progress.report(f"asking {choice.name} which backend to use", 5)
            backend = await loop.run_in_executor(self._pool, self.backend, uri, choice)
            if choice.name == "local":  # named as tritonlens/status names local runners
                choice.name = f"local {environment_for_backend(backend)}"
            measure = needs_measuring(choice.name, backend)  # once per device and runner, then cached
            harness = harness_spec(path, text, "auto", [])
            sizes, size_note = interpret_sizes(text, harness["mode"]) if backend == "interpret" else ({}, None)
            payload = profile_request(harness, backend, measure_ceilings=measure, sizes=sizes)
            shape = f" at {', '.join(f'{k}={v}' for k, v in sizes.items())}" if sizes else ""
            progress.report(f"running the {payload.harness.mode} harness{shape} on {choice.name} ({backend})", 15)
            reply = await loop.run_in_executor(
                self._pool,
                lambda: choice.runner.profile(
                    backend, payload, cancel=progress.cancel_event, timeout_s=DEFAULT_PROFILE_TIMEOUT_S
                ),
            )
        except Exception as exc:  # unreachable remote, protocol error: the row says why, no traceback
            message = f"{type(exc).__name__}: {exc}"
            self.server.show_once(f"tritonlens: profiling through {choice.name} failed: {message}")
            self._refresh_status()
            return [self._row(kernel or names[0], choice.name, error=message, unavailable=True)]
        finally:
            if choice.owned:
                choice.runner.close()
        self.last_elapsed_s = time.perf_counter() - started
        if progress.cancelled:
            return [self._row(kernel or names[0], choice.name, error="cancelled", cancelled=True)]
        result = reply.get("result") if isinstance(reply.get("result"), dict) else None
        if not reply.get("ok") and result is None:
            unavailable = reply_unavailable(reply)
            message = reply_error(reply)
            if unavailable:
                self.server.show_once(f"tritonlens: profiling is off: {message}")
            return [self._row(kernel or names[0], choice.name, error=message, unavailable=unavailable)]
        assert result is not None
        progress.report("analyzing the launches", 90)
        await loop.run_in_executor(self._pool, keep_profiled_launches, path, result)  # for levels 3-4 too
        report = await loop.run_in_executor(self._pool, analyze_result, result, path, text, choice.name)
        remember(self.reports, uri, text, report)
        rows = self._merge(uri, version, names, kernel, choice.name, backend, result, report)
        if size_note:
            for row in rows:
                row["note"] = size_note
        return rows

    def _merge(
        self,
        uri: str,
        version: int,
        names: list[str],
        kernel: str | None,
        runner: str,
        backend: str,
        result: dict[str, Any],
        report: ProfileReport,
    ) -> list[dict[str, Any]]:
        device = str((result.get("device") or {}).get("name") or backend)
        by_kernel: dict[str, list[LaunchAnalysis]] = {}
        for la in report.launches:
            by_kernel.setdefault(la.kernel, []).append(la)
        findings: dict[str, list[Finding]] = {}
        for f in report.findings:
            if f.kernel and not f.data.get("file"):  # data["file"]: a launch of a kernel defined in another file
                findings.setdefault(f.kernel, []).append(f)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())
        errors = [str(e) for e in result.get("errors") or []]
        rows: list[dict[str, Any]] = []
        for name in names:
            if name not in by_kernel:
                continue  # not launched by this harness: earlier numbers (if any) stay
            accepted = self.server.add_findings(uri, version, name, Level.PROFILE, findings.get(name, []))
            if accepted:
                self.results[(uri, name)] = ProfiledKernel(
                    name, version, device, backend, runner, report.timing_meaningful, by_kernel[name], stamp
                )
            if kernel is None or name == kernel:
                launches = by_kernel[name]
                timed = [la.time_ms for la in launches if la.time_ms is not None]
                rows.append(
                    {
                        **self._row(name, runner, error="; ".join(errors) or None),
                        "backend": backend,
                        "device": device,
                        "launches": len(launches),
                        "timingMeaningful": report.timing_meaningful,
                        "medianUs": max(timed) * 1e3 if timed else None,
                        "findings": [f.code for f in findings.get(name, [])],
                        "stale": not accepted,
                    }
                )
        if not rows:
            wanted = kernel or ", ".join(names)
            why = "; ".join(errors) or "the harness ran but launched none of them"
            rows.append(self._row(kernel or names[0], runner, error=f"no launch of {wanted} recorded: {why}"))
        return rows

    @staticmethod
    def _row(
        kernel: str,
        runner: str,
        *,
        error: str | None = None,
        unavailable: bool = False,
        cancelled: bool = False,
    ) -> dict[str, Any]:
        # `target` + `runnerUnavailable` let the VS Code client update that runner's reachability.
        return {
            "kernel": kernel,
            "target": runner,
            "runnerUnavailable": unavailable,
            "error": error,
            "cancelled": cancelled,
        }


class ProfileFeature(Feature):
    """`tritonlens.profileKernel`, the last profile's lens and hover on a kernel, and its time in the kernel rows."""

    name = "profile"
    server: TritonLensServer  # set by register

    def __init__(self, compile: CompileFeature, status: RunnerStatusFeature | None = None) -> None:
        super().__init__()
        self.compile, self.status = compile, status

    def register(self, server: TritonLensServer) -> None:
        super().register(server)
        self.service = ProfileService(server, self.compile.service, self.status)
        server.commands.add(PROFILE_COMMAND, "Profile this kernel's harness on the runner", self.profile_command)
        self.add_request(ROOFLINE_REQUEST, self.roofline_request)

    def roofline_request(self, ls: Any, params: Any) -> dict[str, Any]:
        uri = params.get("uri") if isinstance(params, dict) else getattr(params, "uri", None)
        if not isinstance(uri, str):
            return {"svg": None, "why": f"{ROOFLINE_REQUEST} needs {{uri}}"}
        from ..charts.roofline_request import roofline_answer

        return roofline_answer(self.service.reports, uri, self.compile.service.target_for(uri))

    async def profile_command(self, ls: Any, args: list[Any]) -> list[dict[str, Any]]:
        uri = arg(args, 0, str, "document URI")
        kernel = args[1] if len(args) > 1 and args[1] else None
        if kernel is not None and not isinstance(kernel, str):
            raise CommandError("argument 2 (kernel name) must be a string")
        async with work_done(ls, f"tritonlens: profiling {kernel or uri.rsplit('/', 1)[-1]}") as progress:
            return await self.service.profile(uri, kernel, progress)

    def lens_kernels(self, doc: Any) -> set[str] | None:
        return None

    def lens_command(self, doc: Any, kernel: Any, findings: list[Any]) -> types.Command:
        hit = self.service.stored(doc, kernel.name)
        title = lens_title(hit) if hit else "tritonlens: profile"
        return types.Command(title=title, command=PROFILE_COMMAND, arguments=[doc.uri, kernel.name])

    def hover(self, doc: Any, line: int, col: int) -> str | None:
        if doc.analysis is None:
            return None
        for k in doc.analysis.kernels:
            if k.span.line <= line <= k.name_span.line:  # decorators and the `def` line
                hit = self.service.stored(doc, k.name)
                return hover_markdown(hit) if hit else None
        return None

    def kernel_fields(self, doc: Any, kernel: Any) -> dict[str, Any]:
        hit = self.service.stored(doc, kernel.name)
        if hit is None or not hit.timing_meaningful:
            return {}
        timed = [la.time_ms for la in hit.launches if la.time_ms is not None]
        return {"lastTimeUs": max(timed) * 1e3, "lastMeasuredAt": hit.measured_at} if timed else {}

    def on_document_closed(self, uri: str) -> None:
        self.service.forget(uri)

    def shutdown(self) -> None:
        self.service.close()
