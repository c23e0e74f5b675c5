"""The Ray runner pool against a real local Ray cluster (head + a CPU node + a node with a declared GPU) that
`tritonlens-runner ray-local` starts in a private network and PID namespace; jobs on the interpret backend.

The cluster run is one scenario (tests/ray/scenario.py, executed inside the cluster) because starting Ray costs
tens of seconds; this module asserts on what it wrote, and checks from outside that no Ray process listens in
this machine's own network namespace and none is left afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tritonlens.ascend_runner.fanout import in_order, parallelism
from tritonlens.ascend_runner.ray_cluster import NodeSpec, isolation_prefix
from tritonlens.ascend_runner.ray_pool import (
    CPU,
    GPU,
    NPU,
    RayUnavailable,
    connect,
    is_ray_address,
    shape_for,
)

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
RAY_PROCESSES = ("gcs_server", "raylet", "ray::")


def test_placement_by_resources():
    assert shape_for("compile", "cuda") == CPU
    assert shape_for("run", "interpret") == CPU
    assert shape_for("profile", "cuda") == GPU and GPU.actor_options()["num_gpus"] == 1
    assert shape_for("verify", "npu") == NPU and NPU.actor_options()["resources"] == {"NPU": 1}


def test_addresses():
    assert is_ray_address("ray://10.0.0.1:10001") and is_ray_address("ray:auto")
    assert not is_ray_address("http://127.0.0.1:8642") and not is_ray_address("local")


def test_node_spec_parsing():
    assert NodeSpec.parse("cpus=2,gpus=1") == NodeSpec(cpus=2, gpus=1, npus=0)
    with pytest.raises(ValueError, match="cpus=N"):
        NodeSpec.parse("gpu=1")


def test_no_token_is_refused_before_connecting(monkeypatch, tmp_path):
    pytest.importorskip("ray")
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(tmp_path / "absent"))
    with pytest.raises(RayUnavailable, match="token"):
        connect("ray:auto")
    assert os.environ["RAY_USAGE_STATS_ENABLED"] == "0" and os.environ["RAY_AUTH_MODE"] == "token"


def test_in_order_yields_in_submission_order_while_running_in_parallel():
    done: list[tuple[int, int]] = []

    def call(i: int, delay: float):
        return lambda: (time.sleep(delay), i)[1]

    calls = [call(0, 0.3), call(1, 0.0), call(2, 0.1)]
    assert list(in_order(calls, 3, on_done=lambda n, total: done.append((n, total)))) == [0, 1, 2]
    assert done[-1] == (3, 3)
    assert parallelism(object()) == 1


def _host_ray_listeners() -> list[str]:
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if any(name in line for name in RAY_PROCESSES)]


def _leftover_ray_processes() -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "tl-ray-" in line]


@pytest.mark.slow
def test_pool_on_a_private_local_cluster(tmp_path):
    pytest.importorskip("ray")
    if isolation_prefix() is None:
        pytest.skip("no private network namespace can be made here (needs root or user namespaces)")
    if shutil.which("ss") is None:
        pytest.skip("ss (iproute2) is needed to check listening sockets")
    out = tmp_path / "seen.json"
    command = [
        str(BIN / "tritonlens-runner"), "ray-local", "--node", "cpus=1", "--node", "cpus=1,gpus=1",
        "--", sys.executable, str(ROOT / "tests" / "ray" / "scenario.py"), str(out),
    ]
    host_listeners: list[str] = []
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    stop = threading.Event()

    def watch() -> None:  # while the cluster is up, nothing of Ray may listen in this machine's namespace
        while not stop.is_set():
            host_listeners.extend(_host_ray_listeners())
            stop.wait(2.0)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        output, _ = proc.communicate(timeout=600)
    finally:
        stop.set()
        watcher.join()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, output[-4000:]
    seen = json.loads(out.read_text())
    assert seen["interfaces"] == ["lo"]
    assert seen["listening"] and all("0100007F" in addr for addr in seen["listening"]), seen["listening"]
    assert not host_listeners, host_listeners
    assert seen["health"]["nodes"] == 3 and seen["health"]["resources"]["GPU"] == 1
    assert seen["compile_ok"], seen["compile_errors"]
    assert seen["cuda_job_shape"] == "gpu" and seen["cuda_job_node_has_gpu"]
    # The killed actor's job ran again on another actor, once, and says so.
    assert seen["killed_ok"] and seen["killed_attempts"] == 1
    assert seen["killed_final_pid"] != seen["killed_victim_pid"]
    assert seen["cancel_reason"] == "cancelled" and seen["cancel_s"] < 15
    assert seen["actors_left"] == 0
    time.sleep(1.0)
    assert not _leftover_ray_processes()
