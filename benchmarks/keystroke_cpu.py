"""CPU time of the level-1 work per keystroke, in process (a benchmark, not a test).

benchmarks/lsp_latency.py times the real server end to end, which on a shared machine mostly measures the
load. This runs what a keystroke costs the server's analysis (`triage` of the new version, which parses it
through the kernel model) on the same generated 2,000-line file and lines (each edit a new text: lsp_latency's digit cycle repeats
texts every 10 edits, which a memo of parses would serve), and reports the
thread CPU time per edit (p50/p95), garbage collection included. Runs on any checkout with `triage(text, path)`.

    .venv/bin/python benchmarks/keystroke_cpu.py [--edits 200] [--label after] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from lsp_latency import EDIT_SITES, generate, percentile  # noqa: E402


def measure(text: str, where: str, edits: int) -> dict[str, float]:
    from tritonlens.analysis.triage import triage

    lines = text.split("\n")
    needle, digit = EDIT_SITES[where]
    target = next(i for i in range(len(lines) - 1, 0, -1) if needle in lines[i])
    del digit  # lsp_latency cycles one digit through 10 values; here every version is a new text
    base = lines[target]
    triage(text, "bench_kernels.py")  # the opened version
    samples: list[float] = []
    for n in range(edits):
        lines[target] = f"{base}  # {n}"  # a keystroke on that line: never a text seen before
        version = "\n".join(lines)
        started = time.thread_time()
        triage(version, "bench_kernels.py")
        samples.append((time.thread_time() - started) * 1000.0)
    return {
        "edit_in": where,
        "edits": edits,
        "p50_ms": round(percentile(samples, 0.5), 2),
        "p95_ms": round(percentile(samples, 0.95), 2),
        "mean_ms": round(statistics.fmean(samples), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--label", default="current")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "keystroke_cpu.json")
    args = parser.parse_args()
    text = generate(2000)
    rows = [measure(text, where, args.edits) for where in ("kernel", "host")]
    for row in rows:
        print(f"{args.label:>8}  2,000 lines, edit in {row['edit_in']:<6}  CPU per keystroke p50 {row['p50_ms']:6.2f} ms"
              f"  p95 {row['p95_ms']:6.2f} ms  mean {row['mean_ms']:6.2f} ms")
    data = json.loads(args.out.read_text()) if args.out.exists() else {}
    data[args.label] = rows
    args.out.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
