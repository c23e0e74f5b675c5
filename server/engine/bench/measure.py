"""One bench task: baselines (the first draft, PyTorch eager, torch.compile), the optimize loop (the same code
as `tritonlens optimize`), and the record the report is built from.

Times come from the runner's `verify` job. The first draft, eager and torch.compile are timed in one job at
the benchmark shape; the final kernel's speedup is the optimize loop's own interleaved measurement of the
final text against the first draft, so `final_ms` = that job's median and vs-eager/vs-compile divide times
from two jobs on the same device.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ....analysis.core.targets import DEFAULT_CUDA_TARGET
from ..optimize import report as reporting
from ..optimize.ascend_compile import NO_DEVICE, tally
from ..optimize.gate import Gate, GateConfig
from ..optimize.loop import Budget, OptimizeOptions, optimize_source
from ..optimize.proposers import Proposer
from ..optimize.shapes import plan_shapes

if TYPE_CHECKING:  # the runner client is imported where a runner is made, not by the engine
    from ....ascend_runner.client import Runner

Progress = Callable[[str], None]


@dataclass
class BenchOptions:
    backend: str = "cuda"
    target: str = DEFAULT_CUDA_TARGET
    budget: Budget = field(default_factory=lambda: Budget(candidates=12, rounds=2, seconds=120.0))
    repeats: int = 5
    rep_ms: float = 100.0
    compiled_reference: bool = True  # also time torch.compile(Model)

    def gate(self) -> GateConfig:
        return GateConfig(backend=self.backend, target=self.target, repeats=self.repeats, rep_ms=self.rep_ms)


def _median(values: Sequence[float]) -> float | None:
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


def measure_baselines(
    runner: Runner, source: str, path: str, options: BenchOptions, cancel: threading.Event | None
) -> dict[str, Any]:
    """The first draft checked at every planned shape (held-out ones included) and timed against itself,
    with PyTorch eager (and torch.compile) timed at the benchmark shape."""
    gate = Gate(runner, options.gate(), plan_shapes(source), path)
    request = gate.plan(source, source).request
    assert request is not None  # a KernelBench plan is never refused (only a replay can be)
    if request.interleave is not None:
        request = replace(request, interleave={**request.interleave, "repeats": 2,
                                               "compiled_reference": options.compiled_reference})
    reply = gate.send(request, cancel)
    out: dict[str, Any] = {"ok": bool(reply.get("ok")), "correct": False}
    if not reply.get("ok"):
        error = reply.get("error") or {}
        out["reason"] = error.get("message") if isinstance(error, dict) else str(error)
        return out
    res = dict(reply.get("result") or {})
    checks = list(res.get("checks") or [])
    failed = [c for c in checks if not c.get("passed")]
    out["correct"] = bool(res.get("passed")) and bool(checks) and not failed
    if failed:
        out["reason"] = f"shape {failed[0].get('shape')} seed {failed[0].get('seed')}: {failed[0].get('reason')}"
    elif res.get("errors"):
        out["reason"] = "; ".join(res["errors"])
    timing = dict(res.get("timing") or {})
    out.update(
        initial_ms=_median(timing.get("baseline_ms") or []),
        eager_ms=timing.get("reference_ms"),
        compiled_ms=timing.get("compiled_reference_ms"),
        compiled_error=timing.get("compiled_reference_error"),
        compile_s=timing.get("compiled_reference_compile_s"),
        device=(timing.get("device") or {}).get("name"),
        timing_meaningful=bool(res.get("timing_meaningful", True)) and gate.config.timing_meaningful,
        unseen_correct=_unseen(checks),
    )
    return out


def _fraction(rooflines: list[dict[str, Any]]) -> float | None:
    """The slowest kernel's fraction of its roofline floor (what bounds the task)."""
    timed = [r for r in rooflines if r.get("roofline_fraction") is not None and r.get("time_ms")]
    if not timed:
        return None
    return max(timed, key=lambda r: r["time_ms"])["roofline_fraction"]


