"""FLOP-aware roofline: FLOPs from the recorded TTIR, FMA vs tensor-core ceilings, TL210 and TL211."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonlens.analysis.core import devices
from tritonlens.analysis.profile import analyze as profiling

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MEASURED = {"copy_gbps": 4225.2, "bf16_tflops": 686.7}  # benchmarks/gpu/results/run2 on the lent H200


@pytest.fixture(scope="module")
def h200():
    return devices.from_runner({"name": "NVIDIA H200", "sm_count": 132}, MEASURED)


def tensor(name: str, shape: list[int], written: bool | None = None) -> dict:
    out = {
        "name": name,
        "kind": "tensor",
        "dtype": "float16",
        "shape": shape,
        "nbytes": 2 * shape[0] * shape[1],
    }
    if written is not None:
        out["written"] = written
    return out


def matmul_record(ttir: str, tile: int, time_ms: float) -> dict:
    n = 4096
    ints = [{"name": k, "kind": "int", "value": n} for k in ("M", "N", "K")]
    return {
        "kernel": "matmul_kernel", "file": "matmul.py", "line": 1, "grid": [n // tile, n // tile, 1],
        "args": [tensor("a_ptr", [n, n], False), tensor("b_ptr", [n, n], False), tensor("c_ptr", [n, n], True),
                 *ints],
        "time_ms": {"median": time_ms}, "resources": {"num_warps": 4}, "uses_dot": False, "ttir": ttir,
    }  # fmt: skip


def run(h200, *records: dict) -> profiling.ProfileReport:
    return profiling.analyze_run({"launches": list(records), "timing_meaningful": True}, h200)


def test_scalar_k_matmul_is_compute_bound_without_tensor_cores(h200):
    ttir = (FIXTURES / "flops" / "matmul_rank1.ttir").read_text()
    report = run(h200, matmul_record(ttir, 32, 40.0))
    (la,) = report.launches
    assert la.flop_source == "ir" and la.flops == 2 * 4096**3
    assert la.tensor_cores is False and la.matmul_without_dot
    assert la.bound == "compute" and la.intensity > la.ridge
    assert la.flop_ceiling.startswith("67 TFLOP/s")  # the fp32 FMA rate, not the matrix rate
    codes = [f.code for f in report.findings]
    assert "TL210" in codes and "TL202" not in codes and "TL209" not in codes
    tl210 = next(f for f in report.findings if f.code == "TL210")
    assert "compute-bound without tensor cores" in tl210.message
    # Gain against the measured bf16 tensor-core ceiling: 40 ms vs 2*4096^3 / 686.7 TFLOP/s = 0.2 ms.
    assert tl210.data["tensor_core_floor_ms"] == pytest.approx(2 * 4096**3 / 686.7e12 * 1e3)
    assert "measured" in tl210.estimated_gain
    assert not la.near_roofline


def test_dot_matmul_runs_against_the_matrix_ceiling(h200):
    ttir = (FIXTURES / "cuda" / "matmul_fp16" / "ttir").read_text()
    (la,) = run(h200, matmul_record(ttir, 128, 0.25)).launches
    assert la.tensor_cores is True and not la.matmul_without_dot
    assert la.flops == 2 * 4096**3
    assert "989" in la.flop_ceiling  # fp16 dots: the datasheet fp16 rate (only bf16 was measured)
    assert la.bound == "compute"


def test_many_tiny_programs_are_named_with_the_numbers(h200):
    n = 1 << 25
    rec = {
        "kernel": "add", "file": "add.py", "line": 1, "grid": [n // 128, 1, 1],
        "args": [{"name": "x", "kind": "tensor", "dtype": "float32", "shape": [n], "nbytes": 4 * n, "written": False},
                 {"name": "y", "kind": "tensor", "dtype": "float32", "shape": [n], "nbytes": 4 * n, "written": True}],
        "time_ms": {"median": 0.2}, "resources": {"num_warps": 4},
    }  # fmt: skip
    report = run(h200, rec)
    (f,) = [f for f in report.findings if f.code == "TL211"]
    assert f.data["programs"] == n // 128 and f.data["bytes_per_program"] == 1024
    assert "262,144 programs" in f.message and "1,024 bytes" in f.message
    bigger = {**rec, "grid": [n // 4096, 1, 1]}
    assert not [f for f in run(h200, bigger).findings if f.code == "TL211"]


def test_ncu_fp32_instruction_counts_give_the_flops_when_there_is_no_ir():
    import json

    run2 = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu" / "results" / "run2"
    result = json.loads((run2 / "profile_add.json").read_text())
    result.setdefault("ncu", {})["details"] = (run2 / "ncu_add_details.txt").read_text()
    spec = devices.from_runner(result["device"], result.get("ceilings"))
    (la,) = profiling.analyze_run(result, spec).launches
    # vector add of 2**26 fp32 elements: 2,097,152 non-fused FP32 warp instructions x 32 lanes
    assert la.flop_source == "ncu" and la.flops == 2**26
    assert la.bound == "memory" and la.intensity < la.ridge
