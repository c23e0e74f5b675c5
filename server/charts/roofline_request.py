"""`tritonlens/roofline` {uri} -> {svg, why, points}: the roofline chart of a document's last profile, with the
profile before it as a "before" series when the text changed in between (a verified rewrite applied, say), for the
editor's roofline view. Profiles are kept by the profile feature (remember); this module only reads them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .roofline import before_after, chart_from_report, to_svg

ROOFLINE_REQUEST = "tritonlens/roofline"
TARGET_DATASHEETS = {"sm_90": "h100", "ascend910b3": "ascend910b"}  # ceilings to show when the run had no device
KEEP = 2  # the last profile and the one of the text before it


def remember(store: dict[str, list[tuple[str, Any]]], uri: str, text: str, report: Any) -> None:
    """Keeps `report` as the document's latest profile; an earlier one of a different text stays as "before"."""
    kept = [(t, r) for t, r in store.get(uri, []) if t != text]
    store[uri] = [*kept, (text, report)][-KEEP:]


def _datasheet(report: Any, target: str | None) -> Any:
    """The report with the compile target's datasheet device when the runner reported none (interpret)."""
    from ...analysis.core import devices

    key = TARGET_DATASHEETS.get(target or "")
    spec = devices.DEVICES.get(key) if key else None
    return replace(report, device=spec) if spec is not None else report


def roofline_answer(store: dict[str, list[tuple[str, Any]]], uri: str, target: str | None = None) -> dict[str, Any]:
    kept = store.get(uri) or []
    if not kept:
        return {"svg": None, "why": "not profiled yet: run Profile kernel first (the chart needs measured launches)"}
    reports = [r if r.device is not None else _datasheet(r, target) for _, r in kept]
    chart = before_after(reports[0], reports[1]) if len(reports) == 2 else chart_from_report(reports[0])
    if chart is None:
        return {"svg": None, "why": "the runner reported no device with known ceilings, so there is no roofline"}
    name = uri.rsplit("/", 1)[-1]
    datasheet_only = all(r.device is None for _, r in kept)
    title = f"Roofline: {name} on {chart.device}" + (f" (datasheet of {target}; this run had no GPU)"
                                                     if datasheet_only else "")
    return {
        "svg": to_svg(chart, title=title),
        "why": None if chart.points else "no launch placed: " + "; ".join(chart.unplaced[:3]),
        "chart": chart.to_dict(),
    }
