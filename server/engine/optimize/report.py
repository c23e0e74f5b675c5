"""The optimize report: JSON (everything) and Markdown (what a reader needs), per file.

Per file: initial and final time with the speedup and its spread (timed backends), roofline fraction before and
after when a profile knew the device, which level's evidence drove each applied rewrite, every rejected candidate
with its stage and reason, and the unified diff. For an Ascend target: the original's and every candidate's
BiSheng compile with PlanMemory's UB use (ascend_compile.describe), and no timing.
"""

from __future__ import annotations

import difflib
import math
from typing import Any

from ....analysis.trust.model_text import markdown_literal
from .ascend_compile import describe
from .loop import OptimizeResult, Step

LEVEL_NAMES = {1: "level 1 (triage)", 2: "level 2 (profiling)", 3: "level 3 (IR attribution)", 4: "level 4 (compiler)"}


def unified_diff(before: str, after: str, path: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
        )
    )


def _roofline(ev: Any) -> list[dict[str, Any]]:
    return list(ev.roofline) if ev is not None else []


def _profiled_ms(ev: Any) -> float | None:
    """ModelNew's median time from a level-2 profile (timings.model_ms), when one ran."""
    model = ((ev.profile or {}).get("timings") or {}).get("model_ms") if ev is not None else None
    return model.get("median") if isinstance(model, dict) else None


def to_dict(result: OptimizeResult) -> dict[str, Any]:
    overall = result.overall
    timing = (overall.details.get("judgement") if overall else None) or {}
    initial = timing.get("baseline_ms") or _profiled_ms(result.evidence_before)
    return {
        "path": result.path,
        "backend": result.backend,
        "target": result.target,
        "timing_meaningful": result.timing_meaningful,
        "error": result.error,
        "cancelled": result.cancelled,
        "elapsed_s": round(result.elapsed_s, 2),
        "device_wait_s": round(result.device_wait_s, 2),
        "shapes": None
        if result.shapes is None
        else {
            "search": [s.to_payload() for s in result.shapes.search],
            "held_out": [s.to_payload() for s in result.shapes.held_out],
            "timing": result.shapes.timing.to_payload(),
            "note": result.shapes.source_note,
        },
        "initial_ms": initial,  # interleaved median when a rewrite was applied, else the profile's
        "final_ms": timing.get("candidate_ms") if overall is not None and overall.accepted else initial,
        "speedup": overall.speedup if overall else None,
        "spread": overall.spread if overall else None,
        "overall": None if overall is None else {
            "accepted": overall.accepted, "reason": overall.reason, "stage": overall.stage,
            "max_error": overall.max_error,
        },
        "roofline_before": _roofline(result.evidence_before),
        "roofline_after": _roofline(result.evidence_after),
        "ascend_original": result.ascend_original,
        "findings_before": sorted({f.code for f in result.evidence_before.findings}) if result.evidence_before else [],
        "applied": [s.to_dict() for s in result.applied],
        "offered": [
            {**s.to_dict(), "diff": unified_diff(result.original, s.candidate.source, result.path)}
            if s.round == 1 else s.to_dict()
            for s in result.offered
        ],
        "rejected": [s.to_dict() for s in result.rejected],
        "declined": [vars(d) for d in result.declined],
        "notes": list(result.notes) + (list(result.evidence_before.notes) if result.evidence_before else []),
        "diff": unified_diff(result.original, result.final, result.path),
    }


def _fmt_ms(value: Any) -> str:
    return "n/a" if value is None else f"{value:.4g} ms"


def shown(candidate: Any, text: str) -> str:
    """Text about an LLM's candidate (its title, a verdict quoting what its code raised) as literal Markdown."""
    return markdown_literal(text) if candidate.origin == "llm" else text


def _step_line(s: Step) -> str:
    v = s.verdict
    level = LEVEL_NAMES.get(s.candidate.level, f"level {s.candidate.level}")
    evidence = ", ".join(s.candidate.evidence) or "none named"
    return (
        f"- **{shown(s.candidate, s.candidate.title)}** ({s.candidate.origin}: {shown(s.candidate, s.candidate.producer)}; "
        f"evidence {evidence} from {level}) - {shown(s.candidate, v.reason)}"
    )


def _ascend_lines(s: Step) -> list[str]:
    """The candidate's Ascend compile record, indented under its line (nothing for other targets)."""
    return [f"  - {shown(s.candidate, line)}" for line in describe(s.verdict.details.get("ascend"))]


