"""`tritonlens bench DIR`: the optimize loop over every KernelBench-form task, with baselines and a report of
the whole speedup distribution (JSON, Markdown, PNG). Resumable: each finished task is saved to a state file and
skipped when the command runs again (`--redo GLOB` / `--redo-stale` take chosen or outdated ones again);
`--shard I/N` and `--time-budget S` split the work into pieces that fit short device leases. Tasks run one at a
time by default; `--jobs N` runs N at once on one local accelerator, their compiling and correctness checks side by
side and every timing alone (an exclusive lock on the device, `ascend_runner/worker/device_lock.py`); on a Ray runner
as many at once as the cluster has actors for.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ...analysis.core.targets import DEFAULT_CUDA_TARGET
from ...ascend_runner.client import in_order, parallelism, share_device
from ..durable.replace_file import replace_file
from ..engine.bench import state as bench_state
from ..engine.bench.measure import BenchOptions, run_task
from ..engine.bench.plot import write_plot
from ..engine.bench.summary import summarize, to_markdown
from ..engine.bench.tasks import find_tasks, parse_shard, shard
from ..engine.optimize.loop import Budget
from ..engine.optimize.proposer_set import build_proposers
from ..engine.optimize.proposers import Proposer, llm_proposer
from ..engine.profile.jobs import BACKEND_CHOICES, runner_lacks_device
from ..provenance import Recorder, markdown_lines, provenance
from .profile import make_runner


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("bench", help="optimize every task of a benchmark folder and report the speedups")
    p.add_argument("paths", nargs="+", metavar="DIR|FILE", help="folders of KernelBench-form tasks (e.g. bench/)")
    p.add_argument("--runner", default="local", help="local, local:ENV, an http(s) URL, ray://HOST:PORT or ray:auto")
    p.add_argument("--token-env", metavar="VAR", help="environment variable holding a remote runner's token")
    p.add_argument("--token-file", metavar="PATH", help="file holding a remote runner's token")
    p.add_argument("--backend", choices=BACKEND_CHOICES, default="cuda")
    p.add_argument("--target", default=DEFAULT_CUDA_TARGET, help="compile target (sm_90, ascend910b3, ...)")
    p.add_argument("--budget", default="candidates=12,rounds=2,seconds=120", metavar="SPEC",
                   help="per task: candidates=N,rounds=N,seconds=S")
    p.add_argument("--repeats", type=int, default=5, help="interleaved timing repeats per candidate")
    p.add_argument("--rep-ms", type=float, default=100.0, help="time per timing sample, ms (default 100)")
    p.add_argument("--no-torch-compile", action="store_true", help="do not time torch.compile(Model)")
    p.add_argument("--no-config-search", action="store_true")
    p.add_argument("--shard", default="1/1", metavar="I/N", help="run the I-th of N interleaved slices of the tasks")
    p.add_argument("--time-budget", type=float, default=0.0, metavar="S",
                   help="start no new task after S seconds (the rest waits for the next run)")
    p.add_argument("--jobs", type=int, default=0,
                   help="tasks at once (default: 1, or the Ray pool's width); on one local device timings take turns")
    p.add_argument("--report", default="bench-report", metavar="DIR", help="where the report and state go")
    p.add_argument("--state", metavar="FILE", help="state file (default REPORT/bench-state.json)")
    p.add_argument("--redo", action="append", default=[], metavar="GLOB",
                   help="run again the tasks in the state whose path (or a tail of it: nll.py, loss/*) matches GLOB")
    p.add_argument("--redo-stale", action="store_true",
                   help="run again the tasks whose text or the tool's optimizing code changed since their record")
    p.add_argument("--llm-base-url", metavar="URL")
    p.add_argument("--llm-model", metavar="M")
    p.add_argument("--llm-api-key-env", metavar="VAR")
    p.set_defaults(func=run)


def _context(args: argparse.Namespace, records: list[dict[str, Any]]) -> dict[str, Any]:
    devices = sorted({r["baseline"]["device"] for r in records if (r.get("baseline") or {}).get("device")})
    return {
        "command": "tritonlens " + " ".join(sys.argv[1:]),
        "backend": args.backend,
        "target": args.target,
        "device": ", ".join(devices) or "unknown",
        "budget per task": args.budget,
        "host python": platform.python_version(),
    }


def write_report(
    args: argparse.Namespace, state: dict[str, Any], out: Path, prov: dict[str, Any] | None = None
) -> dict[str, Any]:
    records = list(state["tasks"].values())
    summary = summarize(records)
    context = _context(args, records)
    out.mkdir(parents=True, exist_ok=True)
    note = write_plot(records, summary, out / "bench-speedups.png")
    if note:
        context["plot"] = note
    replace_file(
        out / "bench-report.json",
        json.dumps({"context": context, "provenance": prov, "summary": summary, "tasks": records}, indent=1,
                   default=repr),
    )
    where = "\n".join(["", *markdown_lines(prov)]) if prov else ""
    replace_file(out / "bench-report.md", to_markdown(summary, records, context) + where)
    return summary


_SAY = threading.Lock()


def _say(line: str) -> None:
    """One whole line on stderr: the tasks' threads and the main thread print at the same time."""
    with _SAY:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


