"""Measured ceilings are requested when none are cached for a runner and backend, then cached atomically."""

from __future__ import annotations

import json

import pytest

from tritonlens.analysis.core import devices
from tritonlens.server.engine.profile import ceilings as ceilings_cache

H200_RUN2 = {"copy_gbps": 4225.2, "bf16_tflops": 686.7}


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONLENS_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_measures_once_per_runner_and_backend(cache_dir):
    assert ceilings_cache.needs_measuring("local cuda", "cuda")
    assert not ceilings_cache.needs_measuring("local cuda", "interpret")  # nothing to measure on the CPU
    ceilings_cache.save("NVIDIA H200", H200_RUN2, "local cuda", "cuda")
    assert not ceilings_cache.needs_measuring("local cuda", "cuda")
    assert ceilings_cache.needs_measuring("https://runner.example", "cuda")  # another runner measures its own
    assert ceilings_cache.load("NVIDIA H200") == H200_RUN2
    assert not list(cache_dir.glob(".ceilings.*"))  # the temporary file was renamed, not left behind


def test_reads_the_older_flat_table(cache_dir):
    (cache_dir / "ceilings.json").write_text(json.dumps({"NVIDIA H200": H200_RUN2}))
    assert ceilings_cache.load("NVIDIA H200") == H200_RUN2
    ceilings_cache.save("NVIDIA H100", {"copy_gbps": 3000.0}, "local cuda", "cuda")
    assert ceilings_cache.load("NVIDIA H200") == H200_RUN2  # kept on rewrite


def test_a_corrupt_cache_means_measure_again(cache_dir):
    (cache_dir / "ceilings.json").write_text("{not json")
    assert ceilings_cache.needs_measuring("local cuda", "cuda")
    assert ceilings_cache.load("NVIDIA H200") is None


def test_measured_ceilings_replace_the_datasheet_and_show_both():
    spec = devices.from_runner({"name": "NVIDIA H200"}, H200_RUN2)
    label = spec.memory_bandwidth.label()
    assert spec.memory_bandwidth.value == 4225.2 and "measured" in label and "datasheet 4,800 GB/s" in label
    assert "datasheet 989 TFLOP/s" in spec.rates["bf16"].label()


def test_default_h200_bandwidth_says_it_is_the_datasheet_and_what_was_measured():
    label = devices.from_runner({"name": "NVIDIA H200"}).memory_bandwidth.label()
    assert label.startswith("4,800 GB/s (datasheet") and "4,225 GB/s" in label