def to_markdown(result: OptimizeResult) -> str:
    d = to_dict(result)
    lines = [f"## {result.path}", ""]
    if result.error:
        return "\n".join([*lines, f"**Not optimized:** {result.error}", ""])
    lines.append(f"Backend `{result.backend}`, compile target `{result.target}`; {d['shapes']['note']}.")
    if not result.timing_meaningful:
        lines.append(
            "Timings on this backend say nothing about hardware: candidates below are verified correct only, "
            "none is claimed or applied as faster."
        )
    if result.ascend_original:
        lines += ["", "Original text through BiSheng on the CPU:", ""]
        lines += [f"- {line}" for line in describe(result.ascend_original)]
    lines.append("")
    if result.overall is not None:
        o = result.overall
        spread = f" (spread ±{o.spread:.1%})" if o.spread is not None else ""
        lines += [
            "| initial | final | speedup | max error |",
            "|---|---|---|---|",
            f"| {_fmt_ms(d['initial_ms'])} | {_fmt_ms(d['final_ms'])} | "
            f"{'n/a' if o.speedup is None else f'{o.speedup:.2f}x'}{spread} | "
            f"{'n/a' if o.max_error is None else f'{o.max_error:.1g}'} |",
            "",
            f"Final text against the original: {'accepted' if o.accepted else 'REJECTED'} - {o.reason}",
            "",
        ]
    for label, key in (("before", "roofline_before"), ("after", "roofline_after")):
        for r in d[key]:
            if r.get("roofline_fraction") is not None:
                lines.append(
                    f"- roofline {label}: {r['kernel']} {r['bound']}-bound, "
                    f"{r['roofline_fraction']:.0%} of the ceiling at {_fmt_ms(r['time_ms'])}"
                )
    sections = (
        ("Applied rewrites (in order)", result.applied),
        ("Verified, not applied", result.offered),
        ("Rejected candidates", result.rejected),
    )
    for title, steps in sections:
        lines += ["", f"### {title}", ""]
        if not steps:
            lines.append("none")
        for s in steps:
            c = s.candidate
            lines.append(_step_line(s) if s.verdict.accepted else f"- {shown(c, c.title)} ({shown(c, c.producer)}): "
                         f"rejected at {s.verdict.stage}: {shown(c, s.verdict.reason)}")
            lines += _ascend_lines(s)
    if result.declined:
        lines += ["", "### Recipes that did not apply", ""]
        lines += [f"- {x.proposer} on {x.kernel}: {x.reason}" for x in result.declined]
    notes = d["notes"]
    if notes:
        lines += ["", "### Notes", ""] + [f"- {n}" for n in notes]
    if d["diff"]:
        lines += ["", "### Diff", "", "```diff", d["diff"].rstrip("\n"), "```"]
    return "\n".join(lines) + "\n"


def summary_markdown(files: list[dict[str, Any]]) -> str:
    """One row per file (from to_dict) and the geometric mean of the speedups; a file with no verified faster
    rewrite counts as 1.0x (its first draft is kept), one that failed to run is listed and left out."""
    rows = [
        "| file | initial | final | speedup | spread | applied | verified, not applied | rejected |",
        "|---|---|---|---|---|---|---|---|",
    ]
    speedups: list[float] = []
    for d in files:
        if d.get("error"):
            rows.append(f"| {d['path']} | error: {d['error']} | | | | | | |")
            continue
        sp = d.get("speedup") if (d.get("overall") or {}).get("accepted") else None
        speedups.append(sp if sp else 1.0)
        spread = "" if d.get("spread") is None else f"±{d['spread']:.1%}"
        shown = f"{sp:.2f}x" if sp else "kept (1.00x)" if d.get("timing_meaningful") else "not timed"
        rows.append(
            f"| {d['path']} | {_fmt_ms(d.get('initial_ms'))} | {_fmt_ms(d.get('final_ms'))} | {shown} | {spread} | "
            f"{len(d['applied'])} | {len(d['offered'])} | {len(d['rejected'])} |"
        )
    if speedups and any(d.get("timing_meaningful") for d in files):
        geo = math.exp(sum(math.log(x) for x in speedups) / len(speedups))
        rows += ["", f"Geometric mean over {len(speedups)} file(s): {geo:.2f}x (no file slower than its first draft: "
                 "only verified faster text is ever applied)"]
    return "\n".join(rows) + "\n"
