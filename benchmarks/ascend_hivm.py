"""The Ascend hivm stage (BiSheng's pipeline on the CPU): coverage and latency (a benchmark, not a test).

Two sets of kernels, each for Ascend910B3 (`bishengir-compile`) and Ascend950 (`bishengir-compile-a5`):
- tritonlens' Ascend test kernels (tests/ascend/kernels, the fixture generators' specializations);
- the Ascend tutorials of triton-ascend (third_party/ascend/tutorials/*.py), read from a git checkout of
  triton-lang/triton-ascend (`--tutorials-git DIR`; never copied into this repository: the commit and paths
  are in benchmarks/ascend_tutorials_manifest.json), specialized the way `tritonlens check --level ir` does.

Coverage: of the kernels whose compile reaches ttadapter, how many the hivm stage runs for, i.e. bishengir-compile
goes through the whole pipeline to the external hivmc step ("hivmc-missing": no CANN here, so no device binary
and no timing) or stops on the kernel with its own diagnosis (e.g. a UB overflow); the rest (timeouts, crashes)
are listed with their messages.
Latency (test kernels, ascend910b3): `cold` = a compile that misses the cache on a started worker (ttir ->
ttadapter -> hivm); `cold_fresh_worker` includes starting the worker; `warm_memory` / `warm_disk` = cache hits.

    .venv/bin/python benchmarks/ascend_hivm.py [--repeat 3] [--tutorials-git /work/.mirror/triton-lang+triton-ascend/repo]

Prints tables and writes benchmarks/results/ascend_hivm.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
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
FIXTURES = ROOT / "tests" / "fixtures" / "ascend"
MANIFEST = ROOT / "benchmarks" / "ascend_tutorials_manifest.json"
TARGETS = ("ascend910b3", "ascend950")
RAN = ("hivmc-missing", "binary", "failed")  # the pipeline ran on the kernel (to hivmc, or to its own error)


def test_requests() -> dict[str, dict[str, Any]]:
    sys.path.insert(0, str(FIXTURES))
    import generate  # the fixture tables: one place for the test kernels' specializations
    import generate_hivm

    cases = {**generate.CASES, **generate_hivm.EXTRA}
    cases.pop("broken", None)  # a kernel that must not compile (front-end error test)
    return {name: generate.request_for(case) for name, case in cases.items()}


def timed(fn: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000.0, out


def hivm_info(metadata: dict[str, Any]) -> dict[str, Any]:
    info = metadata.get("hivm")
    return info if isinstance(info, dict) else {}


def bench_test_kernels(repeat: int, scratch: Path) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    requests = test_requests()
    first = next(iter(requests.values()))
    fresh: list[float] = []
    for i in range(repeat):
        with LocalRunner({"cache_dir": str(scratch / f"fresh-{i}")}) as runner:
            ms, result = timed(lambda r=runner: r.compile(CompileRequest(**first)))
            fresh.append(ms)
    with LocalRunner({"cache_dir": str(scratch / "warmup")}) as runner:
        runner.compile(CompileRequest(**first))  # start and warm the worker
        for target in TARGETS:
            for name, raw in requests.items():
                req = CompileRequest(**{**raw, "target": target})
                row: dict[str, Any] = {"cold_ms": [], "hivm_s": [], "cold_cpu_s": [], "hivm_cpu_s": []}
                for i in range(repeat if target == "ascend910b3" else 1):
                    runner.cache = ResultCache(scratch / f"{target}-{name}-{i}")
                    ms, result = timed(lambda r=runner, q=req: r.compile(q))
                    row["cold_ms"].append(ms)
                    row["hivm_s"].append(hivm_info(result.metadata).get("elapsed_s"))
                    row["hivm_cpu_s"].append(hivm_info(result.metadata).get("cpu_s"))
                    row["cold_cpu_s"].append(result.metadata.get("cpu_seconds"))
                row["reached_ttadapter"] = "ttadapter" in result.stages
                row["hivm_status"] = hivm_info(result.metadata).get("status")
                row["hivm_stages"] = sorted(s for s in result.stages if s.startswith("hivm"))
                if target == "ascend910b3":
                    row["warm_memory_ms"] = [
                        timed(lambda r=runner, q=req: r.compile(q))[0] for _ in range(repeat * 3)
                    ]
                    disk: list[float] = []
                    for _ in range(repeat):
                        runner.cache.clear_memory()
                        ms, hit = timed(lambda r=runner, q=req: r.compile(q))
                        assert hit.cached
                        disk.append(ms)
                    row["warm_disk_ms"] = disk
                rows[f"{name}@{target}"] = row
    return {"cold_fresh_worker_ms": fresh, "kernels": rows}


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=True
    ).stdout


def extract_tutorials(git_dir: Path, dest: Path, manifest: dict[str, Any]) -> list[str]:
    """The tutorials of the manifest's commit, written to `dest` (a scratch folder; never into the repository)."""
    commit = manifest["commit"]
    names = _git(git_dir, "ls-tree", "--name-only", commit, manifest["folder"] + "/").split()
    paths = sorted(n for n in names if n.endswith(".py"))
    for p in paths:
        (dest / Path(p).name).write_text(_git(git_dir, "show", f"{commit}:{p}"))
    return paths


