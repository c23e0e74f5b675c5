"""Level 2: diagnose measured launches against the device's roofline. Pure: a runner's result dict in, findings out.

Per distinct launch: median time; bytes moved (the footprint of its tensor arguments: each viewed once, read if
unchanged by the launch, written if changed; a lower bound when a kernel re-reads); FLOPs when derivable (a
tl.dot whose operand shapes are among the arguments: 2*M*N*K); achieved GB/s and TFLOP/s against the device's
ceilings (measured when the runner measured them); roofline class; waves and tail of the grid over the SMs /
AI cores; occupancy from registers and shared memory. Nsight Compute's per-line view, when present, adds
line-level findings. A launch "near the roofline" gets TL201, which tells callers to stop escalating.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..core import rules
from ..core.devices import DeviceSpec
from ..core.findings import Finding
from ..kernels.persistent import persistent_kernels
from ..source.lines import source_lines as split_source_lines
from .findings import LAUNCH_FAMILY, NCU_FAMILY
from .flops import ncu_fp32_flops
from .launch import LaunchAnalysis, analyze_launch
from .ncu import NcuSourceView


@dataclass
class ProfileReport:
    device: DeviceSpec | None
    launches: list[LaunchAnalysis]
    findings: list[Finding]
    timing_meaningful: bool
    notes: list[str] = field(default_factory=list)

    @property
    def stop_escalation(self) -> bool:
        """Every timed launch already runs near its roofline: a rewrite cannot pay off."""
        timed = [la for la in self.launches if la.time_ms]
        return bool(timed) and all(la.near_roofline for la in timed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device.to_dict() if self.device else None,
            "timing_meaningful": self.timing_meaningful,
            "stop_escalation": self.stop_escalation,
            "launches": [{**asdict(la), "bytes_moved": la.bytes_moved} for la in self.launches],
            "findings": [f.to_dict() for f in self.findings],
            "notes": list(self.notes),
        }


def _def_line(line: int, source_lines: list[str] | None) -> int:
    """Runners before the def-line fix recorded the decorator's line: move to the `def` it decorates."""
    if not source_lines:
        return line
    n = line
    while 0 < n <= len(source_lines) and source_lines[n - 1].lstrip().startswith("@"):
        n += 1
    if 0 < n <= len(source_lines) and source_lines[n - 1].lstrip().startswith(("def ", "async def ")):
        return n
    return line


def _norm(p: str) -> str:
    return posixpath.normpath(p.replace("\\", "/"))


def _launch_in_profiled_file(la: LaunchAnalysis, path: str | None, source: str | None) -> bool:
    """A remote runner reports its own copy's path, so besides an equal path, the same file name and a `def` of
    the kernel in the profiled text count as the profiled file."""
    if not la.file or not path or _norm(la.file) == _norm(path):
        return True
    same_name = posixpath.basename(_norm(la.file)) == posixpath.basename(_norm(path))
    defined = re.compile(rf"^[ \t]*def[ \t]+{re.escape(la.kernel)}[ \t]*\(", re.M)
    return same_name and source is not None and defined.search(source) is not None


def analyze_run(
    result: dict[str, Any],
    device: DeviceSpec | None,
    *,
    source: str | None = None,
    path: str | None = None,
    ncu: NcuSourceView | None = None,
    other_sources: Mapping[str, str] | None = None,
) -> ProfileReport:
    """Analyze a runner's run/profile result (RunResult as a dict). `device`: from analysis.devices.from_runner.

    `source`/`path`: the user's text and file name, for spans and to select ncu lines of that file.
    A harness often launches kernels defined elsewhere (a script calling a library's ops): such a launch's lines
    are its own file's, so its findings carry `data["file"]` and use that file's text from `other_sources`
    (file -> text, as the caller could read it) for spans, or none."""
    meaningful = bool(result.get("timing_meaningful", True))
    records = [dict(rec) for rec in result.get("launches") or []]
    ncu_raw = result.get("ncu") or {}
    if isinstance(ncu_raw.get("details"), str):  # Nsight Compute's FP32 instruction counts for its launch
        counted = ncu_fp32_flops(ncu_raw["details"])
        for rec in records:
            if counted and rec.get("index", 0) == ncu_raw.get("launch", 0):
                rec["ncu_fp32_flops"] = counted
    launches = [analyze_launch(rec, device, meaningful) for rec in records]
    texts: dict[str, str | None] = {}  # per launch file: its text, when known
    own = {la.index: _launch_in_profiled_file(la, path, source) for la in launches}

    def text_of(la: LaunchAnalysis) -> str | None:
        if own[la.index]:
            return source
        if la.file not in texts:
            texts[la.file] = (other_sources or {}).get(la.file)
        return texts[la.file]

    lines_of: dict[str, list[str] | None] = {}
    persistent: set[tuple[str, str]] = set()
    for la in launches:
        text = text_of(la)
        key = "" if own[la.index] else la.file
        if key not in lines_of:
            lines_of[key] = split_source_lines(text) if text is not None else None
            persistent |= {(key, name) for name in (persistent_kernels(text) if text is not None else ())}
        la.line = _def_line(la.line, lines_of[key])
        if (key, la.kernel) in persistent:
            la.persistent = True
            la.notes.append(
                "persistent kernel (loops over tiles with a program-count stride): few programs per SM and a "
                "single wave are by design, so no occupancy or wave-tail verdict"
            )
    findings: list[Finding] = []
    notes: list[str] = []
    if not meaningful:
        notes.append(f"backend {result.get('backend')!r}: timings are meaningless, no roofline verdicts")
    elif device is None:
        notes.append(
            f"unknown device {result.get('device', {}).get('name')!r}: no ceilings to compare against"
        )
    def lines(la: LaunchAnalysis) -> list[str] | None:
        return lines_of["" if own[la.index] else la.file]

    def placed(found: list[Finding], la: LaunchAnalysis) -> list[Finding]:
        if own[la.index]:
            return found
        return [replace(f, data={**f.data, "file": la.file}) for f in found]

    if device is not None and meaningful:
        for la in launches:
            for check in rules.checks(LAUNCH_FAMILY, package=__package__):
                findings.extend(placed(check.run(la, device, lines(la)), la))
    if ncu is not None and device is not None:
        target = (result.get("ncu") or {}).get("launch")
        for la in launches:
            if target is not None and la.index != target:
                continue
            if la.near_roofline:  # stalls on memory are expected there: line hints would only be noise
                notes.append(
                    f"{la.kernel} is near its roofline: Nsight Compute lines not turned into findings"
                )
            else:
                where = path if own[la.index] else la.file
                for check in rules.checks(NCU_FAMILY, package=__package__):
                    findings.extend(placed(check.run(ncu, la, where, lines(la)), la))
            break
    return ProfileReport(
        device=device, launches=launches, findings=findings, timing_meaningful=meaningful, notes=notes
    )
