"""A fresh VS Code window's first squiggle (issue 23: <= 3 s from window ready), over several fresh windows.

Each window is one `TRITONLENS_E2E_FIRST_ONLY=1 node client-vscode/test/e2e/run-e2e.mjs` (code-server + headless
Chromium, a new user-data folder each time: nothing warm but the OS file cache); its stamps
(test-artifacts/vscode-e2e/first-diagnostics.json) are collected with the load average before and after, and the
summary (min / median / max of every stamp) goes to benchmarks/results/vscode_first_diagnostics.json.

    .venv/bin/python benchmarks/vscode_first_diagnostics.py [--windows 5] [--no-package]

The .vsix is built first (`npm run package` in client-vscode) unless --no-package; the e2e refuses a stale one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from machine import machine_info

REPO = Path(__file__).resolve().parent.parent
CLIENT = REPO / "client-vscode"
STAMPS = REPO / "test-artifacts" / "vscode-e2e" / "first-diagnostics.json"
RESULTS = REPO / "benchmarks" / "results" / "vscode_first_diagnostics.json"
FIGURES = (
    "first_squiggle_ms",
    "opened_ms",
    "exthost_started_ms",
    "extension_activated_ms",
    "activate_entered_ms",
    "server_spawned_ms",
    "server_started_ms",
)


def one_window(timeout_s: float) -> dict[str, Any]:
    STAMPS.unlink(missing_ok=True)
    load_before = os.getloadavg()[0]
    env = {**os.environ, "TRITONLENS_E2E_FIRST_ONLY": "1"}
    done = subprocess.run(
        ["node", "test/e2e/run-e2e.mjs"], cwd=CLIENT, env=env, capture_output=True, text=True, timeout=timeout_s
    )
    if done.returncode != 0 or not STAMPS.exists():
        raise SystemExit(f"the e2e run failed (rc {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    run = json.loads(STAMPS.read_text(encoding="utf-8"))
    run["load_avg_1min_before"] = round(load_before, 2)
    run["load_avg_1min_after"] = round(os.getloadavg()[0], 2)
    return run


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in FIGURES:
        values = [r[key] for r in runs if isinstance(r.get(key), (int, float))]
        if values:
            out[key] = {"min": min(values), "median": statistics.median(values), "max": max(values)}
    spans = [
        r["first_squiggle_ms"] - r["activate_entered_ms"]
        for r in runs
        if isinstance(r.get("activate_entered_ms"), (int, float))
    ]
    if spans:
        out["activate_to_first_squiggle_ms"] = {
            "min": min(spans), "median": statistics.median(spans), "max": max(spans)
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--windows", type=int, default=5, help="fresh windows to time (>= 5 for the issue's figure)")
    parser.add_argument("--no-package", action="store_true", help="use the .vsix already built")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per window")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    if not args.no_package:
        subprocess.run(["npm", "run", "package"], cwd=CLIENT, check=True)
    load_before = os.getloadavg()
    runs = []
    for n in range(args.windows):
        run = one_window(args.timeout)
        runs.append(run)
        print(f"window {n + 1}: first squiggle {run['first_squiggle_ms']} ms after window ready "
              f"(load {run['load_avg_1min_before']}-{run['load_avg_1min_after']})", flush=True)
        time.sleep(2.0)  # the previous code-server's processes are gone before the next starts
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    out = {
        "what": "fresh code-server window (headless Chromium): first diagnostic squiggle of the bundled example "
        "examples/naive_softmax.py, ms from window ready (.monaco-workbench attached)",
        "how": "benchmarks/vscode_first_diagnostics.py (TRITONLENS_E2E_FIRST_ONLY=1 node test/e2e/run-e2e.mjs per window)",
        "commit": commit,
        "machine": machine_info(load_before),
        "limit_ms": 3000,
        "summary": summary(runs),
        "runs": runs,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out["summary"], indent=1))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
