"""`tritonlens optimize FILE|DIR`: evidence -> candidates (recipes, config search, LLM) -> verification gate ->
apply the fastest verified one -> again, within a budget; writes a Markdown + JSON report. `--apply` writes the
verified final text into the files (only the command line ever writes user files). Same engine as the editor:
server/engine/optimize.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ...analysis.core.targets import DEFAULT_CUDA_TARGET
from ...ascend_runner.client import in_order, parallelism
from ..durable.replace_file import WriteRefused, read_snapshot, replace_file
from ..engine.optimize import report as reporting
from ..engine.optimize.gate import GateConfig
from ..engine.optimize.loop import Budget, OptimizeOptions, optimize_source
from ..engine.optimize.proposer_set import build_proposers
from ..engine.optimize.proposers import llm_proposer
from ..engine.profile.jobs import BACKEND_CHOICES, detect_harness, runner_lacks_device
from ..engine.record.launch_store import recorded_for
from ..provenance import Recorder, markdown_lines, provenance
from ..source_files import decode_python_source, read_python_source
from ..trust.secrets import redactor
from .profile import make_runner

# worker processes of the local runner: config-search compiles run in parallel over them
WORKERS = max(1, min(8, (os.cpu_count() or 2) // 2))


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("optimize", help="find, verify and report faster versions of KernelBench-form kernels")
    p.add_argument("paths", nargs="+", metavar="FILE|DIR", help="KernelBench-form files, or folders of them")
    p.add_argument("--target", default=DEFAULT_CUDA_TARGET, help="compile target for the compile check (sm_90, ascend910b3...)")
    p.add_argument("--runner", default="local", help="local, local:ENV or an http(s) URL (as `profile`)")
    p.add_argument("--token-env", metavar="VAR", help="environment variable holding a remote runner's token")
    p.add_argument("--token-file", metavar="PATH", help="file holding a remote runner's token")
    p.add_argument("--backend", choices=BACKEND_CHOICES, default="cuda", help="where candidates run (default cuda)")
    p.add_argument("--budget", default="", metavar="SPEC", help="candidates=N,rounds=N,seconds=S (default 24,3,1800)")
    p.add_argument("--repeats", type=int, default=5, help="interleaved timing repeats per candidate (default 5)")
    p.add_argument("--rep-ms", type=float, default=100.0, help="time per timing sample, ms (default 100)")
    p.add_argument("--no-config-search", action="store_true", help="recipes (and the LLM) only")
    p.add_argument("--llm-base-url", metavar="URL", help="OpenAI-compatible endpoint for the LLM proposer")
    p.add_argument("--llm-model", metavar="M", help="model name for the LLM proposer")
    p.add_argument("--llm-api-key-env", metavar="VAR", help="environment variable holding the LLM API key")
    p.add_argument("--llm-token-budget", metavar="N", type=int,
                   help="stop asking the LLM once the server reports this many tokens used (default 200000)")
    p.add_argument("--llm-allow-unsandboxed", action="store_true",
                   help="run the LLM's candidates even where the runner has no sandbox (bubblewrap or unshare): they "
                        "then run with your rights; without it such candidates are not run and the report says so")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--report", metavar="DIR", help="write optimize-report.md and optimize-report.json there")
    p.add_argument("--apply", action="store_true", help="write each file's verified faster final text into it")
    p.set_defaults(func=run)


def _files(paths: list[str]) -> tuple[list[Path], list[str]]:
    files: list[Path] = []
    problems: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files.extend(sorted(f for f in p.rglob("*.py") if f.is_file()))
        elif p.is_file():
            files.append(p)
        else:
            problems.append(f"{raw}: no such file or folder")
    return files, problems


def run(args: argparse.Namespace) -> int:
    try:
        budget = Budget.parse(args.budget)
    except ValueError as exc:
        print(f"tritonlens optimize: {exc}", file=sys.stderr)
        return 2
    files, problems = _files(args.paths)
    for problem in problems:
        print(f"tritonlens optimize: {problem}", file=sys.stderr)
    if not files:
        return 2
    notes: list[str] = []
    try:
        llm = llm_proposer(args.llm_base_url, args.llm_model, api_key_env=args.llm_api_key_env,
                           token_budget=args.llm_token_budget)
    except ValueError as exc:
        print(f"tritonlens optimize: LLM proposer: {exc}", file=sys.stderr)
        return 2
    try:
        runner = Recorder(make_runner(args.runner, args.token_env, args.token_file, cache=True, workers=WORKERS))
    except RuntimeError as exc:
        print(f"tritonlens optimize: {exc}", file=sys.stderr)
        return 2
    missing = runner_lacks_device(runner, args.backend)
    if missing:  # every candidate would compile, then fail to run: say it once, before any work
        print(f"tritonlens optimize: {missing}", file=sys.stderr)
        runner.close()
        return 2
    if (args.llm_base_url or args.llm_model) and llm is None:
        notes.append(
            "the LLM proposer is not part of this build (or needs both --llm-base-url and --llm-model): "
            "recipes and config search only"
        )
        print(f"tritonlens optimize: {notes[-1]}", file=sys.stderr)
    options = OptimizeOptions(
        target=args.target,
        backend=args.backend,
        budget=budget,
        gate=GateConfig(backend=args.backend, target=args.target, repeats=args.repeats, rep_ms=args.rep_ms,
                        allow_unsandboxed=args.llm_allow_unsandboxed),
    )
    results: list[dict[str, Any]] = []
    markdown: list[str] = ["# tritonlens optimize report", ""] + [f"- {n}" for n in notes]
    status = 0

    def optimize_file(path: Path) -> tuple[Any, int]:
        """(OptimizeResult or None, status) for one file; runs in a fan-out thread when the runner is a pool."""
        try:
            source = read_python_source(path)
        except (OSError, UnicodeDecodeError) as exc:
            print(f"tritonlens optimize: cannot read {path}: {exc}", file=sys.stderr)
            return None, 1
        if detect_harness(source) != "kernelbench" and not recorded_for(str(path), source):
            if len(files) == 1:
                print(f"tritonlens optimize: {path} is not in KernelBench form (Model, ModelNew, get_inputs, "
                      "get_init_inputs) and has no launches recorded from its current text: the gate needs a "
                      "reference to compare with (record them: tritonlens record -- COMMAND)", file=sys.stderr)
                return None, 1
            return None, 0
        proposers = build_proposers(runner, args.target, args.backend, config_search=not args.no_config_search,
                                    llm=llm, workers=WORKERS)
        print(f"tritonlens optimize: {path} ...", file=sys.stderr)
        result = optimize_source(
            source, str(path), runner, options, proposers,
            progress=lambda message, _fraction: print(f"  {path.name}: {message}", file=sys.stderr),
        )
        return result, 1 if result.error else 0

    # One accelerator times one file at a time; a Ray pool takes as many files at once as it has actors for.
    width = parallelism(runner, "verify", args.backend) if args.runner.startswith("ray") else 1
    try:
        calls = [lambda path=path: optimize_file(path) for path in files]
        for path, (result, file_status) in zip(files, in_order(calls, width), strict=True):
            status = max(status, file_status)
            if result is None:
                continue
            data = reporting.to_dict(result)
            data["notes"] = notes + data["notes"]
            results.append(data)
            markdown.append(reporting.to_markdown(result))
            if args.report and not result.error:
                from ..charts.files import optimize_result_chart_lines

                markdown += ["### Roofline", "", *optimize_result_chart_lines(result, Path(args.report), len(results)), ""]
            if args.apply and not _apply(path, result):
                status = max(status, 1)
    except KeyboardInterrupt:
        print("tritonlens optimize: interrupted; reporting what was done", file=sys.stderr)
        status = 130
    finally:
        runner.close()
    if len(results) > 1:
        markdown[2:2] = ["## Summary", "", reporting.summary_markdown(results)]
    prov = provenance(runner, runner.runner, args.runner, args.backend)
    markdown[2:2] = markdown_lines(prov)
    secrets = redactor()  # what a candidate printed or raised may quote a key: none leaves in a report
    text = secrets.text("\n".join(markdown))
    results = secrets.data(results)
    if args.report:
        out = Path(args.report)
        try:
            out.mkdir(parents=True, exist_ok=True)
            replace_file(out / "optimize-report.md", text)
            replace_file(out / "optimize-report.json",
                         json.dumps({"files": results, "provenance": prov}, indent=1, default=repr))
            print(f"tritonlens optimize: report written to {out}/optimize-report.md and .json", file=sys.stderr)
        except (WriteRefused, OSError) as exc:
            print(f"tritonlens optimize: report not written: {exc}", file=sys.stderr)
            status = max(status, 1)
    if args.format == "json":
        print(json.dumps({"files": results, "provenance": prov}, indent=1, default=repr))
    else:
        print(text)
    return status


def _apply(path: Path, result: Any) -> bool:
    """Write the verified final text into `path`; False (and a message) when it could not be written."""
    overall = result.overall
    if overall is None or not overall.accepted or result.final == result.original:
        why = "nothing verified faster" if result.timing_meaningful else "no timing on this backend"
        print(f"tritonlens optimize: {path} left unchanged ({why})", file=sys.stderr)
        return True
    try:
        snapshot = read_snapshot(path)
        current, encoding = decode_python_source(snapshot.data, str(path))
        if current != result.original:
            raise WriteRefused(f"{path} changed while optimizing; not overwritten")
        # In the file's own encoding (its coding line stays true); "utf-8-sig" keeps a BOM the file had.
        written = replace_file(path, result.final.encode(encoding), expected=snapshot)
    except (WriteRefused, UnicodeError) as exc:
        print(f"tritonlens optimize: {exc}", file=sys.stderr)
        return False
    print(f"tritonlens optimize: wrote {path}{written.note} ({overall.speedup:.2f}x, verified)", file=sys.stderr)
    return True
