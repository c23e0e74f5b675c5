"""Dispatch overhead of one job: local runner (worker subprocess) vs the remote runner service on loopback.

The job is a compile request naming a kernel the source does not define: the worker answers at once, so the
time measured is the round trip (client -> [HTTP service ->] pool -> worker -> back), not compilation.
Run: .venv/bin/python benchmarks/dispatch_overhead.py [--jobs 200]
Writes benchmarks/results/dispatch_overhead.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import socket
import statistics
import threading
import time
import uuid
from pathlib import Path

import uvicorn

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.protocol import CompileRequest, new_job
from tritonlens.ascend_runner.remote_client import RemoteRunner
from tritonlens.ascend_runner.remote_server import ServerConfig, create_app

TOKEN = uuid.uuid4().hex
OUT = Path(__file__).resolve().parent / "results" / "dispatch_overhead.json"


def job() -> dict:
    req = CompileRequest(
        source="x = 1\n", path="bench.py", kernel="missing_kernel", signature={}, target="sm_90"
    )
    return new_job("compile", "cuda", req)


def measure(submit, jobs: int) -> dict[str, float]:
    for _ in range(5):  # warm the worker and connections
        submit(job())
    times = []
    for _ in range(jobs):
        started = time.perf_counter()
        reply = submit(job())
        times.append((time.perf_counter() - started) * 1000)
        assert reply.get("ok") is not None, reply
    times.sort()
    return {
        "jobs": jobs,
        "p50_ms": statistics.median(times),
        "p95_ms": times[int(0.95 * (len(times) - 1))],
        "mean_ms": statistics.fmean(times),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=200)
    args = parser.parse_args()
    local = LocalRunner({"cache": False})
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(ServerConfig(token=TOKEN), local), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    remote = RemoteRunner(f"http://127.0.0.1:{port}", TOKEN)
    results = {
        "local": measure(local.submit, args.jobs),
        "remote_loopback": measure(remote.submit, args.jobs),
    }
    results["machine"] = {
        "cpu_count": __import__("os").cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    server.should_exit = True
    local.close()
    print(f"{'runner':<18}{'p50 ms':>10}{'p95 ms':>10}{'mean ms':>10}")
    for name in ("local", "remote_loopback"):
        r = results[name]
        print(f"{name:<18}{r['p50_ms']:>10.2f}{r['p95_ms']:>10.2f}{r['mean_ms']:>10.2f}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(results, indent=2))
    print(f"saved {OUT}")


if __name__ == "__main__":
    main()
