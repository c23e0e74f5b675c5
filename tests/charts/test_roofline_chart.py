"""Issue 23, item 7: the roofline picture from real H200 profiles (benchmarks/gpu/results): the device's ceilings,
each launch with counted FLOPs as a point at its measured intensity and rate, the others listed with the reason."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

from tritonlens.analysis.core import devices
from tritonlens.analysis.profile import analyze as profiling
from tritonlens.server.charts.roofline import before_after, chart_from_report, to_svg

RUN2 = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu" / "results" / "run2"


def report_of(name: str) -> profiling.ProfileReport:
    """As the server analyzes a run: the ceilings measured on that device in the same run (profile_add.json)."""
    result = json.loads((RUN2 / name).read_text())
    measured = json.loads((RUN2 / "profile_add.json").read_text())["ceilings"]
    device = devices.from_runner(result["device"], measured)
    return profiling.analyze_run(result, device, source=None, path="kernel.py")


def test_a_measured_matmul_is_a_point_under_the_measured_roofs() -> None:
    report = report_of("profile_matmul.json")
    chart = chart_from_report(report)
    assert chart is not None and "H200" in chart.device
    (la,) = report.launches
    (point,) = chart.points
    assert point.label == "matmul_kernel" and point.bound == "compute"
    assert abs(point.intensity - la.flops / la.bytes_moved) < 1e-9
    assert abs(point.tflops - la.achieved_tflops) / la.achieved_tflops < 1e-6  # 565 TFLOP/s measured
    assert chart.bandwidth_gbps == report.device.memory_bandwidth.value
    assert point.tflops <= max(t for _, t, _ in chart.roofs)  # under its roof
    svg = to_svg(chart)
    root = ET.fromstring(svg)  # well-formed
    assert root.tag.endswith("svg")
    assert "matmul_kernel" in svg and re.search(r"[\d,]+ GB/s \(measured\)", svg)


def test_launches_without_flops_or_meaningful_time_are_listed_not_guessed() -> None:
    add = report_of("profile_add.json")  # recorded before launches carried their TTIR: no FLOP count
    chart = chart_from_report(add)
    assert chart is not None and chart.points == []
    assert chart.unplaced == ["add_kernel: FLOPs not counted (no compiled IR recorded for the launch)"]
    interpret = replace(report_of("profile_matmul.json"), timing_meaningful=False)
    chart = chart_from_report(interpret)
    assert chart is not None and chart.points == [] and "not timed" in chart.unplaced[0]
    assert "not placed: matmul_kernel: not timed" in to_svg(chart)


def test_before_and_after_are_two_series() -> None:
    before, after = report_of("profile_matmul.json"), report_of("profile_matmul.json")
    after.launches[0] = replace(after.launches[0], time_ms=after.launches[0].time_ms / 2)  # twice as fast
    chart = before_after(before, after)
    assert chart is not None
    assert [p.series for p in chart.points] == ["before", "after"]
    assert abs(chart.points[1].tflops / chart.points[0].tflops - 2.0) < 1e-9
    svg = to_svg(chart)
    assert svg.count("<circle") == 4  # two points and two legend marks


def test_no_device_no_chart() -> None:
    assert chart_from_report(replace(report_of("profile_matmul.json"), device=None)) is None