def _unseen(checks: list[dict[str, Any]]) -> bool | None:
    held = [c for c in checks if c.get("held_out")]
    return all(c.get("passed") for c in held) if held else None


def _misses(data: dict[str, Any]) -> list[str]:
    """Why nothing (more) was applied: every rejected candidate and declined recipe, one line each."""
    lines = [f"{s['producer']}: rejected at {s['stage'] or 'gate'}: {s['reason']}" for s in data["rejected"]]
    lines += [f"{d['proposer']}: did not apply: {d['reason']}" for d in data["declined"]]
    return lines


def run_task(
    path: Path,
    runner: Runner,
    options: BenchOptions,
    proposers: Callable[[], list[Proposer]],
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, Any]:
    say = progress or (lambda message: None)
    source = path.read_text(encoding="utf-8")
    record: dict[str, Any] = {"task": str(path), "category": path.parent.name, "backend": options.backend}
    say("baselines: first draft, PyTorch eager, torch.compile")
    try:
        base = measure_baselines(runner, source, str(path), options, cancel)
    except ValueError as exc:  # no shapes to check at
        record.update(status="error", miss=f"cannot plan shapes: {exc}")
        return record
    record["baseline"] = base
    if cancel is not None and cancel.is_set():  # stopped while measuring: not the draft's failure, run it again
        record.update(status="cancelled", miss="cancelled while measuring the baselines")
        return record
    if not base["correct"]:
        record.update(status="error", miss=f"the first draft does not pass verification: {base.get('reason')}")
        return record
    say("optimizing")
    result = optimize_source(
        source, str(path), runner,
        OptimizeOptions(target=options.target, backend=options.backend, budget=options.budget, gate=options.gate()),
        proposers(), progress=lambda message, _f: say(message), cancel=cancel,
    )
    data = reporting.to_dict(result)
    record["optimize"] = data
    overall = result.overall
    applied = bool(overall is not None and overall.accepted and data["applied"])
    timing = dict(overall.details.get("timing") or {}) if overall is not None else {}
    initial = base.get("initial_ms")
    final = _median(timing.get("candidate_ms") or []) if applied else initial
    speedup = overall.speedup if applied and overall.speedup else 1.0
    record.update(
        status="cancelled" if result.cancelled else "error" if result.error else "done",
        error=result.error,
        timing_meaningful=base.get("timing_meaningful") and result.timing_meaningful,
        initial_ms=initial,
        final_ms=final,
        eager_ms=base.get("eager_ms"),
        compiled_ms=base.get("compiled_ms"),
        speedup=speedup,
        spread=overall.spread if applied else None,
        vs_eager=(base["eager_ms"] / final) if final and base.get("eager_ms") else None,
        vs_compile=(base["compiled_ms"] / final) if final and base.get("compiled_ms") else None,
        roofline_before=_fraction(data["roofline_before"]),
        roofline_after=_fraction(data["roofline_after"]) if applied else _fraction(data["roofline_before"]),
        levels=[s["level"] for s in data["applied"]] if applied else [],
        producers=[s["producer"] for s in data["applied"]] if applied else [],
        unseen_correct=_unseen(list(overall.details.get("checks") or [])) if applied else base.get("unseen_correct"),
        misses=[] if applied else _misses(data),
    )
    steps = [*data["applied"], *data["offered"], *data["rejected"]]
    if data.get("ascend_original") or any((s.get("details") or {}).get("ascend") for s in steps):
        record["ascend"] = tally(data.get("ascend_original"), steps).cell()  # the same record as the report's
    if not record["timing_meaningful"]:
        why = NO_DEVICE if record.get("ascend") and options.backend != "npu" else (
            f"{options.backend} timings say nothing about hardware")
        record["miss"] = (
            f"not timed: {why} "
            f"({len(data['offered'])} candidate(s) verified correct, none claimed faster)"
        )
    elif not applied:
        record["miss"] = "no verified faster rewrite" + (f" ({result.error})" if result.error else "")
    return record
