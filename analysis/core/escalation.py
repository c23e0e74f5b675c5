"""One finding per cause across levels: a higher level that confirms a lower level's symptom absorbs it.

The method escalates: triage (level 1) suspects, profiling (2) measures, the compiler (3/4) shows the decision.
When a higher-level finding and a lower-level one it confirms sit on overlapping lines of the same kernel, the
user sees the higher one only, its evidence chain led by the lower one's symptom (symptom -> IR -> compiler
decision -> rewrite), the lower one's quick fix when the higher has none, and `data["confirms"]`. The merged
finding takes the most severe of the group's severities: a confirmation never makes a problem look smaller.

The pairs are declared by the higher rule (`Rule.confirms`, next to its definition), each checked against both
rules: same cause, and where the rules record it, the same culprit (`when`). A pair is `portable` when the higher level's evidence comes from target-independent
TTIR, so it confirms the symptom on every platform the lower rule names; otherwise the lower finding keeps
standing, restricted to the platforms the higher level did not look at.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from . import rules
from .findings import PLATFORMS, Evidence, Finding
from .rules import Predicate
from .settings import Settings


@dataclass(frozen=True)
class Confirmation:
    higher: str
    lower: str
    why: str  # the shared cause, for readers of the rules and for the hover
    when: Predicate | None = None  # extra condition on the pair (culprit, loop, cause) beyond overlapping lines
    portable: bool = False  # higher evidence is target-independent TTIR: confirms on every platform


def confirmations() -> tuple[Confirmation, ...]:
    """Every (higher, lower) pair, as the higher rules declare them (`Rule.confirms`)."""
    return tuple(_by_pair().values())


def _by_pair() -> dict[tuple[str, str], Confirmation]:
    global _PAIRS
    generation = rules.generation()
    if _PAIRS[0] != generation:
        table = {
            (rule.code, c.lower): Confirmation(rule.code, c.lower, c.why, c.when, c.portable)
            for rule in rules.all_rules()
            for c in rule.confirms
        }
        _PAIRS = (generation, table)
    return _PAIRS[1]


_PAIRS: tuple[int, dict[tuple[str, str], Confirmation]] = (-1, {})


def confirmation(higher: Finding, lower: Finding) -> Confirmation | None:
    """The table entry by which `higher` confirms `lower`, if it does for these two findings."""
    entry = _by_pair().get((higher.code, lower.code))
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
    if len({f.level for f in items}) < 2:
        return items  # only a higher level confirms: nothing to fold, and no need to load every level's rules
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
    direct = _by_pair().get((top.code, entry.lower))
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
