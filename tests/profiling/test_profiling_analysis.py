"""Level-2 diagnosis on numbers recorded on the lent H200 (benchmarks/gpu/results/) and on small hand-made
launch records that isolate one rule each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tritonlens.analysis.core import devices
from tritonlens.analysis.profile import analyze as profiling
from tritonlens.analysis.profile import launch as profiling_launch
from tritonlens.analysis.profile.ncu import parse_source_csv

ROOT = Path(__file__).resolve().parents[2]
RUN1 = ROOT / "benchmarks" / "gpu" / "results" / "run1"
KB_COPY = ROOT / "benchmarks" / "gpu" / "kb_copy.py"


def load(name: str) -> dict:
    return json.loads((RUN1 / name).read_text())


@pytest.fixture(scope="module")
def h200():
    add = load("profile_add.json")
    return devices.from_runner(add["device"], add["ceilings"])


def codes(report) -> list[str]:
    return [f.code for f in report.findings]


def test_vector_add_is_at_the_measured_copy_ceiling(h200):
    report = profiling.analyze_run(load("profile_add.json"), h200, source=KB_COPY.read_text())
    (la,) = report.launches
    assert la.bytes_moved == 3 * (1 << 26) * 4  # x, y read; out written: 768 MiB
    assert la.bound == "memory" and la.near_roofline
    expected = la.bytes_moved / (la.time_ms * 1e-3) / (h200.memory_bandwidth.value * 1e9)
    assert la.bandwidth_fraction == pytest.approx(expected)
    assert codes(report) == ["TL201"]
    finding = report.findings[0]
    assert finding.data["stop_escalation"] is True
    assert finding.span.line == la.line == 15  # recorded at the decorator (older runner): moved to the def
    assert report.stop_escalation


def test_naive_transpose_far_below_ceiling_with_ncu_lines(h200):
    result = load("profile_transpose.json")
    view = parse_source_csv((RUN1 / "ncu_transpose_source.csv").read_text())
    report = profiling.analyze_run(result, h200, source=KB_COPY.read_text(), path=str(KB_COPY), ncu=view)
    (la,) = report.launches
    assert la.bytes_known_direction and la.bytes_read == la.bytes_written == 8192 * 8192 * 4
    assert la.bandwidth_fraction < 0.2 and not la.near_roofline
    assert codes(report) == ["TL202", "TL207", "TL208"]
    tl202, tl207, tl208 = report.findings
    assert tl202.span.line == 25 and "memory-bound" in tl202.message
    assert tl207.span.line == 31 and "8.0x" in tl207.message and tl207.evidence[0].stage == "ncu"
    assert tl207.span.col == 8  # the statement's indentation inside the loop
    assert tl208.span.line == 31
    assert not report.stop_escalation


def test_datasheet_ceiling_when_nothing_was_measured():
    result = load("profile_transpose.json")
    spec = devices.from_runner(result["device"])
    assert spec.memory_bandwidth.source == "datasheet" and spec.memory_bandwidth.value == 4800
    la = profiling.analyze_run(result, spec).launches[0]
    assert la.bandwidth_fraction == pytest.approx(la.achieved_gbps / 4800)


def test_interpret_results_get_no_verdicts(h200):
    result = {**load("profile_add.json"), "timing_meaningful": False, "backend": "interpret"}
    report = profiling.analyze_run(result, h200)
    assert report.findings == [] and report.launches[0].time_ms is None
    assert "meaningless" in report.notes[0]


def test_unknown_device_is_said_plainly():
    result = {**load("profile_add.json"), "device": {"name": "Mystery GPU"}}
    report = profiling.analyze_run(result, devices.from_runner(result["device"]))
    assert report.findings == [] and "unknown device" in report.notes[0]


def tensor(name, shape, dtype="float32", written=None, itemsize=4):
    n = 1
    for s in shape:
        n *= s
    return {
        "name": name,
        "kind": "tensor",
        "dtype": dtype,
        "shape": shape,
        "nbytes": n * itemsize,
        "written": written,
    }


def record(grid, time_ms, args, **extra):
    return {
        "index": 0,
        "kernel": "k",
        "file": "k.py",
        "line": 3,
        "grid": grid,
        "args": args,
        "time_ms": {"median": time_ms},
        "count": extra.pop("count", 1),
        **extra,
    }


H100 = devices.DEVICES["h100"]


def analyze(rec):
    return profiling.analyze_run({"launches": [rec], "timing_meaningful": True}, H100)


def test_small_grid_leaves_sms_idle():
    args = [tensor("x", [1 << 20]), tensor("y", [1 << 20], written=True)]
    report = analyze(record([16, 1, 1], 0.5, args))
    assert "TL203" in codes(report)
    f = next(f for f in report.findings if f.code == "TL203")
    assert "116 stay idle" in f.message and f.data["programs"] == 16


def test_wave_tail():
    # 132 SMs x 2 resident programs = 264 per wave; 290 programs = 1.10 waves
    args = [tensor("x", [1 << 22]), tensor("y", [1 << 22], written=True)]
    rec = record([290, 1, 1], 0.5, args, resources={"num_warps": 32, "n_regs": 32, "shared": 0})
    report = analyze(rec)
    la = report.launches[0]
    assert la.programs_per_sm == 2 and la.occupancy_limiter == "warps"
    assert la.waves == pytest.approx(290 / 264)
    assert "TL204" in codes(report)


def test_occupancy_limited_by_registers():
    per_sm, occ, limiter = profiling_launch.occupancy({"num_warps": 8, "n_regs": 255, "shared": 0}, H100)
    # 255 regs x 32 threads = 8160 -> 8192 per warp; 65536 / 8192 = 8 warps = one 8-warp program
    assert (per_sm, limiter) == (1, "registers") and occ == pytest.approx(8 / 64)
    per_sm, _, limiter = profiling_launch.occupancy({"num_warps": 4, "n_regs": 32, "shared": 100_000}, H100)
    assert (per_sm, limiter) == (2, "shared memory")


def test_many_tiny_launches():
    args = [tensor("x", [1024]), tensor("y", [1024], written=True)]
    report = analyze(record([1, 1, 1], 0.004, args, count=50))
    assert report.launches[0].bound == "latency"
    assert codes(report) == ["TL206"]


def test_matmul_flops_and_compute_bound():
    m = n = k = 4096
    args = [
        tensor("a", [m, k], "bfloat16", False, 2),
        tensor("b", [k, n], "bfloat16", False, 2),
        tensor("c", [m, n], "bfloat16", True, 2),
    ]
    flops = 2 * m * n * k
    slow = analyze(record([32, 32, 1], flops / 100e12 * 1e3, args, uses_dot=True))  # 100 TFLOP/s
    la = slow.launches[0]
    assert la.flops == flops and la.bound == "compute"
    assert la.achieved_tflops == pytest.approx(100.0)
    assert la.intensity == pytest.approx(flops / (3 * m * n * 2)) and la.intensity > la.ridge
    assert codes(slow) == ["TL209"]
    fast = analyze(record([32, 32, 1], flops / 900e12 * 1e3, args, uses_dot=True))
    assert codes(fast) == ["TL201"] and fast.stop_escalation


def test_footprint_without_snapshots_counts_each_tensor_once():
    read, written, known = profiling_launch.footprint(
        [tensor("x", [10]), tensor("y", [10]), {"kind": "int", "value": 3}]
    )
    assert (read, written, known) == (80, 0, False)


def test_report_is_json_serializable(h200):
    report = profiling.analyze_run(load("profile_transpose.json"), h200)
    text = json.dumps(report.to_dict())
    assert '"TL202"' in text and '"stop_escalation": false' in text


PERSISTENT_SOURCE = """
import triton
import triton.language as tl

