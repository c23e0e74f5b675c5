"""Table of a real-operator optimize run (run_realops_h200.sh): one row per optimized library file.

    python benchmarks/gpu/realops/summarize.py RESULTS_DIR... [--save PREFIX]

Reads each RESULTS_DIR's opt_*/optimize-report.json (tritonlens optimize --report), record.txt (the recorded
launches per kernel) and manifest.csv (which operators a file holds), prints a Markdown table - operator, file,
kernels, recorded launches, before ms, after ms, speedup, verified, rewrites, faults in the timing process - and the
geometric mean (a file with no verified faster rewrite counts 1.0x) and the share of files and of operators with a
verified faster rewrite. An operator counts as faster when its file's final text was verified faster (a rewrite
may touch only some of the file's kernels). --save PREFIX writes PREFIX.md and PREFIX.json.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

RECORD_LINE = re.compile(r"^\s+(?P<path>\S+\.py): (?P<kernel>\w+): (?P<n>\d+) distinct launch")
# what a faulting kernel leaves in a reason: the worker died or CUDA reported an error in the timing process
FAULT = re.compile(
    r"illegal memory access|illegal instruction|misaligned address|unspecified launch failure|CUDA error|"
    r"segmentation fault|core dumped|signal \d+|SIGSEGV|SIGABRT|worker (died|exited|crashed)|device-side assert",
    re.IGNORECASE,
)


def recorded_launches(results: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    record = results / "record.txt"
    if record.is_file():
        for line in record.read_text(errors="replace").splitlines():
            m = RECORD_LINE.match(line)
            if m:
                out.setdefault(m["path"], {})[m["kernel"]] = int(m["n"])
    return out


def operators_by_path(manifests: list[Path]) -> dict[str, list[str]]:
    ops: dict[str, list[str]] = {}
    for manifest in manifests:
        if not manifest.is_file():
            continue
        with manifest.open() as fh:
            for row in csv.DictReader(fh):
                if row["operator"] != "-" and row["operator"] not in ops.setdefault(row["path"], []):
                    ops[row["path"]].append(row["operator"])
    return ops


def is_fault(step: dict[str, Any]) -> bool:
    """A candidate whose run brought down or poisoned the timing process (the runner, or a CUDA error)."""
    if step.get("stage") == "runner":
        return True
    text = str(step.get("reason") or "") + " " + " ".join(map(str, (step.get("details") or {}).get("errors") or []))
    return bool(FAULT.search(text))


def file_row(report: dict[str, Any], launches: dict[str, int], operators: list[str]) -> dict[str, Any]:
    overall = report.get("overall") or {}
    steps = list(report.get("applied") or []) + list(report.get("offered") or []) + list(report.get("rejected") or [])
    accepted = bool(overall.get("accepted")) and bool(report.get("timing_meaningful"))
    speedup = report.get("speedup") if accepted and report.get("speedup") else None
    faster = speedup is not None and speedup > 1.0 and bool(report.get("applied"))
    error = report.get("error")
    return {
        "operators": operators,
        "file": report.get("path"),
        "kernels": sorted(launches) or sorted({s.get("kernel") for s in steps if s.get("kernel")}),
        "launches": sum(launches.values()),
        "before_ms": report.get("initial_ms"),
        "after_ms": report.get("final_ms") if faster else report.get("initial_ms"),
        "speedup": speedup if faster else 1.0,
        "verified_faster": faster,
        "rewrites": [s.get("title") or s.get("producer") for s in report.get("applied") or []],
        "candidates": len(steps),
        "faults": sum(is_fault(s) for s in steps) + (1 if error and FAULT.search(str(error)) else 0),
        "error": error,
    }


def missing_row(path: str, results: Path, launches: dict[str, int], operators: list[str]) -> dict[str, Any]:
    """A file the run tried but that wrote no report (timed out or skipped): counted, at 1.0x."""
    name = path[:-3].replace("/", "_")
    err = results / f"opt_{name}.err"
    why = (err.read_text(errors="replace").strip().splitlines() or ["no report"])[-1] if err.is_file() else "no report"
    return {"operators": operators, "file": path, "kernels": sorted(launches), "launches": sum(launches.values()),
            "before_ms": None, "after_ms": None, "speedup": 1.0, "verified_faster": False, "rewrites": [],
            "candidates": 0, "faults": 1 if FAULT.search(why) else 0, "error": f"no report: {why[:160]}"}


def collect(dirs: list[Path]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    here = Path(__file__).resolve().parent
    for results in dirs:
        launches = recorded_launches(results)
        ops = operators_by_path([results / "manifest.csv", here / "manifest.csv"])
        seen: set[str] = set()
        for report_path in sorted(results.glob("opt_*/optimize-report.json")):
            for report in json.loads(report_path.read_text()).get("files", []):
                path = report.get("path") or ""
                seen.add(path)
                rows.append(file_row(report, launches.get(path, {}), ops.get(path, [])))
        for err in sorted(results.glob("opt_*.err")):  # tried, no report
            stem = err.name[len("opt_"):-len(".err")]
            path = next((p for p in set(launches) | set(ops) if p[:-3].replace("/", "_") == stem), None)
            if path and path not in seen:
                rows.append(missing_row(path, results, launches.get(path, {}), ops.get(path, [])))
    return rows


def _ms(v: Any) -> str:
    return "-" if v is None else f"{v:.4f}"


def render(rows: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    lines = ["| operator(s) | file | kernels | recorded launches | before ms | after ms | speedup | verified faster "
             "| rewrites | faults in timing process |", "|" + " --- |" * 10]
    for r in rows:
        note = f" ({r['error'][:60]})" if r.get("error") else ""
        lines.append(
            f"| {', '.join(r['operators']) or '-'} | {r['file']}{note} | {', '.join(r['kernels'])} | {r['launches']} "
            f"| {_ms(r['before_ms'])} | {_ms(r['after_ms'])} | {r['speedup']:.2f}x | {'yes' if r['verified_faster'] else 'no'} "
            f"| {'; '.join(map(str, r['rewrites'])) or '-'} | {r['faults']} |"
        )
    n = len(rows)
    geo = math.exp(sum(math.log(r["speedup"]) for r in rows) / n) if n else None
    faster = sum(r["verified_faster"] for r in rows)
    ops = [(op, r["verified_faster"]) for r in rows for op in r["operators"]]
    summary = {
        "files": n, "files_faster": faster, "share_files_faster": faster / n if n else None,
        "operators": len(ops), "operators_faster": sum(f for _, f in ops),
        "share_operators_faster": sum(f for _, f in ops) / len(ops) if ops else None,
        "geomean_speedup": geo, "faults_in_timing_process": sum(r["faults"] for r in rows),
    }
    if n:
        lines += ["", f"{n} file(s), {len(ops)} operator(s): geometric mean {geo:.2f}x (no verified faster rewrite "
                  f"= 1.00x); verified faster: {faster}/{n} files ({100 * faster / n:.0f}%), "
                  f"{summary['operators_faster']}/{len(ops)} operators"
                  + (f" ({100 * summary['share_operators_faster']:.0f}%)" if ops else "")
                  + f"; faults in the timing process: {summary['faults_in_timing_process']} (must be 0)"]
    return "\n".join(lines), summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--save", type=Path, help="write PREFIX.md and PREFIX.json")
    args = parser.parse_args(argv)
    rows = collect(args.results)
    text, summary = render(rows)
    print(text if rows else "no optimize reports found")
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.with_suffix(".md").write_text(text + "\n")
        args.save.with_suffix(".json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
