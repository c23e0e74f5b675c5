"""What the Ascend compiler says about one candidate: compiled through BiSheng or not, and its UB use.

For an Ascend target the gate's compile check (gate.compile_check) already runs each kernel through triton-ascend
(ttir -> ttadapter) and `bishengir-compile` (HFusion + HIVM) in the ascend environment; this module reads those
results into one record per candidate, the same record the optimize report, `bench` and the editor show:

- per kernel: compiled or not, with the compiler's reason attributed (an API triton-ascend lacks is named as such;
  the pipeline's own stop before `hivmc`, part of CANN and absent here, is the expected end, not a failure);
- the UB bytes PlanMemory planned (or the overflow's requirement) against the target's UB capacity;
- the TL4xx findings the candidate gains or loses against the original text.

A candidate that overflows the UB, or stops for any reason but the hivmc step, is rejected at stage "compile".
Nothing here is timed: without an Ascend device there is no timing, and none is claimed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ....analysis.compiler.ascend.devices import device_for
from ....analysis.compiler.ascend.ub_feasibility import ub_feasibility
from ....analysis.compiler.errors import missing_api
from ....analysis.core.targets import platform_of

NO_DEVICE = "no Ascend device here: no timing"
# The worker stages that say the compile did not happen (the runner), not that the kernel failed.
_RUNNER_STAGES = ("worker", "unavailable", "closed", "timeout", "cancelled")
# hivm stage statuses that mean the whole BiSheng pipeline ran (compile_hivm.run_hivm).
_PIPELINE_RAN = {
    "hivmc-missing": "BiSheng ran every HFusion and HIVM pass; stopped before hivmc (part of CANN, absent here: "
    "the expected end on a CPU, not a failure)",
    "binary": "BiSheng built a device binary (CANN's hivmc present)",
}


@dataclass(frozen=True)
class KernelCompile:
    """One kernel of a candidate, as the Ascend compiler left it."""

    kernel: str
    compiled: bool | None  # None: the compiler did not decide (no ascend environment, no bishengir, a timeout)
    stage: str  # where it ended: "hivmc" (expected), or the stage that failed / did not run
    reason: str
    ub_used_bytes: int | None = None  # PlanMemory's plan, or the overflow's requirement
    ub_capacity_bytes: int | None = None
    ub_feasible: bool | None = None
    findings: tuple[str, ...] = ()  # TL4xx codes on this kernel


@dataclass(frozen=True)
class AscendCompile:
    """Every kernel of one candidate text, and the TL4xx findings it gains or loses against the original."""

    target: str
    kernels: tuple[KernelCompile, ...]
    gained: tuple[str, ...] = ()  # "TL405 (softmax_kernel)"
    lost: tuple[str, ...] = ()
    timing: str = NO_DEVICE

    def rejection(self) -> str | None:
        """Why the gate rejects the candidate at "compile" (a UB overflow, or a stop other than hivmc), else None."""
        for k in self.kernels:
            if k.ub_feasible is False:
                return f"{k.kernel} does not fit the {self.target} UB: {k.reason}"
            if k.compiled is False:
                return f"{k.kernel} does not compile for {self.target} ({k.stage}): {k.reason}"
        return None

    def with_original(self, original: AscendCompile | None) -> AscendCompile:
        if original is None:
            return self
        mine, theirs = set(_labels(self.kernels)), set(_labels(original.kernels))
        return AscendCompile(self.target, self.kernels, tuple(sorted(mine - theirs)), tuple(sorted(theirs - mine)),
                             self.timing)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["kernels"] = [asdict(k) for k in self.kernels]
        return out


def _labels(kernels: Iterable[KernelCompile]) -> list[str]:
    return [f"{code} ({k.kernel})" for k in kernels for code in k.findings]


def applies(target: str) -> bool:
    return platform_of(target) == "ascend"


def kernel_compile(analysis: Any, target: str) -> KernelCompile:
    """The record of one diagnose.KernelAnalysis compiled for an Ascend target (see the module docstring)."""
    codes = tuple(sorted({f.code for f in analysis.findings if f.code.startswith("TL4")}))
    device = device_for(target)
    capacity = device.ub_bytes if device is not None else None
    name = analysis.kernel
    if analysis.runner_unavailable or (analysis.error and not analysis.variants):
        return KernelCompile(name, None, "runner", f"not compiled: {analysis.error or 'no runner'}",
                             ub_capacity_bytes=capacity, findings=codes)
    primary = analysis.primary
    if primary is None:
        return _failed(analysis, codes, capacity)
    ub = ub_feasibility(primary)
    used = ub.used_bits // 8 if ub.used_bits is not None else None
    capacity = ub.available_bits // 8 if ub.available_bits else capacity
    hivm = primary.metadata.get("hivm") if isinstance(primary.metadata.get("hivm"), dict) else {}
    status = str(hivm.get("status") or "")
    if ub.feasible is False:
        return KernelCompile(name, False, "hivm", ub.reason, used, capacity, False, codes)
    if status in _PIPELINE_RAN:
        where = "hivmc" if status == "hivmc-missing" else "binary"
        return KernelCompile(name, True, where, _PIPELINE_RAN[status], used, capacity, ub.feasible, codes)
    if status == "failed":
        error = next((e for e in primary.errors if e.stage == "hivm"), None)
        message = error.message.strip() if error is not None else "bishengir-compile failed"
        return KernelCompile(name, False, "hivm", message[:400], used, capacity, None, codes)
    why = hivm.get("message") or (f"hivm stage {status}" if status else "no hivm stage in the result")
    return KernelCompile(name, None, "hivm", f"triton-ascend compiled it to ttadapter; BiSheng did not decide: {why}",
                         None, capacity, None, codes)


def _failed(analysis: Any, codes: tuple[str, ...], capacity: int | None) -> KernelCompile:
    """No variant compiled: the first real error, attributed (an API triton-ascend lacks is not the tiles' fault)."""
    errors = [e for v in analysis.variants for e in v.errors if e.stage not in _RUNNER_STAGES]
    if not errors:
        stopped = next((e for v in analysis.variants for e in v.errors), None)
        why = stopped.message.strip()[:300] if stopped is not None else (analysis.error or "nothing compiled")
        return KernelCompile(analysis.kernel, None, "runner", f"not compiled: {why}", ub_capacity_bytes=capacity,
                             findings=codes)
    first = errors[0]
    message = first.message.strip()
    api = missing_api(message) or next(
        (str(f.data.get("missing_api")) for f in analysis.findings if f.data.get("cause") == "missing_api"), None
    )
    where = f" (line {first.line})" if first.line else ""
    if api:
        reason = f"uses `{api}`, which the installed triton-ascend lacks{where}: {message.splitlines()[-1][:200]}"
    else:
        reason = f"{message[:400]}{where}"
    return KernelCompile(analysis.kernel, False, first.stage, reason, ub_capacity_bytes=capacity, findings=codes)


def ascend_compile(analyses: Iterable[Any], target: str, original: AscendCompile | None = None) -> AscendCompile:
    """The record of a candidate's compile (diagnose.KernelAnalysis per kernel), against the original's record."""
    return AscendCompile(target, tuple(kernel_compile(a, target) for a in analyses)).with_original(original)


# -- one way to say it: the optimize report, bench and the editor's hover all call these --------------------------
def _kib(n: Any) -> str:
    return "?" if n is None else f"{int(n) / 1024:.1f} KiB"


def ub_text(k: Mapping[str, Any]) -> str:
    if k.get("ub_used_bytes") is None:
        return f"UB not planned (capacity {_kib(k.get('ub_capacity_bytes'))})"
    verb = "needs" if k.get("ub_feasible") is False else "PlanMemory planned"
    return f"UB: {verb} {int(k['ub_used_bytes'])} B ({_kib(k['ub_used_bytes'])}) of {_kib(k.get('ub_capacity_bytes'))}"


def describe(record: Mapping[str, Any] | None) -> list[str]:
    """Lines (Markdown) for a record's dict form: one per kernel, then the TL4xx change and the timing note."""
    if not record:
        return []
    target = record.get("target", "Ascend")
    lines = []
    for k in record.get("kernels") or []:
        state = {True: "compiled", False: "does NOT compile", None: "not decided"}[k.get("compiled")]
        lines.append(f"{target} `{k.get('kernel')}`: {state} ({k.get('stage')}): {k.get('reason')}; {ub_text(k)}")
    change = [f"gains {', '.join(record['gained'])}"] if record.get("gained") else []
    change += [f"loses {', '.join(record['lost'])}"] if record.get("lost") else []
    if change:
        lines.append("TL4xx findings vs the original: " + "; ".join(change))
    lines.append(str(record.get("timing") or NO_DEVICE))
    return lines


def short(record: Mapping[str, Any] | None) -> str:
    """"UB 3.0 KiB/192.0 KiB" per kernel (or why not compiled): for a table cell or an action title."""
    if not record:
        return ""
    parts = []
    for k in record.get("kernels") or []:
        if k.get("compiled") is False and k.get("ub_feasible") is not False:
            parts.append(f"{k.get('kernel')}: no compile")
            continue
        used = k.get("ub_used_bytes")
        mark = " overflow" if k.get("ub_feasible") is False else ""
        parts.append(f"UB {_kib(used)}/{_kib(k.get('ub_capacity_bytes'))}{mark}" if used is not None
                     else f"{k.get('kernel')}: UB not planned")
    return "; ".join(parts)


@dataclass
class Tally:
    """Per bench task: the original's UB and how the candidates fared on the Ascend compile."""

    original: str = ""
    compiled: int = 0
    rejected: int = 0
    undecided: int = 0
    compiled_ub: tuple[str, ...] = ()  # the compiled candidates' UB use, in the order they were judged

    def cell(self) -> str:
        if not (self.original or self.compiled or self.rejected or self.undecided):
            return "-"
        text = f"draft {self.original or 'n/a'}; {self.compiled} compiled, {self.rejected} rejected"
        text += f", {self.undecided} undecided" if self.undecided else ""
        shown = ", ".join(self.compiled_ub[:4]) + (", ..." if len(self.compiled_ub) > 4 else "")
        return text + (f" (compiled: {shown})" if shown else "")


def tally(original: Mapping[str, Any] | None, steps: Iterable[Mapping[str, Any]]) -> Tally:
    """Count the candidates (Step.to_dict forms) by their Ascend verdict."""
    out = Tally(original=short(original))
    for s in steps:
        record = (s.get("details") or {}).get("ascend")
        if not record:
            continue
        states = [k.get("compiled") for k in record.get("kernels") or []]
        infeasible = any(k.get("ub_feasible") is False for k in record.get("kernels") or [])
        if infeasible or False in states:
            out.rejected += 1
        elif None in states or not states:
            out.undecided += 1
        else:
            out.compiled += 1
            out.compiled_ub += (short(record),)
    return out
