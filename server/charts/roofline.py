"""The roofline picture (issue 23, item 7): the device's ceilings (memory bandwidth and compute rates, measured
where the runner measured them) on log-log axes of arithmetic intensity (FLOP/byte) against TFLOP/s, each profiled
launch a point, before and after a verified rewrite as two series. Pure: a ProfileReport in, an SVG string out
(no plotting library; editors show SVG as it is, reports link it).

Launches without a FLOP count or a meaningful time are not placed: the chart lists them with the reason instead of
guessing a position.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import Any

SERIES_COLOURS = {"profiled": "#3b75af", "before": "#c44e52", "after": "#55a868"}
# compute roofs drawn, in this order, when the device has them (FMA units and matrix units)
COMPUTE_ROOFS = (("fp32", "fp32 FMA"), ("bf16", "bf16 tensor"))


@dataclass(frozen=True)
class Point:
    label: str  # kernel name (and launch index when a kernel has several)
    intensity: float  # FLOP per byte moved
    tflops: float  # achieved
    series: str  # "profiled" | "before" | "after"
    bound: str = "unknown"


@dataclass
class RooflineChart:
    device: str
    bandwidth_gbps: float
    bandwidth_source: str  # "measured" | "datasheet" | ...
    roofs: list[tuple[str, float, str]]  # (label, TFLOP/s, source)
    points: list[Point] = field(default_factory=list)
    unplaced: list[str] = field(default_factory=list)  # "kernel: why it has no point"

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "bandwidth_gbps": self.bandwidth_gbps,
            "bandwidth_source": self.bandwidth_source,
            "roofs": [{"label": a, "tflops": b, "source": c} for a, b, c in self.roofs],
            "points": [vars(p) for p in self.points],
            "unplaced": list(self.unplaced),
        }


def chart_from_report(report: Any, series: str = "profiled") -> RooflineChart | None:
    """The chart of one profiling report (analysis.profiling.ProfileReport); None without device ceilings."""
    device = report.device
    if device is None:
        return None
    roofs = [(label, c.value, c.source) for key, label in COMPUTE_ROOFS if (c := device.rates.get(key)) is not None]
    chart = RooflineChart(device.name, device.memory_bandwidth.value, device.memory_bandwidth.source, roofs)
    add_points(chart, report, series)
    return chart


def add_points(chart: RooflineChart, report: Any, series: str) -> None:
    """Adds each launch of `report` as a point of `series`, or to `unplaced` with the reason."""
    several = {la.kernel for la in report.launches if sum(x.kernel == la.kernel for x in report.launches) > 1}
    for la in report.launches:
        label = f"{la.kernel} #{la.index}" if la.kernel in several else la.kernel
        tag = f"{label} ({series})" if series != "profiled" else label
        if not report.timing_meaningful or la.time_ms is None:
            chart.unplaced.append(f"{tag}: not timed on this backend (interpret timings say nothing about hardware)")
        elif not la.flops or not la.bytes_moved:
            chart.unplaced.append(f"{tag}: FLOPs not counted (no compiled IR recorded for the launch)")
        else:
            intensity = la.flops / la.bytes_moved
            tflops = la.flops / (la.time_ms * 1e-3) / 1e12
            chart.points.append(Point(label, intensity, tflops, series, la.bound))


def before_after(before: Any | None, after: Any | None) -> RooflineChart | None:
    """One chart with the launches of the report before a rewrite and the one after it."""
    base = next((r for r in (before, after) if r is not None and r.device is not None), None)
    if base is None:
        return None
    chart = chart_from_report(base, "before" if base is before else "after")
    assert chart is not None
    if base is before and after is not None:
        add_points(chart, after, "after")
    return chart


def _decades(lo: float, hi: float) -> list[float]:
    return [10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]


def _fmt(v: float) -> str:
    return f"{v:g}" if 1e-3 <= v < 1e5 else f"1e{round(math.log10(v))}"


def to_svg(chart: RooflineChart, width: int = 640, height: int = 420, title: str | None = None) -> str:
    """The chart as a standalone SVG document."""
    bw_tflops_per_intensity = chart.bandwidth_gbps / 1e3  # TFLOP/s reached per FLOP/byte on the memory roof
    peak = max((t for _, t, _ in chart.roofs), default=bw_tflops_per_intensity * 100)
    xs = [p.intensity for p in chart.points]
    ys = [p.tflops for p in chart.points]
    ridge = peak / bw_tflops_per_intensity
    x_lo = 10.0 ** math.floor(math.log10(min([0.05, *xs]) / 2))
    x_hi = 10.0 ** math.ceil(math.log10(max([ridge * 20, *xs]) * 2))
    y_hi = 10.0 ** math.ceil(math.log10(peak * 1.2))
    y_lo = 10.0 ** math.floor(math.log10(min([bw_tflops_per_intensity * x_lo, *ys]) / 2))
    left, right, top, bottom = 64, 150, 34, 48
    pw, ph = width - left - right, height - top - bottom
    notes = chart.unplaced[:6] + ([f"... and {len(chart.unplaced) - 6} more"] if len(chart.unplaced) > 6 else [])
    full_height = height + 14 * len(notes)

    def px(x: float) -> float:
        return left + pw * (math.log10(x) - math.log10(x_lo)) / (math.log10(x_hi) - math.log10(x_lo))

    def py(y: float) -> float:
        return top + ph * (1 - (math.log10(y) - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo)))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{full_height}" '
        f'viewBox="0 0 {width} {full_height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{full_height}" fill="white"/>',
        f'<text x="{left}" y="20" font-size="13" font-weight="bold">'
        f"{escape(title or f'Roofline: {chart.device}')}</text>",
    ]
    for x in _decades(x_lo, x_hi):
        out.append(f'<line x1="{px(x):.1f}" y1="{top}" x2="{px(x):.1f}" y2="{top + ph}" stroke="#eee"/>')
        out.append(f'<text x="{px(x):.1f}" y="{top + ph + 14}" text-anchor="middle">{_fmt(x)}</text>')
    for y in _decades(y_lo, y_hi):
        out.append(f'<line x1="{left}" y1="{py(y):.1f}" x2="{left + pw}" y2="{py(y):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 4}" y="{py(y) + 4:.1f}" text-anchor="end">{_fmt(y)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>')
    out.append(
        f'<text x="{left + pw / 2}" y="{height - 12}" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>'
    )
    out.append(
        f'<text x="16" y="{top + ph / 2}" text-anchor="middle" transform="rotate(-90 16 {top + ph / 2})">'
        "TFLOP/s</text>"
    )
    # the memory roof up to each compute roof: y = bandwidth * intensity, capped by the roof
    for i, (label, roof, source) in enumerate(sorted(chart.roofs, key=lambda r: r[1])):
        knee = roof / bw_tflops_per_intensity
        dash = "" if i == len(chart.roofs) - 1 else ' stroke-dasharray="4 3"'
        out.append(
            f'<polyline fill="none" stroke="#333" stroke-width="1.5"{dash} points="'
            f'{px(x_lo):.1f},{py(bw_tflops_per_intensity * x_lo):.1f} {px(knee):.1f},{py(roof):.1f} '
            f'{px(x_hi):.1f},{py(roof):.1f}"/>'
        )
        out.append(
            f'<text x="{px(knee) + 6:.1f}" y="{py(roof) - 5:.1f}">'
            f"{escape(label)} {roof:,.0f} TFLOP/s ({escape(source)})</text>"
        )
    slope_x = x_lo * 3
    out.append(
        f'<text x="{px(slope_x) + 4:.1f}" y="{py(bw_tflops_per_intensity * slope_x) - 6:.1f}">'
        f"{chart.bandwidth_gbps:,.0f} GB/s ({escape(chart.bandwidth_source)})</text>"
    )
    for p in chart.points:
        colour = SERIES_COLOURS.get(p.series, "#333")
        out.append(
            f'<circle cx="{px(p.intensity):.1f}" cy="{py(p.tflops):.1f}" r="5" fill="{colour}">'
            f"<title>{escape(p.label)} ({p.series}): {p.intensity:.3g} FLOP/B, {p.tflops:.3g} TFLOP/s, "
            f"{escape(p.bound)}-bound</title></circle>"
        )
        out.append(f'<text x="{px(p.intensity) + 7:.1f}" y="{py(p.tflops) + 4:.1f}">{escape(p.label)}</text>')
    legend_x, legend_y = left + pw + 10, top + ph // 2  # below the roof labels that run into the margin
    for series in dict.fromkeys(p.series for p in chart.points):
        out.append(f'<circle cx="{legend_x + 5}" cy="{legend_y}" r="5" fill="{SERIES_COLOURS.get(series, "#333")}"/>')
        out.append(f'<text x="{legend_x + 14}" y="{legend_y + 4}">{escape(series)}</text>')
        legend_y += 18
    if not chart.points:
        out.append(f'<text x="{left + 10}" y="{top + 20}" fill="#a00">no launch placed: see below the chart</text>')
    for i, line in enumerate(notes):
        out.append(f'<text x="{left}" y="{height + 14 * i - 2}" fill="#555">not placed: {escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
