"""`tritonlens bench --runner ray:auto` inside a private local Ray cluster (`tritonlens-runner ray-local`), on the
interpret backend: the tasks are spread over the pool and the report says each is correct and untimed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tritonlens.ascend_runner.ray_cluster import isolation_prefix

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TASKS = ("bench/scan/cumsum.py", "bench/activation/silu.py")


@pytest.mark.slow
@pytest.mark.cuda_env
def test_bench_on_a_private_local_ray_cluster(tmp_path):
    pytest.importorskip("ray")
    if not (ROOT / ".envs" / "cuda" / "bin" / "python").exists():
        pytest.skip("cuda runner env (.envs/cuda) not installed")
    if isolation_prefix() is None or shutil.which("ss") is None:
        pytest.skip("no private network namespace can be made here (needs root or user namespaces)")
    report = tmp_path / "report"
    command = [
        str(BIN / "tritonlens-runner"), "ray-local", "--nodes", "2", "--cpus-per-node", "1", "--",
        str(BIN / "tritonlens"), "bench", *(str(ROOT / t) for t in TASKS), "--runner", "ray:auto",
        "--backend", "interpret", "--budget", "candidates=1,rounds=1", "--no-config-search", "--no-torch-compile",
        "--report", str(report),
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    data = json.loads((report / "bench-report.json").read_text())
    assert sorted(Path(t["task"]).name for t in data["tasks"]) == sorted(Path(t).name for t in TASKS)
    for task in data["tasks"]:
        assert task["status"] == "done", task
        assert task["baseline"]["correct"] and task["baseline"]["unseen_correct"], task
        assert not task["timing_meaningful"]  # interpret: nothing is claimed faster
    assert data["summary"]["timed"] == 0
