"""Everything the proposers are told about the current text of a file: level 1 (triage), levels 3-4 (compile for
the target through server.engine.diagnose) and level 2 (a profile on the runner, only where timing means something).
The same calls the editor and `tritonlens check`/`profile` make: one code path."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ....analysis.core.findings import Finding
from ....ascend_runner.protocol import HarnessSpec, ProfileRequest

if TYPE_CHECKING:  # the runner client is imported where a runner is made, not by the engine
    from ....ascend_runner.client import Runner


@dataclass
class Evidence:
    findings: list[Finding] = field(default_factory=list)
    compile: dict[str, Any] = field(default_factory=dict)  # kernel -> registers/spills/shared (gate.compile_facts)
    profile: dict[str, Any] | None = None  # the runner's RunResult dict
    roofline: list[dict[str, Any]] = field(default_factory=list)  # per launch: kernel, time, bound, fraction
    notes: list[str] = field(default_factory=list)
    device_wait_s: float = 0.0  # the profile's wait for a device other jobs held (outside the time budget)

    def codes(self) -> set[str]:
        return {f.code for f in self.findings}


def collect(
    source: str,
    path: str,
    target: str,
    runner: Runner,
    *,
    backend: str,
    cancel: threading.Event | None = None,
    profile: bool = True,
    untrusted: bool = False,
) -> Evidence:
    """`untrusted`: the text holds an LLM's code: it is compiled in a confined worker, and not profiled (a profile
    runs it unconfined)."""
    from ....analysis.core.targets import platform_of
    from ....analysis.triage import triage
    from ..diagnose import analyze_document, find_pyproject_overrides
    from .gate import compile_facts

    ev = Evidence()
    platform = platform_of(target)  # an sm_90 run's evidence holds no Ascend-only rule (and the reverse)
    ev.findings.extend(f for f in triage(source, path).findings if not f.platforms or platform in f.platforms)
    if untrusted:
        from ...trust.confined_runner import ConfinedCompiles

        runner = ConfinedCompiles(runner)
        if profile and backend != "interpret":
            ev.notes.append("no level-2 profile: the text holds an LLM's code, which runs only confined")
        profile = False
    for analysis in analyze_document(
        source, path, target, runner, overrides=find_pyproject_overrides(path), cancel=cancel
    ):
        ev.findings.extend(analysis.findings)
        ev.compile[analysis.kernel] = compile_facts(analysis)
        if analysis.error:
            ev.notes.append(f"{analysis.kernel}: levels 3-4 incomplete: {analysis.error}")
    if profile and backend != "interpret" and not (cancel is not None and cancel.is_set()):
        _profile(source, path, runner, backend, ev)
    elif backend == "interpret":
        ev.notes.append("no level-2 profile: the interpret backend's timings say nothing about hardware")
    return ev


def _profile(source: str, path: str, runner: Runner, backend: str, ev: Evidence) -> None:
    from ....analysis.core import devices
    from ....analysis.profile import analyze as profiling

    request = ProfileRequest(harness=HarnessSpec(mode="kernelbench", path=path, source=source), backend=backend)
    try:
        reply = runner.profile(backend, request, timeout_s=600)
    except Exception as exc:
        ev.notes.append(f"profile failed: {type(exc).__name__}: {exc}")
        return
    if not reply.get("ok"):
        error = reply.get("error") or {}
        ev.notes.append(f"profile failed: {error.get('message') if isinstance(error, dict) else error}")
        return
    result = dict(reply.get("result") or {})
    ev.profile = result
    wait = result.get("device_wait_s")
    ev.device_wait_s = float(wait) if isinstance(wait, (int, float)) and not isinstance(wait, bool) else 0.0
    report = profiling.analyze_run(result, devices.from_runner(result.get("device") or {}), source=source, path=path)
    ev.findings.extend(report.findings)
    ev.notes.extend(report.notes)
    ev.roofline.extend(roofline_rows(report))


def roofline_rows(report: Any) -> list[dict[str, Any]]:
    """Per launch of a profiling report: kernel, time, bound and the fraction of the binding roof reached."""
    rows = []
    for la in report.launches:
        fraction = max((x for x in (la.bandwidth_fraction, la.compute_fraction) if x is not None), default=None)
        rows.append({"kernel": la.kernel, "time_ms": la.time_ms, "bound": la.bound, "roofline_fraction": fraction})
    return rows


def roofline_of(profile: dict[str, Any] | None, source: str, path: str) -> list[dict[str, Any]]:
    """roofline_rows for a RunResult dict already collected (what a proposer sees in RecipeContext.profile)."""
    if not profile:
        return []
    from ....analysis.core import devices
    from ....analysis.profile import analyze as profiling

    try:
        report = profiling.analyze_run(profile, devices.from_runner(profile.get("device") or {}), source=source,
                                       path=path)
    except Exception:  # a malformed profile only loses the roofline lines of the prompt
        return []
    return roofline_rows(report)
