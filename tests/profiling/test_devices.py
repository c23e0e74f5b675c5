"""The device table: name matching, measured ceilings replacing datasheet ones, labels."""

from __future__ import annotations

from tritonlens.analysis.core import devices


def test_lookup_by_reported_name():
    assert devices.lookup("NVIDIA H200").key == "h200"
    assert devices.lookup("NVIDIA H100 80GB HBM3").key == "h100"
    assert devices.lookup("Ascend910B3").key == "ascend910b"
    assert devices.lookup("Ascend 950PR").key == "ascend950"
    assert devices.lookup("NVIDIA A100-SXM4-80GB") is None
    assert devices.lookup(None) is None


def test_every_ceiling_says_where_it_comes_from():
    for spec in devices.DEVICES.values():
        ceilings = [spec.memory_bandwidth, *spec.rates.values()]
        assert all(c.source in ("datasheet", "announced", "measured") for c in ceilings), spec.key
    assert devices.DEVICES["ascend950"].memory_bandwidth.source == "announced"


def test_measured_ceilings_and_runner_counts_replace_the_table():
    reported = {"name": "NVIDIA H200", "sm_count": 132, "regs_per_sm": 65536, "smem_per_sm": 233472}
    spec = devices.from_runner(reported, {"copy_gbps": 4221.7, "bf16_tflops": 678.9})
    assert spec.memory_bandwidth.source == "measured" and spec.memory_bandwidth.value == 4221.7
    assert spec.rates["bf16"].source == "measured" and spec.rates["fp16"].source == "datasheet"
    assert spec.rate("bfloat16").value == 678.9 and spec.rate("float32").value == 495  # tf32
    assert "measured" in spec.memory_bandwidth.label()


def test_unknown_device_with_measurements_still_analyzable():
    spec = devices.from_runner({"name": "Future GPU", "sm_count": 200}, {"copy_gbps": 9000.0})
    assert spec is not None and spec.compute_units == 200 and spec.memory_bandwidth.value == 9000.0
    assert devices.from_runner({"name": "Future GPU"}) is None


def test_ascend_counts_from_the_runner():
    spec = devices.from_runner({"name": "Ascend910B2", "ai_cores": 24, "vector_cores": 48})
    assert (spec.compute_units, spec.vector_units, spec.vendor) == (24, 48, "huawei")