class _Terminated(Exception):
    """SIGTERM arrived while tasks ran."""


def _on_stop_signals(cancel: threading.Event) -> dict[int, Any]:
    def handler(signum: int, frame: Any) -> None:
        cancel.set()  # before unwinding: leaving the loop waits for the tasks in flight, which must stop first
        raise _Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    return {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}


def run(args: argparse.Namespace) -> int:
    try:
        budget = Budget.parse(args.budget)
        index, count = parse_shard(args.shard)
    except ValueError as exc:
        print(f"tritonlens bench: {exc}", file=sys.stderr)
        return 2
    tasks, problems = find_tasks(args.paths)
    for problem in problems:
        print(f"tritonlens bench: {problem}", file=sys.stderr)
    if not tasks:
        print("tritonlens bench: no KernelBench-form task found", file=sys.stderr)
        return 2
    out = Path(args.report)
    state_path = Path(args.state) if args.state else out / "bench-state.json"
    try:
        state = bench_state.load(state_path)
    except (ValueError, OSError) as exc:
        print(f"tritonlens bench: {exc}", file=sys.stderr)
        return 2
    tool = bench_state.tool_fingerprint()
    todo, again = bench_state.to_run(shard(tasks, index, count), state, args.redo, args.redo_stale, tool)
    print(f"tritonlens bench: {len(tasks)} tasks, shard {index}/{count}: {len(todo)} to run "
          f"({len(state['tasks'])} already in {state_path}, {len(again)} of them again)", file=sys.stderr)
    for task, why in again.items():
        print(f"tritonlens bench: {task}: again ({why})", file=sys.stderr)
    ray_runner = args.runner.startswith("ray")
    local_jobs = max(1, args.jobs) if args.runner.startswith("local") else 1
    if local_jobs > 1 and args.backend != "interpret":
        share_device(os.environ)
    try:
        runner = Recorder(make_runner(args.runner, args.token_env, args.token_file, cache=True,
                                      workers=max(2, 2 * local_jobs)))
    except RuntimeError as exc:
        print(f"tritonlens bench: {exc}", file=sys.stderr)
        return 2
    missing = runner_lacks_device(runner, args.backend)
    if missing:  # every task would fail to run its first draft: say it once, before any work
        print(f"tritonlens bench: {missing}", file=sys.stderr)
        runner.close()
        return 2
    try:
        llm = llm_proposer(args.llm_base_url, args.llm_model, api_key_env=args.llm_api_key_env)
    except ValueError as exc:
        print(f"tritonlens bench: LLM proposer: {exc}", file=sys.stderr)
        return 2
    options = BenchOptions(backend=args.backend, target=args.target, budget=budget, repeats=args.repeats,
                           rep_ms=args.rep_ms, compiled_reference=not args.no_torch_compile)

    def proposers() -> list[Proposer]:
        return build_proposers(runner, args.target, args.backend, config_search=not args.no_config_search, llm=llm)

    started = time.monotonic()
    cancel = threading.Event()
    lock = threading.Lock()
    width = args.jobs or (parallelism(runner, "verify", args.backend) if ray_runner else 1)

    def task_call(path: Path) -> Any:
        def call() -> dict[str, Any] | None:
            if args.time_budget and time.monotonic() - started > args.time_budget:
                return None  # left for the next run
            record = run_task(path, runner, options, proposers,
                              progress=lambda m: _say(f"  {path}: {m}"), cancel=cancel)
            record["fingerprint"] = bench_state.fingerprint(path, tool)
            if record.get("status") != "cancelled":
                with lock:  # saved as soon as it is done: a killed run loses at most the tasks in flight
                    bench_state.replace_record(state, str(path), record)
                    bench_state.save(state_path, state)
            return record

        return call

    status = 0
    # `timeout` and job schedulers stop a run with SIGTERM: like Ctrl-C, tasks in flight are cancelled (and run
    # again next time) and the report of everything finished is still written
    previous = _on_stop_signals(cancel) if threading.current_thread() is threading.main_thread() else {}
    try:
        for path, record in zip(todo, in_order([task_call(p) for p in todo], width, cancel=cancel), strict=True):
            if record is None:
                _say(f"tritonlens bench: {path}: skipped (time budget); run again to resume")
                continue
            timed = record.get("status") == "done" and record.get("timing_meaningful")
            line = f"{record.get('speedup') or 0:.2f}x" if timed else record.get("miss")
            line += f" | Ascend compile: {record['ascend']}" if record.get("ascend") else ""
            _say(f"tritonlens bench: {path}: {record.get('status')} {line}")
    except (KeyboardInterrupt, _Terminated) as stop:
        cancel.set()
        status = 143 if isinstance(stop, _Terminated) else 130
        _say(f"tritonlens bench: stopped ({'SIGTERM' if status == 143 else 'interrupted'}); tasks in flight are run "
             "again next time")
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        runner.close()
    summary = write_report(args, state, out, provenance(runner, runner.runner, args.runner, args.backend))
    print(json.dumps(summary, indent=1))
    print(f"tritonlens bench: report in {out}/bench-report.md (.json, .png)", file=sys.stderr)
    return status
