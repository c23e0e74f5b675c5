"""The bench's numbers: the whole speedup distribution over tasks, and the Markdown a reader needs.

Pure functions over the per-task records (measure.run_task); nothing here measures anything.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from typing import Any

LEVELS = {1: "1 triage", 2: "2 profiling", 3: "3 IR", 4: "4 compiler"}


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    timed = [r for r in records if r.get("status") == "done" and r.get("timing_meaningful")]
    speedups = [float(r["speedup"]) for r in timed]
    vs_eager = [r["vs_eager"] for r in timed if r.get("vs_eager")]
    vs_compile = [r["vs_compile"] for r in timed if r.get("vs_compile")]
    after = [r["roofline_after"] for r in timed if r.get("roofline_after") is not None]
    drivers = Counter(LEVELS.get(max(r["levels"]), str(max(r["levels"]))) for r in timed if r.get("levels"))
    producers = Counter(p for r in timed for p in r.get("producers") or [])
    unseen = [r["unseen_correct"] for r in timed if r.get("levels") and r.get("unseen_correct") is not None]
    return {
        "tasks": len(records),
        "timed": len(timed),
        "errors": sum(1 for r in records if r.get("status") == "error"),
        "geomean_speedup": geomean(speedups),
        "median_speedup": statistics.median(speedups) if speedups else None,
        "above_2x": sum(s > 2 for s in speedups) / len(speedups) if speedups else None,
        "above_5x": sum(s > 5 for s in speedups) / len(speedups) if speedups else None,
        "slower_than_initial": sum(s < 1 for s in speedups),
        "geomean_vs_eager": geomean(vs_eager),
        "geomean_vs_compile": geomean(vs_compile),
        "at_least_compile": sum(v >= 1 for v in vs_compile) / len(vs_compile) if vs_compile else None,
        "compile_measured": len(vs_compile),
        "median_roofline_after": statistics.median(after) if after else None,
        "wins_by_level": dict(drivers),
        "wins_by_producer": dict(producers.most_common()),
        "accepted_correct_on_unseen": (sum(unseen) / len(unseen)) if unseen else None,
        **verification_seconds(records),
    }


_PHASES = ("compile_check", "verify_job", "reference", "candidate", "candidate_timing", "compare")


def verification_seconds(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Where a verification's seconds went (median per phase over every verdict with a record of it; the verdicts'
    `details.seconds`), and the seconds tasks waited for the shared device (outside their budgets)."""
    steps = [s for r in records for key in ("applied", "rejected", "offered")
             for s in ((r.get("optimize") or {}).get(key) or [])]
    seconds = [(s.get("details") or {}).get("seconds") for s in steps]
    seconds = [x for x in seconds if isinstance(x, dict)]
    medians = {p: statistics.median(v) for p in _PHASES
               if (v := [float(x[p]) for x in seconds if isinstance(x.get(p), (int, float))])}
    waits = [float((r.get("optimize") or {}).get("device_wait_s") or 0.0) for r in records]
    return {"verifications_timed": len(seconds), "verification_seconds": medians,
            "device_wait_s": round(sum(waits), 1)}


def _x(value: Any) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def _pct(value: Any) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def _floor(value: Any) -> str:
    """A roofline fraction; above 100% the footprint guess overstates the bytes the kernel moves."""
    return _pct(value) + ("*" if value is not None and value > 1 else "")


def _ms(value: Any) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def to_markdown(summary: dict[str, Any], records: list[dict[str, Any]], context: dict[str, Any]) -> str:
    ascend = any(r.get("ascend") for r in records)  # an Ascend target: each task's BiSheng compile and UB use
    lines = ["# tritonlens bench", ""]
    lines += [f"- {k}: {v}" for k, v in context.items()]
    lines += [
        "",
        "## Distribution",
        "",
        f"- tasks: {summary['tasks']} ({summary['timed']} timed, {summary['errors']} errors)",
        f"- speedup over the first draft: geometric mean {_x(summary['geomean_speedup'])}, "
        f"median {_x(summary['median_speedup'])}, above 2x {_pct(summary['above_2x'])}, "
        f"above 5x {_pct(summary['above_5x'])}, slower than the first draft: {summary['slower_than_initial']}",
        f"- final vs PyTorch eager: geometric mean {_x(summary['geomean_vs_eager'])}",
        f"- final vs torch.compile: geometric mean {_x(summary['geomean_vs_compile'])}; at or faster than "
        f"torch.compile on {_pct(summary['at_least_compile'])} of {summary['compile_measured']} tasks measured",
        f"- median fraction of the roofline floor reached after: {_pct(summary['median_roofline_after'])} "
        "(the floor's bytes are a guess: the footprint of the launch's tensor arguments, each read or written "
        "once; a kernel that touches less, e.g. a gather, can pass 100%, marked *)",
        f"- accepted kernels correct on shapes never used while optimizing: "
        f"{_pct(summary['accepted_correct_on_unseen'])}",
        f"- where a verification's seconds went (median of {summary.get('verifications_timed', 0)} with a "
        f"record): " + (", ".join(f"{k} {v:.1f} s" for k, v in (summary.get("verification_seconds") or {}).items())
                         or "not recorded") + f"; waits for the shared device, outside every task's budget: "
        f"{summary.get('device_wait_s', 0):.0f} s in all",
        f"- which level's evidence drove each win: {summary['wins_by_level'] or 'none'}",
        f"- rewrites applied: {summary['wins_by_producer'] or 'none'}",
        "",
        "## Per task",
        "",
        "| task | first draft ms | final ms | speedup | vs eager | vs compile | roofline before -> after | "
        "rewrites (level) |" + (" Ascend compile (BiSheng on the CPU, UB from PlanMemory) |" if ascend else ""),
        "| --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if ascend else ""),
    ]
    for r in sorted(records, key=lambda r: r["task"]):
        rewrites = ", ".join(f"{p} ({lv})" for p, lv in zip(r.get("producers") or [], r.get("levels") or [],
                                                            strict=False)) or "-"
        lines.append(
            f"| {r['task']} | {_ms(r.get('initial_ms'))} | {_ms(r.get('final_ms'))} | {_x(r.get('speedup'))} | "
            f"{_x(r.get('vs_eager'))} | {_x(r.get('vs_compile'))} | {_floor(r.get('roofline_before'))} -> "
            f"{_floor(r.get('roofline_after'))} | {rewrites} |" + (f" {r.get('ascend') or '-'} |" if ascend else "")
        )
    misses = [r for r in records if r.get("miss")]
    if misses:
        lines += ["", "## Misses (why)", ""]
        for r in sorted(misses, key=lambda r: r["task"]):
            lines.append(f"- **{r['task']}**: {r['miss']}")
            lines += [f"  - {m}" for m in (r.get("misses") or [])[:8]]
    compile_errors = [r for r in records if (r.get("baseline") or {}).get("compiled_error")]
    if compile_errors:
        lines += ["", "## torch.compile could not run", ""]
        lines += [f"- {r['task']}: {r['baseline']['compiled_error'][:200]}" for r in compile_errors]
    return "\n".join(lines) + "\n"
