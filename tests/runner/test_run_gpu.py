"""run / replay / verify on the `cuda` backend, on a real NVIDIA GPU (marked gpu: skipped cleanly without one).

Run on the lent H200 by benchmarks/gpu/run_h200.sh with TRITONLENS_CUDA_PYTHON=python3."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tritonlens.ascend_runner import protocol

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "ascend_runner" / "worker" / "run_job.py"
KB_ADD = str(ROOT / "tests" / "fixtures" / "run" / "kb_add.py")


def _python() -> str | None:
    explicit = os.environ.get("TRITONLENS_CUDA_PYTHON")
    if explicit:
        return explicit
    candidate = ROOT / ".envs" / "cuda" / "bin" / "python"
    return str(candidate) if candidate.exists() else None


def _has_gpu(python: str | None) -> bool:
    if python is None:
        return False
    probe = subprocess.run(
        [python, "-c", "import torch; print(torch.cuda.is_available())"], capture_output=True, text=True
    )
    return probe.stdout.strip() == "True"


PYTHON = _python()
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not _has_gpu(PYTHON), reason="no CUDA GPU visible to the cuda env"),
]


def job(kind: str, payload: dict) -> dict:
    proc = subprocess.run(
        [PYTHON, str(WORKER), kind, "cuda"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.stdout.strip(), proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_compiled_launch_recorded_timed_and_replayed(tmp_path):
    raw = job(
        "profile",
        {
            "harness": {"mode": "kernelbench", "path": KB_ADD},
            "snapshot": True,
            "artifacts_dir": str(tmp_path),
        },
    )
    assert raw["ok"], raw["errors"]
    result = protocol.run_result_from(raw)
    assert result.timing_meaningful and result.device["sm_count"] > 0
    (launch,) = result.launches
    assert launch.grid == [4, 1, 1] and launch.constants == {"BLOCK": 1024}
    assert launch.resources["n_regs"] > 0 and launch.resources["num_warps"] == 4
    assert sorted(launch.divisibility) == ["n_elements", "out_ptr", "x_ptr", "y_ptr"]
    assert 0 < launch.time_ms["median"] < 1.0
    assert result.timings["model_ms"]["median"] > 0 and result.timings["reference_ms"]["median"] > 0
    replay = job(
        "run", {"harness": {"mode": "kernelbench", "path": KB_ADD}, "replay": {"snapshot": launch.snapshot}}
    )
    assert replay["ok"] and replay["replay"]["passed"], replay
    assert replay["launches"][0]["time_ms"]["median"] > 0


@pytest.mark.parametrize(
    ("candidate", "passed"), [("ModelNew", True), ("ModelHalfWritten", False), ("ModelScaled", False)]
)
def test_verify_on_gpu(candidate, passed):
    raw = job(
        "verify",
        {"harness": {"mode": "kernelbench", "path": KB_ADD}, "candidate": candidate, "seeds": [0, 1, 2]},
    )
    assert raw["ok"], raw["errors"]
    assert raw["passed"] is passed
    if passed:
        assert raw["speedup"] is not None and raw["candidate_ms"] > 0
