"""Issue 23, item 7: `tritonlens profile --report DIR` and the optimize report carry the roofline chart (SVG)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from tritonlens.server.charts.files import optimize_result_chart_lines
from tritonlens.server.engine.optimize.evidence import Evidence
from tritonlens.server.engine.optimize.loop import OptimizeResult

ROOT = Path(__file__).resolve().parents[2]
RUN2 = ROOT / "benchmarks" / "gpu" / "results" / "run2"


def test_profile_report_writes_the_roofline(tmp_path: Path) -> None:
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "tritonlens.server.cli", "profile", str(ROOT / "examples" / "matmul.py"),
         "--from-json", str(RUN2 / "profile_matmul.json"), "--report", str(out)],
        capture_output=True, text=True, timeout=120, env={"TRITONLENS_CACHE_DIR": str(tmp_path / "cache"),
                                                           "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr[-1500:]
    md = (out / "profile-report.md").read_text()
    assert "![Roofline: matmul](roofline.svg)" in md
    svg = (out / "roofline.svg").read_text()
    ET.fromstring(svg)
    assert "matmul_kernel" in svg and "<circle" in svg


def test_optimize_report_shows_before_and_after(tmp_path: Path) -> None:
    before = json.loads((RUN2 / "profile_matmul.json").read_text())
    after = json.loads((RUN2 / "profile_matmul.json").read_text())
    after["launches"][0]["time_ms"] = {k: v / 2 for k, v in before["launches"][0]["time_ms"].items()}  # twice as fast
    source = (ROOT / "examples" / "matmul.py").read_text()
    result = OptimizeResult("matmul.py", source, source, "cuda", "sm_90")
    result.evidence_before = Evidence(profile=before)
    result.evidence_after = Evidence(profile=after)
    lines = optimize_result_chart_lines(result, tmp_path, 1)
    assert lines[0] == "![Roofline of matmul: before and after](roofline-1-matmul.svg)"
    svg = (tmp_path / "roofline-1-matmul.svg").read_text()
    assert "matmul_kernel (before)" in svg and "matmul_kernel (after)" in svg
    nothing = OptimizeResult("matmul.py", source, source, "interpret", "sm_90")
    assert optimize_result_chart_lines(nothing, tmp_path, 2)[0].startswith("No roofline chart: nothing was profiled")
