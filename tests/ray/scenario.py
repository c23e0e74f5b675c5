"""Runs INSIDE a private local Ray cluster (tritonlens-runner ray-local): exercises the RayRunner and writes
what it saw as JSON to argv[1]. tests/ray/test_ray_runner.py starts it and asserts on that file."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import ray
from tritonlens.ascend_runner.factory import get_runner
from tritonlens.ascend_runner.protocol import CompileRequest

HERE = Path(__file__).resolve().parent
SLOW = str(HERE / "slow_script.py")
KERNEL = """
import triton
import triton.language as tl

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
"""


def slow_run_payload() -> dict:
    return {"harness": {"mode": "script", "path": SLOW}, "time_launches": False}


def interfaces() -> list[str]:
    """Network interfaces of this namespace (/proc/net is per namespace; /sys/class/net may be the host's)."""
    lines = Path("/proc/net/dev").read_text().splitlines()[2:]
    return sorted(line.split(":")[0].strip() for line in lines)


def listening_sockets() -> list[str]:
    """Local addresses of TCP sockets listening in this (private) network namespace."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":  # LISTEN
                found.append(fields[1])
    return found


def runner_actor_processes() -> int:
    """Live processes Ray titled after the actor class (`ray::RunnerActor...`)."""
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        count += b"ray::RunnerActor" in title
    return count


def main(out_path: str) -> None:
    seen: dict = {"interfaces": interfaces()}
    runner = get_runner({"address": "ray:auto", "runner": {"cache": False}})
    seen["health"] = runner.health()
    gpu_nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"] and n["Resources"].get("GPU")}

    # Placement: a compile job runs on a CPU actor; a cuda job only on a node that has a GPU.
    req = CompileRequest(
        source=KERNEL, path="/tmp/add.py", kernel="add_kernel", target="sm_90",
        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        constants={"BLOCK": 1024},
    )
    compiled = runner.compile(req, timeout_s=240)
    seen["compile_ok"] = compiled.ok
    seen["compile_errors"] = [e.message[:300] for e in compiled.errors]
    cuda = runner.run("cuda", slow_run_payload(), timeout_s=120)
    seen["cuda_job_node_has_gpu"] = cuda["ray"].get("node_id") in gpu_nodes
    seen["cuda_job_shape"] = cuda["ray"]["shape"]

    # An actor killed mid-job: the job is retried on a fresh actor, and reported.
    results: dict = {}

    def slow(name: str, cancel: threading.Event | None = None) -> None:
        results[name] = runner.run("interpret", slow_run_payload(), cancel=cancel, timeout_s=120)

    worker = threading.Thread(target=slow, args=("killed",))
    worker.start()
    deadline = time.monotonic() + 60
    victims: list = []
    while time.monotonic() < deadline and not victims:
        victims = [a for a in runner.actors() if a["shape"] == "cpu"]
        time.sleep(0.1)
    time.sleep(1.0)
    os.kill(victims[0]["pid"], signal.SIGKILL)
    worker.join(180)
    killed = results["killed"]
    seen["killed_ok"] = bool(killed.get("ok"))
    seen["killed_attempts"] = len(killed["ray"].get("attempts", []))
    seen["killed_victim_pid"] = victims[0]["pid"]
    seen["killed_final_pid"] = killed["ray"].get("pid")

    # Cancellation: the job returns promptly as cancelled.
    cancel = threading.Event()
    worker = threading.Thread(target=slow, args=("cancelled", cancel))
    started = time.monotonic()
    worker.start()
    time.sleep(1.5)
    cancel.set()
    worker.join(60)
    seen["cancel_s"] = round(time.monotonic() - started, 2)
    seen["cancel_reason"] = (results["cancelled"].get("error") or {}).get("reason")

    runner.close()
    time.sleep(2.0)
    seen["actors_left"] = runner_actor_processes()
    seen["hostname"] = socket.gethostname()
    seen["listening"] = listening_sockets()
    Path(out_path).write_text(json.dumps(seen, indent=1, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
    sys.exit(0)
