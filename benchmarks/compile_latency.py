"""Compile latency of the local runner at sm_90 (a benchmark, not a test).

For each example kernel (elementwise add, naive softmax, matmul) it measures:
  cold_fresh_worker  first compile on a new runner: worker start + compile + SASS (no warm-up: a worker
                     started for a waiting job skips it)
  cold_warm_worker   a compile that misses the cache on an already started, warmed-up worker
  cold_worker_cpu    CPU time the worker (and ptxas, nvdisasm) spent on that compile: what it costs on an
                     idle machine, whatever else is running
  cold_no_sass       the same with options["sass"] = False (no nvdisasm listing)
  warm_memory        a cache hit from the in-memory LRU (what the editor sees on a re-analysis)
  warm_disk          a cache hit read back from disk (new server process, same cache directory)
  analysis_warm      server.engine.diagnose.analyze_kernel end to end on a cached kernel (specialize, compile via the
                     runner, IR analysis), when the pipeline is installed

    .venv/bin/python benchmarks/compile_latency.py [--repeat 4]

Prints a table and writes benchmarks/results/compile_latency.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine import machine_info  # benchmarks/machine.py (this script's folder)

from tritonlens.ascend_runner.cache import ResultCache
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.protocol import CompileRequest

ROOT = Path(__file__).resolve().parent.parent
PTR_DIV = ["a_ptr", "b_ptr", "c_ptr", "x_ptr", "y_ptr", "output_ptr", "input_ptr"]
CASES: dict[str, dict[str, Any]] = {
    "elementwise": {
        "file": "examples/vector_add.py",
        "kernel": "add_kernel",
        "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"},
        "constants": {"BLOCK_SIZE": 1024},
        "options": {"num_warps": 4},
    },
    "softmax": {
        "file": "examples/naive_softmax.py",
        "kernel": "softmax_kernel",
        "signature": {
            "output_ptr": "*fp32",
            "input_ptr": "*fp32",
            "temperature_ptr": "*fp32",
            "input_row_stride": "i64",
            "output_row_stride": "i64",
            "n_cols": "i32",
        },
        "constants": {"BLOCK_SIZE": 128},
        "options": {"num_warps": 4},
    },
    "matmul": {
        "file": "examples/matmul.py",
        "kernel": "matmul_kernel",
        "signature": {
            "a_ptr": "*fp32",
            "b_ptr": "*fp32",
            "c_ptr": "*fp32",
            "M": "i32",
            "N": "i32",
            "K": "i32",
            "stride_am": "i32",
            "stride_bk": "i32",
            "stride_cm": "i32",
        },
        "constants": {
            "stride_ak": 1,
            "stride_bn": 1,
            "stride_cn": 1,
            "BLOCK_M": 128,
            "BLOCK_N": 128,
            "BLOCK_K": 32,
            "GROUP_M": 8,
        },
        "options": {"num_warps": 8, "num_stages": 3},
    },
    # The examples' matmul is fp32 with IEEE precision (FMA, no tensor cores): also time a tensor-core one.
    "matmul_fp16": {
        "file": "tests/runner/kernels/matmul.py",
        "kernel": "matmul_kernel",
        "signature": {
            "a_ptr": "*fp16",
            "b_ptr": "*fp16",
            "c_ptr": "*fp16",
            "M": "i32",
            "N": "i32",
            "K": "i32",
            "stride_am": "i32",
            "stride_bk": "i32",
            "stride_cm": "i32",
        },
        "constants": {
            "stride_ak": 1,
            "stride_bn": 1,
            "stride_cn": 1,
            "BLOCK_M": 128,
            "BLOCK_N": 128,
            "BLOCK_K": 64,
        },
        "options": {"num_warps": 8, "num_stages": 3},
    },
}


def make_request(name: str) -> CompileRequest:
    case = CASES[name]
    path = ROOT / case["file"]
    return CompileRequest(
        source=path.read_text(),
        path=str(path),
        kernel=case["kernel"],
        signature=dict(case["signature"]),
        constants=dict(case["constants"]),
        divisibility=[a for a in case["signature"] if a in PTR_DIV],
        target="sm_90",
        options=dict(case["options"]),
    )


def timed(fn: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000.0, out


def bench(name: str, repeat: int, scratch: Path) -> dict[str, Any]:
    req = make_request(name)
    row: dict[str, Any] = {}

    fresh: list[float] = []
    for i in range(max(1, repeat // 2)):
        with LocalRunner({"cache_dir": str(scratch / f"{name}-fresh-{i}")}) as runner:
            ms, result = timed(lambda r=runner: r.compile(req))
            assert result.ok and not result.cached, result.errors
            fresh.append(ms)
    row["cold_fresh_worker_ms"] = fresh

    with LocalRunner({"cache_dir": str(scratch / f"{name}-warm")}) as runner:
        runner.compile(make_request("elementwise"))  # start and warm the worker
        cold: list[float] = []
        cpu: list[float] = []
        for i in range(repeat):
            runner.cache = ResultCache(scratch / f"{name}-cold-{i}")
            ms, result = timed(lambda r=runner: r.compile(req))
            assert result.ok and not result.cached, result.errors
            cold.append(ms)
            cpu.append(float(result.metadata.get("cpu_seconds", 0.0)) * 1000.0)
        row["cold_warm_worker_ms"] = cold
        row["cold_worker_cpu_ms"] = cpu
        quick = make_request(name)
        quick.options["sass"] = False
        no_sass: list[float] = []
        for i in range(repeat):
            runner.cache = ResultCache(scratch / f"{name}-nosass-{i}")
            ms, result = timed(lambda r=runner: r.compile(quick))
            assert result.ok and "sass" not in result.stages, result.errors
            no_sass.append(ms)
        row["cold_no_sass_ms"] = no_sass
        row["stage_seconds"] = result.metadata.get("stage_seconds", {})
        row["registers"] = result.resources.get("registers")

        memory = [timed(lambda r=runner: r.compile(req))[0] for _ in range(repeat * 4)]
        row["warm_memory_ms"] = memory
        disk: list[float] = []
        for _ in range(repeat):
            runner.cache.clear_memory()
            ms, result = timed(lambda r=runner: r.compile(req))
            assert result.cached
            disk.append(ms)
        row["warm_disk_ms"] = disk

        try:
            from tritonlens.server.engine.diagnose import analyze_kernel
        except ImportError as exc:
            row["analysis_warm_ms"] = None
            row["analysis_note"] = f"pipeline not installed: {exc}"
        else:
            analyze_kernel(
                req.source, req.path, req.kernel, "sm_90", runner
            )  # fills the cache for its variants
            analysis = [
                timed(lambda r=runner: analyze_kernel(req.source, req.path, req.kernel, "sm_90", r))[0]
                for _ in range(repeat * 2)
            ]
            row["analysis_warm_ms"] = analysis
    return row


def med(values: list[float] | None) -> float | None:
    return statistics.median(values) if values else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--kernels", nargs="*", default=list(CASES))
    args = parser.parse_args()
    rows: dict[str, dict[str, Any]] = {}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="tritonlens-bench-") as scratch:
        for name in args.kernels:
            rows[name] = bench(name, args.repeat, Path(scratch))
    cols = (
        "cold_fresh_worker_ms",
        "cold_warm_worker_ms",
        "cold_worker_cpu_ms",
        "cold_no_sass_ms",
        "warm_memory_ms",
        "warm_disk_ms",
        "analysis_warm_ms",
    )
    print(f"load average {load_before[0]:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'kernel (sm_90)':<14}" + "".join(f"{c.replace('_ms', ''):>20}" for c in cols) + "   (median ms)")
    for name, row in rows.items():
        cells = []
        for c in cols:
            m = med(row.get(c))
            cells.append(f"{m:>20.2f}" if m is not None else f"{'n/a':>20}")
        print(f"{name:<14}" + "".join(cells))
    out = {
        "machine": machine_info(load_before),
        "target": "sm_90",
        "repeat": args.repeat,
        "kernels": rows,
        "medians_ms": {name: {c: med(row.get(c)) for c in cols} for name, row in rows.items()},
    }
    results = ROOT / "benchmarks" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "compile_latency.json").write_text(json.dumps(out, indent=2))
    print(f"wrote {results / 'compile_latency.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
