"""Writing the roofline picture next to a report: `tritonlens profile --report DIR` and `tritonlens optimize
--report DIR` (roofline.svg, linked from the Markdown report). The Markdown lines say why when there is no chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .roofline import RooflineChart, before_after, chart_from_report, to_svg


def write_chart(chart: RooflineChart | None, folder: Path, name: str, title: str) -> list[str]:
    """Writes `name` (SVG) into `folder`; returns the Markdown lines that show it (or say why there is none)."""
    if chart is None:
        return ["No roofline chart: the runner reported no device with known ceilings (e.g. the interpret backend)."]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(to_svg(chart, title=title), encoding="utf-8")
    lines = [f"![{title}]({name})", ""]
    lines += [f"- not placed: {u}" for u in chart.unplaced]
    return lines


def profile_chart_lines(report: Any, folder: Path, path: str) -> list[str]:
    """The roofline of one profile (analysis.profile.analyze.ProfileReport)."""
    name = Path(path).stem
    return write_chart(chart_from_report(report), folder, "roofline.svg", f"Roofline: {name}")


def optimize_chart_lines(before: Any | None, after: Any | None, folder: Path, path: str, index: int) -> list[str]:
    """Before and after the applied rewrites of one optimized file, as two series of one chart."""
    name = Path(path).stem
    return write_chart(
        before_after(before, after), folder, f"roofline-{index}-{name}.svg", f"Roofline of {name}: before and after"
    )


def _report_of(profile: dict[str, Any] | None, source: str, path: str) -> Any | None:
    """A ProfileReport of a RunResult dict that an optimize round collected (None when none was)."""
    if not profile:
        return None
    from ...analysis.core import devices
    from ...analysis.profile import analyze

    return analyze.analyze_run(profile, devices.from_runner(profile.get("device") or {}), source=source, path=path)


def optimize_result_chart_lines(result: Any, folder: Path, index: int) -> list[str]:
    """The roofline section of one file of an optimize report (server.engine.optimize.loop.OptimizeResult)."""
    before = result.evidence_before
    after = result.evidence_after
    rep_before = _report_of(before.profile if before else None, result.original, result.path)
    rep_after = _report_of(after.profile if after else None, result.final, result.path)
    if rep_before is None and rep_after is None:
        return ["No roofline chart: nothing was profiled (the backend cannot time, or level 2 was off)."]
    return optimize_chart_lines(rep_before, rep_after, folder, result.path, index)