def bench_tutorials(git_dir: Path, scratch: Path) -> dict[str, Any]:
    from tritonlens.server.engine.diagnose import analyze_kernel, launchable_kernels

    folder = scratch / "tutorials"
    folder.mkdir()
    manifest = json.loads(MANIFEST.read_text())
    paths = extract_tutorials(git_dir, folder, manifest)
    overrides = {"kernels": {}}
    rows: dict[str, Any] = {}
    with LocalRunner({"cache_dir": str(scratch / "tutorial-cache")}) as runner:
        for target in TARGETS:
            for path in sorted(folder.glob("*.py")):
                source = path.read_text()
                for kernel in launchable_kernels(source):
                    overrides["kernels"] = {kernel: manifest["kernels"].get(f"{path.name}:{kernel}", {})}
                    t0 = time.perf_counter()
                    analysis = analyze_kernel(
                        source, str(path), kernel, target, runner, overrides=overrides, max_variants=1
                    )
                    wall = time.perf_counter() - t0
                    variant = next((v for v in analysis.variants if "ttadapter" in v.stages), None)
                    info = hivm_info(variant.metadata) if variant else {}
                    rows[f"{path.name}:{kernel}@{target}"] = {
                        "reached_ttadapter": variant is not None,
                        "hivm_status": info.get("status"),
                        "hivm_s": info.get("elapsed_s"),
                        "compile_s": variant.elapsed_s if variant else None,
                        "compile_cpu_s": variant.metadata.get("cpu_seconds") if variant else None,
                        "wall_s": round(wall, 3),
                        "why_not": None if variant else _why_not(analysis),
                        "hivm_error": next(
                            (
                                e.message[:300]
                                for e in (variant.errors if variant else [])
                                if e.stage == "hivm"
                            ),
                            None,
                        ),
                    }
    return {
        "manifest": {k: manifest[k] for k in ("repository", "commit", "folder")},
        "paths": paths,
        "kernels": rows,
    }


def _why_not(analysis: Any) -> str:
    for v in analysis.variants:
        for e in v.errors:
            return f"{e.stage}: {e.message.splitlines()[0][:200]}"
    if analysis.error:
        return analysis.error.splitlines()[0][:200]
    found = [f"{f.code} {f.message[:160]}" for f in analysis.findings if f.code.startswith("TL0")]
    return found[0] if found else "no variant compiled"


