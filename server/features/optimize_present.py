"""How a verified result looks in the editor: the code action title (what was measured), the hover record, and
the line edits that turn the buffer into the candidate. No LSP state here; pure over the engine's results."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...analysis.rewrite.model import Candidate, Verdict
from ...analysis.source.lines import source_lines

if TYPE_CHECKING:  # the optimize engine is imported by a run, never at server start
    from ..engine.optimize.loop import OptimizeResult


@dataclass(frozen=True)
class Offer:
    """One verified text the editor may apply: measured against exactly the buffer it was computed from."""

    id: str
    candidate: Candidate
    verdict: Verdict
    whole: bool  # the final text of several applied rewrites (or a whole-kernel rewrite)
    timed: bool


def offers(result: OptimizeResult) -> list[Offer]:
    """What was verified against the text the user has: the final chain (measured once more against the original)
    and every first-round candidate. Later-round steps were verified against intermediate texts only."""
    out: list[Offer] = []
    overall = result.overall
    if overall is not None and overall.accepted and len(result.applied) > 1:
        last = result.applied[-1].candidate
        whole = Candidate(
            source=result.final, origin="llm" if any(s.candidate.origin == "llm" for s in result.applied) else
            last.origin, producer=" + ".join(s.candidate.producer for s in result.applied), kernel=last.kernel,
            title=" then ".join(s.candidate.title for s in result.applied), rationale="\n\n".join(
                s.candidate.rationale for s in result.applied),
            evidence=tuple(dict.fromkeys(c for s in result.applied for c in s.candidate.evidence)),
            level=max(s.candidate.level for s in result.applied),
        )
        out.append(Offer(whole.id, whole, overall, True, result.timing_meaningful))
    for step in [*result.applied, *result.offered]:
        if step.round == 1 and step.verdict.accepted:
            if result.timing_meaningful and not step.verdict.details.get("faster"):
                continue  # nothing slower or unmeasured is offered on a timed backend
            out.append(Offer(step.candidate.id, step.candidate, step.verdict, False, result.timing_meaningful))
    return out


def _err(v: Verdict) -> str:
    return "n/a" if v.max_error is None else f"{v.max_error:.0e}"


def action_title(offer: Offer, shape: str) -> str:
    from ..engine.optimize.ascend_compile import short
    v, c = offer.verdict, offer.candidate
    tag = "[LLM] " if c.origin == "llm" else ""
    if offer.timed and v.speedup is not None and v.details.get("faster"):
        device = v.details.get("device") or "the runner's device"
        return f"{tag}Apply verified rewrite: {v.speedup:.2g}x faster on {device} at {shape}, max error {_err(v)} ({c.title})"
    ub = short(v.details.get("ascend"))  # an Ascend target: the UB PlanMemory planned, from BiSheng on the CPU
    return (f"{tag}Apply verified-correct rewrite (not timed: no speed claim): {c.title}, max error {_err(v)}"
            + (f", Ascend {ub}" if ub else ""))


def hover_record(offer: Offer, result: OptimizeResult) -> str:
    from ..engine.optimize.ascend_compile import NO_DEVICE, describe
    from ..engine.optimize.report import LEVEL_NAMES, shown

    v, c = offer.verdict, offer.candidate
    lines = [f"**Verified rewrite** of `{c.kernel}`: {shown(c, c.title)} ({c.origin}: {shown(c, c.producer)}"
             + (", written by an LLM" if c.origin == "llm" else "") + ")", ""]
    level = LEVEL_NAMES.get(c.level, f"level {c.level}")
    lines.append(f"- evidence: {', '.join(c.evidence) or 'none named'} ({level})")
    lines.append(f"- verdict: {shown(c, v.reason)}")
    lines += [f"- {shown(c, line)}" for line in describe(v.details.get("ascend"))]  # BiSheng's compile, UB use
    checks = v.details.get("checks") or []
    if checks:
        lines += ["", "| shape | seed | held out | max abs error | result |", "|---|---|---|---|---|"]
        for ch in checks[:12]:
            err = ch.get("max_abs")
            lines.append(
                f"| {ch.get('shape')} | {ch.get('seed')} | {'yes' if ch.get('held_out') else ''} | "
                f"{'n/a' if err is None else f'{err:.1e}'} | {'pass' if ch.get('passed') else shown(c, str(ch.get('reason')))} |"
            )
    tol = v.details.get("tolerance") or {}
    if tol:
        per_output = tol.get("outputs") if isinstance(tol.get("outputs"), list) else [tol]
        bounds = "; ".join(str(t.get("basis") or f"atol={t.get('atol')} rtol={t.get('rtol')}") for t in per_output)
        reference = (checks[-1].get("reference") if checks else None) or "as written"
        if v.details.get("mode") == "replay":
            compared = (f"reference: {reference}, on the recorded launches; inputs: drawn per seed from each "
                        "launch's dtypes, shapes and value ranges; every tensor argument compared")
        else:
            compared = (f"reference: `Model` of the original text ({reference}); inputs: fresh `get_inputs()` per "
                        "seed, fresh allocations poisoned")
        lines.append(f"\ntolerance: {bounds}; {compared}")
    timing = v.details.get("timing") or {}
    if timing:
        lines.append(
            f"\ntimed at {timing.get('shape')}: baseline {timing.get('baseline_ms')} ms, candidate "
            f"{timing.get('candidate_ms')} ms (interleaved, {timing.get('repeats')} repeats), spread "
            f"±{(v.spread or 0):.1%}"
        )
    elif not offer.timed and v.details.get("ascend") and result.backend != "npu":
        lines.append(f"\nnot timed: {NO_DEVICE}")
    elif not offer.timed:
        lines.append(f"\nnot timed: the `{result.backend}` backend's timings say nothing about hardware")
    if result.shapes is not None:
        lines.append(f"\nshapes: {result.shapes.source_note}")
    return "\n".join(lines)


def line_edits(before: str, after: str) -> list[tuple[int, int, str]]:
    """(first line, end line exclusive, new text) in 0-based lines: only the lines that differ."""
    # LSP's lines (the editor applies these as line ranges): str.splitlines would also break at form feeds, U+2028...
    old, new = source_lines(before, keepends=True), source_lines(after, keepends=True)
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            out.append((i1, i2, "".join(new[j1:j2])))
    return out


def summary_row(offer: Offer) -> dict[str, Any]:
    v, c = offer.verdict, offer.candidate
    return {
        "id": offer.id, "kernel": c.kernel, "title": c.title, "origin": c.origin, "producer": c.producer,
        "speedup": v.speedup, "spread": v.spread, "maxError": v.max_error, "timed": offer.timed,
        "faster": bool(v.details.get("faster")), "evidence": list(c.evidence), "whole": offer.whole,
        "ascend": v.details.get("ascend"),  # an Ascend target's BiSheng compile and UB use; None otherwise
    }
