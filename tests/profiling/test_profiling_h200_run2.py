"""Second H200 run (benchmarks/gpu/results/run2): the coalesced vector add under ncu, a bf16 tl.dot matmul,
and agreement between the two runs' timings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tritonlens.analysis.core import devices
from tritonlens.analysis.profile import analyze as profiling
from tritonlens.analysis.profile import launch as profiling_launch
from tritonlens.analysis.profile.ncu import parse_source_csv

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "gpu" / "results"
RUN2 = RESULTS / "run2"


def load(run: str, name: str) -> dict:
    return json.loads((RESULTS / run / name).read_text())


@pytest.fixture(scope="module")
def h200():
    add = load("run2", "profile_add.json")
    return devices.from_runner(add["device"], add["ceilings"])


def test_coalesced_add_has_no_excess_sectors():
    view = parse_source_csv((RUN2 / "ncu_add_source.csv").read_text())
    assert view.functions == ["add_kernel"]
    memory_lines = [ln for ln in view.lines if ln.l2_sectors]
    assert [ln.line for ln in memory_lines] == [19, 20, 21]  # two loads and the store
    assert all(ln.l2_sectors == ln.l2_sectors_ideal and ln.l2_sectors_excessive == 0 for ln in memory_lines)
    # 2**26 fp32 elements = 256 MiB per tensor = 8 Mi sectors of 32 bytes on every line
    assert all(ln.l2_sectors == (1 << 26) * 4 // 32 for ln in memory_lines)


def test_near_roofline_launch_gets_no_ncu_line_findings(h200):
    result = load("run2", "profile_add.json")
    view = parse_source_csv((RUN2 / "ncu_add_source.csv").read_text())
    report = profiling.analyze_run(result, h200, path="benchmarks/gpu/kb_copy.py", ncu=view)
    assert [f.code for f in report.findings] == ["TL201"]
    assert any("near its roofline" in n for n in report.notes)
    # the same counters for a launch below its roofline do give the hotspot hint
    slow = {**result, "launches": [{**result["launches"][0], "time_ms": {"median": 2.0}}]}
    codes = [
        f.code for f in profiling.analyze_run(slow, h200, path="benchmarks/gpu/kb_copy.py", ncu=view).findings
    ]
    assert codes == ["TL202", "TL208"]


def test_matmul_flops_against_measured_bf16_ceiling(h200):
    result = load("run2", "profile_matmul.json")
    source = (ROOT / "benchmarks" / "gpu" / "kb_matmul.py").read_text()
    report = profiling.analyze_run(result, h200, source=source)
    (la,) = report.launches
    assert la.flops == 2 * 4096**3 and la.bound == "compute"
    assert h200.rates["bf16"].source == "measured"
    assert la.compute_fraction == pytest.approx(la.achieved_tflops / h200.rates["bf16"].value)
    expected = "TL201" if la.compute_fraction >= profiling_launch.NEAR_ROOFLINE else "TL209"
    assert [f.code for f in report.findings] == [expected]
    assert la.occupancy_limiter in ("registers", "shared memory")  # 113 regs x 8 warps, 96 KiB shared


def test_two_runs_agree_within_a_few_percent():
    for name in ("profile_add.json", "profile_transpose.json"):
        t1 = load("run1", name)["launches"][0]["time_ms"]["median"]
        t2 = load("run2", name)["launches"][0]["time_ms"]["median"]
        assert abs(t1 - t2) / t1 < 0.05, name
    c1, c2 = load("run1", "profile_add.json")["ceilings"], load("run2", "profile_add.json")["ceilings"]
    assert abs(c1["copy_gbps"] - c2["copy_gbps"]) / c1["copy_gbps"] < 0.05