def coverage(rows: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for target in TARGETS:
        mine = {k: v for k, v in rows.items() if k.endswith(f"@{target}")}
        reached = [v for v in mine.values() if v["reached_ttadapter"]]
        ran = [v for v in reached if v["hivm_status"] in RAN]
        to_hivmc = [v for v in reached if v["hivm_status"] in ("hivmc-missing", "binary")]
        out[target] = {
            "kernels": len(mine),
            "reached_ttadapter": len(reached),
            "hivm_ran": len(ran),
            "hivm_to_hivmc": len(to_hivmc),
            "hivm_ran_pct": round(100.0 * len(ran) / len(reached), 1) if reached else None,
        }
    return out


def med(values: list[float] | None) -> float | None:
    values = [v for v in (values or []) if v is not None]
    return statistics.median(values) if values else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--tutorials-git", type=Path, default=Path("/work/.mirror/triton-lang+triton-ascend/repo")
    )
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="tritonlens-hivm-bench-") as tmp:
        scratch = Path(tmp)
        tests = bench_test_kernels(args.repeat, scratch)
        tutorials = bench_tutorials(args.tutorials_git, scratch) if args.tutorials_git.exists() else None
    print(f"load average {load_before[0]:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"cold, fresh worker (first kernel): median {med(tests['cold_fresh_worker_ms']):.0f} ms")
    print(
        f"{'test kernel @ target':<34}{'status':>15}{'cold':>10}{'cold cpu':>10}{'hivm':>8}{'hivm cpu':>10}"
        f"{'warm mem':>10}{'warm disk':>10}  (median ms)"
    )
    for name, row in tests["kernels"].items():
        ms = {k: (med(row.get(k)) or 0) * 1000 for k in ("cold_cpu_s", "hivm_s", "hivm_cpu_s")}
        mem, disk = med(row.get("warm_memory_ms")), med(row.get("warm_disk_ms"))
        print(
            f"{name:<34}{str(row['hivm_status']):>15}{med(row['cold_ms']):>10.0f}{ms['cold_cpu_s']:>10.0f}"
            f"{ms['hivm_s']:>8.0f}{ms['hivm_cpu_s']:>10.0f}{mem if mem is not None else float('nan'):>10.2f}"
            f"{disk if disk is not None else float('nan'):>10.2f}"
        )
    summary = {"test_kernels": coverage(tests["kernels"])}
    cold_910 = [med(r["cold_ms"]) for k, r in tests["kernels"].items() if k.endswith("@ascend910b3")]
    summary["test_kernels_cold_ms_max"] = max(c for c in cold_910 if c is not None)
    summary["test_kernels_cold_ms_median"] = statistics.median(c for c in cold_910 if c is not None)
    cpu_910 = [med(r["cold_cpu_s"]) for k, r in tests["kernels"].items() if k.endswith("@ascend910b3")]
    summary["test_kernels_cold_cpu_s_max"] = max(c for c in cpu_910 if c is not None)
    summary["test_kernels_warm_memory_ms_max"] = max(
        med(r["warm_memory_ms"]) for r in tests["kernels"].values() if r.get("warm_memory_ms")
    )
    summary["test_kernels_warm_disk_ms_max"] = max(
        med(r["warm_disk_ms"]) for r in tests["kernels"].values() if r.get("warm_disk_ms")
    )
    if tutorials is not None:
        summary["tutorials"] = coverage(tutorials["kernels"])
        print(f"{'tutorial kernel @ target':<58}{'status':>15}{'compile s':>10}{'hivm s':>8}")
        for name, row in tutorials["kernels"].items():
            print(
                f"{name:<58}{str(row['hivm_status']):>15}{row['compile_s'] or 0:>10.2f}{row['hivm_s'] or 0:>8.2f}"
                + (f"  ({row['why_not'][:80]})" if row["why_not"] else "")
            )
    print(json.dumps(summary, indent=1))
    out = {
        "machine": machine_info(load_before),
        "summary": summary,
        "test_kernels": tests,
        "tutorials": tutorials,
    }
    results = ROOT / "benchmarks" / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "ascend_hivm.json").write_text(json.dumps(out, indent=1, default=str))
    print(f"wrote {results / 'ascend_hivm.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