@triton.jit
def k(x_ptr, y_ptr, n_tiles, BLOCK: tl.constexpr):
    for tile in tl.range(tl.program_id(0), n_tiles, tl.num_programs(0)):
        offs = tile * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))
"""


def test_persistent_kernel_gets_no_wave_tail_or_occupancy_verdict():
    # The same launch as test_wave_tail, but the kernel loops over tiles with a num_programs stride: a single
    # wave of few programs per SM is what a persistent kernel is built for.
    args = [tensor("x", [1 << 22]), tensor("y", [1 << 22], written=True)]
    rec = record([290, 1, 1], 0.5, args, resources={"num_warps": 32, "n_regs": 32, "shared": 0})
    run = {"launches": [rec], "timing_meaningful": True}
    report = profiling.analyze_run(run, H100, source=PERSISTENT_SOURCE, path="k.py")
    assert report.launches[0].persistent
    assert "TL204" not in codes(report) and "TL205" not in codes(report)
    assert any("persistent kernel" in note for note in report.launches[0].notes)
    plain = PERSISTENT_SOURCE.replace(
        "for tile in tl.range(tl.program_id(0), n_tiles, tl.num_programs(0)):", "for tile in range(1):"
    ).replace("tile * BLOCK", "tl.program_id(0) * BLOCK")
    assert "TL204" in codes(profiling.analyze_run(run, H100, source=plain, path="k.py"))


def test_launch_of_a_kernel_defined_in_another_file(h200):
    # A script calling a library's op: the launch's lines are the library file's, not the script's, so its
    # findings name that file and take their columns (and ncu lines) from it.
    result = load("profile_transpose.json")
    view = parse_source_csv((RUN1 / "ncu_transpose_source.csv").read_text())
    library = "/site/mylib/kb_copy.py"
    for rec in result["launches"]:
        rec["file"] = library
    script = "import torch\nfrom mylib.kb_copy import transpose\n\ntranspose(torch.randn(8192, 8192))\n"
    report = profiling.analyze_run(
        result, h200, source=script, path="/ws/bench.py", ncu=view, other_sources={library: KB_COPY.read_text()}
    )
    assert codes(report) == ["TL202", "TL207", "TL208"]
    assert {f.data.get("file") for f in report.findings} == {library}
    tl207 = report.findings[1]
    assert tl207.span.line == 31 and tl207.span.col == 8 and tl207.evidence[0].stage == "ncu"
    # The library's text unknown (a remote runner's path): same findings on the recorded lines (24: the
    # decorator's, as that older runner recorded it; only the text could move it to the def), no columns.
    bare = profiling.analyze_run(result, h200, source=script, path="/ws/bench.py", ncu=view)
    assert codes(bare) == codes(report) and [f.span.line for f in bare.findings] == [24, 31, 31]
    assert {f.data.get("file") for f in bare.findings} == {library}
