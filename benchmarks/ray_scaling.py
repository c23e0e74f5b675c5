"""Bench throughput on a Ray runner pool of 1 vs 2 worker nodes (a benchmark, not a test).

For each pool size N, starts a private local cluster (`tritonlens-runner ray-local --nodes N --cpus-per-node 1`)
and runs, inside it, `tritonlens bench TASKS --runner ray:auto --jobs N --backend interpret` with a small fixed
budget on a fixed set of tasks. Only the bench command is timed (cluster start-up is not): tasks/minute =
tasks / bench wall time. The interpret backend runs kernels on the CPU, so this measures how the pool spreads
work (compile-free verification and the rewrite loop's CPU work), not GPU speed.

    .venv/bin/python benchmarks/ray_scaling.py [--nodes 1 2] [--tasks bench/a.py ...] [--out FILE]

Prints a table and writes benchmarks/results/ray_scaling.json (or --out). The pool sizes run in the order given:
run both orders to see how much the first run pays for cold caches.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
RESULTS = ROOT / "benchmarks" / "results" / "ray_scaling.json"
TASKS = [
    "bench/activation/silu.py",
    "bench/activation/relu.py",
    "bench/reduction/row_max.py",
    "bench/softmax/log_softmax.py",
    "bench/loss/mse.py",
    "bench/pooling/avgpool2d.py",
]
BENCH_ARGS = ["--backend", "interpret", "--budget", "candidates=1,rounds=1", "--no-config-search",
              "--no-torch-compile"]


def inner(out: Path, jobs: int, tasks: list[str]) -> int:
    """Runs inside the cluster: time the bench command alone."""
    with tempfile.TemporaryDirectory(prefix="tl-ray-scaling-") as report:
        command = [str(BIN / "tritonlens"), "bench", *tasks, "--runner", "ray:auto", "--jobs", str(jobs),
                   *BENCH_ARGS, "--report", report]
        started = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True)
        elapsed = time.perf_counter() - started
        data = json.loads((Path(report) / "bench-report.json").read_text()) if proc.returncode == 0 else {}
    done = [t for t in data.get("tasks", []) if t.get("status") == "done"]
    out.write_text(json.dumps({"rc": proc.returncode, "seconds": elapsed, "tasks": len(tasks), "done": len(done),
                               "stderr_tail": proc.stderr[-2000:] if proc.returncode else ""}))
    return proc.returncode


def measure(nodes: int, tasks: list[str]) -> dict:
    with tempfile.TemporaryDirectory(prefix="tl-ray-scaling-out-") as tmp:
        out = Path(tmp) / "inner.json"
        command = [str(BIN / "tritonlens-runner"), "ray-local", "--nodes", str(nodes), "--cpus-per-node", "1", "--",
                   sys.executable, __file__, "--inner", str(out), "--jobs", str(nodes), "--tasks", *tasks]
        started = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True)
        total = time.perf_counter() - started
        if not out.exists():
            raise SystemExit(f"ray-local with {nodes} node(s) failed:\n{(proc.stdout + proc.stderr)[-3000:]}")
        row = json.loads(out.read_text())
    if row["rc"] != 0:
        raise SystemExit(f"bench failed on {nodes} node(s):\n{row['stderr_tail']}")
    row.update(nodes=nodes, jobs=nodes, with_cluster_start_s=round(total, 1),
               tasks_per_minute=round(60 * row["done"] / row["seconds"], 2), seconds=round(row["seconds"], 1))
    row.pop("stderr_tail", None)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--tasks", nargs="+", default=TASKS)
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the JSON goes")
    parser.add_argument("--inner", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--jobs", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    tasks = [str(ROOT / t) if not os.path.isabs(t) else t for t in args.tasks]
    if args.inner:
        return inner(args.inner, args.jobs, tasks)
    rows = [measure(n, tasks) for n in args.nodes]
    print(f"{'nodes':>5} {'jobs':>4} {'tasks':>5} {'bench s':>8} {'tasks/min':>9} {'incl. cluster start s':>22}")
    for r in rows:
        print(f"{r['nodes']:>5} {r['jobs']:>4} {r['done']:>5} {r['seconds']:>8} {r['tasks_per_minute']:>9} "
              f"{r['with_cluster_start_s']:>22}")
    machine = {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
               "load_avg_at_end": os.getloadavg()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine, "bench_args": BENCH_ARGS,
                                   "tasks": [os.path.relpath(t, ROOT) for t in tasks], "runs": rows}, indent=2) + "\n")
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
