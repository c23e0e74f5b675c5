"""A fresh VS Code window's first squiggle (issue 23: <= 3 s from window ready), over several fresh windows.

Each window is one `TRITONLENS_E2E_FIRST_ONLY=1 node client-vscode/test/e2e/run-e2e.mjs` (code-server + headless
Chromium, a new user-data folder each time: nothing warm but the OS file cache); its stamps
(test-artifacts/vscode-e2e/first-diagnostics.json) are collected with the load average before and after, and the
summary (min / median / max of every stamp) goes to benchmarks/results/vscode_first_diagnostics.json.

    .venv/bin/python benchmarks/vscode_first_diagnostics.py [--windows 5] [--no-package]

The .vsix is built first (`npm run package` in client-vscode) unless --no-package; the e2e refuses a stale one.
tritonlens' modules are byte-compiled first, as `pip install` does: with PYTHONDONTWRITEBYTECODE=1 (set on this
machine) an editable install never gets .pyc files and every server start compiled ~70 modules from source,
~0.15-0.3 s before `initialize` could be answered that no installed user pays (--no-compile keeps that cost).
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
    "bundle_load_started_ms",
    "bundle_evaluated_ms",
    "activate_entered_ms",
    "server_spawned_ms",
    "server_process_started_ms",
    "server_started_ms",
)


# The interpreter the e2e starts the server with (run-e2e.mjs: TRITONLENS_E2E_PYTHON, else the repo's .venv).
E2E_PYTHON = Path(os.environ.get("TRITONLENS_E2E_PYTHON", REPO / ".venv" / "bin" / "python"))
# Byte-compiles every subpackage of the tritonlens that interpreter imports (following the links of a worktree's
# package folder: compileall itself skips linked folders).
COMPILE = (
    "import compileall, pathlib, sys, tritonlens\n"
    "root = pathlib.Path(tritonlens.__file__).parent\n"
    "ok = compileall.compile_dir(str(root), maxlevels=0, quiet=1)\n"
    "for sub in root.iterdir():\n"
    "    if sub.is_dir() and sub.name != '__pycache__':\n"
    "        ok &= compileall.compile_dir(str(sub.resolve()), quiet=1)\n"
    "sys.exit(0 if ok else 1)\n"
)


def byte_compile() -> None:
    subprocess.run([str(E2E_PYTHON), "-c", COMPILE], cwd=REPO, check=True)


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


# Spans between two stamps of one window: they depend less on the machine's load than stamps from page start.
SPANS = {
    "exthost_to_activation_ms": ("exthost_started_ms", "extension_activated_ms"),
    "activation_to_activate_entered_ms": ("extension_activated_ms", "activate_entered_ms"),
    "activation_to_bundle_load_ms": ("extension_activated_ms", "bundle_load_started_ms"),
    "bundle_evaluation_ms": ("bundle_load_started_ms", "bundle_evaluated_ms"),
    "spawn_to_started_ms": ("server_spawned_ms", "server_started_ms"),
    "process_start_to_started_ms": ("server_process_started_ms", "server_started_ms"),
    "started_to_first_squiggle_ms": ("server_started_ms", "first_squiggle_ms"),
    "activate_to_first_squiggle_ms": ("activate_entered_ms", "first_squiggle_ms"),
    "exthost_to_first_squiggle_ms": ("exthost_started_ms", "first_squiggle_ms"),
}


def _spread(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in FIGURES:
        values = [r[key] for r in runs if isinstance(r.get(key), (int, float))]
        if values:
            out[key] = _spread(values)
    for name, (start, end) in SPANS.items():
        spans = [
            r[end] - r[start]
            for r in runs
            if isinstance(r.get(start), (int, float)) and isinstance(r.get(end), (int, float))
        ]
        if spans:
            out[name] = _spread(spans)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--windows", type=int, default=5, help="fresh windows to time (>= 5 for the issue's figure)")
    parser.add_argument("--no-package", action="store_true", help="use the .vsix already built")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per window")
    parser.add_argument("--no-compile", action="store_true", help="leave tritonlens' modules as they are (.pyc)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    if not args.no_package:
        subprocess.run(["npm", "run", "package"], cwd=CLIENT, check=True)
    if not args.no_compile:
        byte_compile()
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
        "byte_compiled": not args.no_compile,
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
