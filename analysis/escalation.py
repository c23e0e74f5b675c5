"""One finding per cause across levels: a higher level that confirms a lower level's symptom absorbs it.

The method escalates: triage (level 1) suspects, profiling (2) measures, the compiler (3/4) shows the decision.
When a higher-level finding and a lower-level one it confirms sit on overlapping lines of the same kernel, the
user sees the higher one only, its evidence chain led by the lower one's symptom (symptom -> IR -> compiler
decision -> rewrite), the lower one's quick fix when the higher has none, and `data["confirms"]`. The merged
finding takes the most severe of the group's severities: a confirmation never makes a problem look smaller.

Each pair in `CONFIRMATIONS` was checked against both rules: same cause, and where the rules record it, the
same culprit (`when`). A pair is `portable` when the higher level's evidence comes from target-independent
TTIR, so it confirms the symptom on every platform the lower rule names; otherwise the lower finding keeps
standing, restricted to the platforms the higher level did not look at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from .findings import PLATFORMS, Evidence, Finding
from .settings import Settings

Check = Callable[[Finding, Finding], bool]


@dataclass(frozen=True)
class Confirmation:
    higher: str
    lower: str
    why: str  # the shared cause, for readers of this table and for the hover
    when: Check | None = None  # extra condition on the pair (culprit, loop, cause) beyond overlapping lines
    portable: bool = False  # higher evidence is target-independent TTIR: confirms on every platform


def _data(f: Finding, key: str) -> Any:
    return f.data.get(key) if isinstance(f.data, dict) else None


def _same_loop(high: Finding, low: Finding) -> bool:
    # TL314 has two kinds; only "loop-invariant" is TL106's cause, and both record the loop's line.
    return _data(high, "kind") == "loop-invariant" and _data(high, "loop_line") == _data(low, "loop_line")


def _fp32_operands(high: Finding, low: Finding) -> bool:
    # TL305 also fires for small tiles or integer operands; with fp32 operands and `ieee` in the source
    # (TL111) its first branch, "fp32 with input_precision='ieee'", is the one taken.
    return _data(high, "operand_type") == "f32"


def _strided(high: Finding, low: Finding) -> bool:
    return _data(high, "cause") == "stride"


def _scattered(high: Finding, low: Finding) -> bool:
    # Excess sectors come from lanes far apart (stride, gather); unaligned or masked but contiguous scalar
    # accesses (TL302/TL303) still coalesce, so they do not explain TL207.
    return _data(high, "cause") in ("stride", "gather")


def _index_from_load(high: Finding, low: Finding) -> bool:
    # TL401 also fires for addresses that are not affine (modulo, pointer increments); TL116 is the gather.
    return _data(high, "index_line") is not None


def _ops(f: Finding) -> list[Any]:
    ops = _data(f, "ops")
    return ops if isinstance(ops, list) else []


def _dtypes(f: Finding) -> list[Any]:
    dtypes = _data(f, "dtypes")
    return dtypes if isinstance(dtypes, list) else []


def _int64_compare(high: Finding, low: Finding) -> bool:
    return "arith.cmpi" in _ops(high) and "i64" in _dtypes(high)


def _int64_ops(high: Finding, low: Finding) -> bool:
    return "i64" in _dtypes(high)


def _int_compare(high: Finding, low: Finding) -> bool:
    return "arith.cmpi" in _ops(high)


def _over_cores(high: Finding, low: Finding) -> bool:
    blocks, cores = _data(high, "blocks"), _data(high, "cores")
    return isinstance(blocks, int) and isinstance(cores, int) and blocks > cores


def _over_launch_limit(high: Finding, low: Finding) -> bool:
    blocks = _data(high, "blocks")
    return isinstance(blocks, int) and blocks > 65535


CONFIRMATIONS: tuple[Confirmation, ...] = (
    # NVIDIA, level 4 over level 1
    Confirmation(
        "TL314", "TL106", "a load whose address and mask do not change in the loop", _same_loop, True
    ),
    Confirmation("TL305", "TL111", "fp32 tl.dot with input_precision='ieee' runs on FMA", _fp32_operands),
    # (TL312 over TL113 is gone: TL113 is Ascend-only since docs/precision.md; TL312 stands on its own.)
    Confirmation("TL301", "TL109", "the innermost index is multiplied by a stride", _strided),
    # NVIDIA, level 4 over level 2, and level 2 over level 1
    Confirmation("TL301", "TL207", "neighbouring lanes access addresses far apart", _scattered),
    Confirmation("TL207", "TL109", "a strided innermost index wastes L2 sectors"),
    Confirmation("TL301", "TL131", "the innermost index is multiplied by the row length", _strided),
    Confirmation("TL207", "TL131", "lanes a row apart (a column walk) waste L2 sectors"),
    # Ascend, level 4 over level 1
    Confirmation("TL401", "TL116", "a gather through loaded indices becomes a scalar loop", _index_from_load),
    Confirmation("TL402", "TL117", "an int64 tile comparison runs on the scalar unit", _int64_compare),
    Confirmation("TL402", "TL113", "int64 index tiles run on the scalar unit", _int64_ops),
    Confirmation(
        "TL402", "TL118", "an integer tile comparison in tl.where runs on the scalar unit", _int_compare
    ),
    Confirmation("TL406", "TL119", "tl.static_range unrolls copies of the body's tiles"),
    Confirmation("TL404", "TL115", "more programs than Ascend cores run in dispatch rounds", _over_cores),
    Confirmation(
        "TL404", "TL114", "more than 65535 programs exceed Ascend's launch limit", _over_launch_limit
    ),
)

_BY_PAIR: dict[tuple[str, str], Confirmation] = {(c.higher, c.lower): c for c in CONFIRMATIONS}


def confirmation(higher: Finding, lower: Finding) -> Confirmation | None:
    """The table entry by which `higher` confirms `lower`, if it does for these two findings."""
    entry = _BY_PAIR.get((higher.code, lower.code))
    if entry is None or higher.level <= lower.level:
        return None
    if higher.kernel != lower.kernel or not _lines_overlap(higher, lower):
        return None
    # A platform-specific confirmation says nothing about a rule that only concerns another platform.
    if not entry.portable and not set(higher.platforms) & set(lower.platforms):
        return None
    if entry.when is not None and not entry.when(higher, lower):
        return None
    return entry


def _lines_overlap(a: Finding, b: Finding) -> bool:
    return a.span.line <= b.span.end_line and b.span.line <= a.span.end_line


def merge(findings: Iterable[Finding], platforms: Iterable[str] = PLATFORMS) -> list[Finding]:
    """Fold every lower-level finding a higher-level one confirms into it; keeps the input order.

    `platforms`: the platforms the caller shows; a lower finding that is only confirmed on some of its
    platforms stays for the rest of them (if shown), restricted to those.
    """
    items = list(findings)
    shown = set(platforms)
    absorbed: set[int] = set()
    merged: dict[int, Finding] = {}
    residual: dict[int, Finding] = {}
    # Highest level first, so a level-2 finding absorbed by level 4 does not also stand on its own.
    for hi in sorted(range(len(items)), key=lambda i: -int(items[i].level)):
        if hi in absorbed:
            continue
        group = _confirmed_by(items, hi)
        if not group:
            continue
        absorbed.update(i for i, _ in group)
        merged[hi] = _fold(items[hi], [(items[i], entry) for i, entry in group])
        for i, entry in group:
            rest = _unconfirmed_platforms(items[i], items[hi], entry, shown)
            if rest:
                residual[i] = replace(
                    items[i],
                    platforms=rest,
                    data={
                        **items[i].data,
                        "confirmed_on": list(items[hi].platforms),
                        "confirmed_by": items[hi].code,
                    },
                )
    out: list[Finding] = []
    for i, f in enumerate(items):
        if i in merged:
            out.append(merged[i])
        elif i in residual:
            out.append(residual[i])
        elif i not in absorbed:
            out.append(f)
    return out


def apply_and_merge(settings: Settings, findings: Iterable[Finding]) -> list[Finding]:
    """What a user sees: their settings (selection, platforms, severities) first, then one finding per cause.

    Settings go first so that an ignored higher-level code leaves the lower-level symptom visible."""
    return merge(settings.apply(list(findings)), settings.platforms)


def _confirmed_by(items: list[Finding], hi: int) -> list[tuple[int, Confirmation]]:
    """Lower findings confirmed by items[hi], directly or through a confirmed finding in between."""
    found: list[tuple[int, Confirmation]] = []
    seen = {hi}
    queue = [hi]
    while queue:
        current = items[queue.pop(0)]
        for i, low in enumerate(items):
            if i in seen:
                continue
            entry = confirmation(current, low)
            if entry is None:
                continue
            seen.add(i)
            queue.append(i)
            # Through an intermediate finding, the outer finding's platforms bound what is confirmed.
            found.append((i, entry if current is items[hi] else _via(items[hi], entry)))
    return found


def _via(top: Finding, entry: Confirmation) -> Confirmation:
    direct = _BY_PAIR.get((top.code, entry.lower))
    return direct if direct is not None else entry


def _unconfirmed_platforms(
    low: Finding, high: Finding, entry: Confirmation, shown: set[str]
) -> tuple[str, ...]:
    if entry.portable:
        return ()
    return tuple(p for p in low.platforms if p not in high.platforms and p in shown)


def _fold(high: Finding, lows: list[tuple[Finding, Confirmation]]) -> Finding:
    lows = sorted(lows, key=lambda pair: (int(pair[0].level), pair[0].span.line, pair[0].span.col))
    symptoms: list[Evidence] = []
    for low, _ in lows:
        first, *rest = low.evidence or (Evidence(kind="ast", summary=low.message),)
        lead = f"{low.code} (level {int(low.level)}): {low.message}"
        # Evidence without a stage (AST) is labelled with the level that saw it, so the chain reads in order.
        origin = low.level.name.lower()
        symptoms.append(replace(first, summary=lead, stage=first.stage or origin))
        symptoms.extend(replace(ev, stage=ev.stage or origin) for ev in rest)
    platforms = set(high.platforms)
    for low, entry in lows:
        if entry.portable:
            platforms |= set(low.platforms)
    fix = high.fix or next((low.fix for low, _ in lows if low.fix is not None), None)
    confirms = list(dict.fromkeys(low.code for low, _ in lows))
    data = {
        **high.data,
        "confirms": confirms,
        "confirmed": [
            {
                "code": low.code,
                "level": int(low.level),
                "message": low.message,
                "line": low.span.line,
                "col": low.span.col,
                "why": entry.why,
            }
            for low, entry in lows
        ],
    }
    return replace(
        high,
        evidence=tuple(symptoms) + high.evidence,
        fix=fix,
        estimated_gain=high.estimated_gain
        or next((low.estimated_gain for low, _ in lows if low.estimated_gain), None),
        platforms=tuple(p for p in PLATFORMS if p in platforms) + tuple(sorted(platforms - set(PLATFORMS))),
        # Confirmation must not make a problem look smaller than the level that first saw it.
        severity=min([high.severity, *(low.severity for low, _ in lows)]),
        data=data,
    )
