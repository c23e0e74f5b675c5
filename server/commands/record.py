"""`tritonlens record [options] -- COMMAND...`: run a test or script with every Triton launch recorded, and store
the distinct launches per kernel in the workspace (`.tritonlens/launches/`, see server.launch_store).

Levels 3-4 (`check --level ir`, the editor) and profiling then compile each kernel with the argument types,
constexpr values (dtype-valued ones too), divisibility and options of its real launches, before any guess.
Examples: `tritonlens record -- pytest tests/test_rms_norm.py -k small`, `tritonlens record -- python bench.py`.
Exit status: 0 when launches were recorded, 1 when the command ran but recorded none, 2 on usage errors or
when the command could not run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from ..engine.record.jobs import default_backend, record_local, record_remote
from ..engine.record.launch_store import SaveSummary, save, workspace_root

BACKENDS = ("auto", "cuda", "interpret", "npu")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "record",
        help="run a test or script with every Triton launch recorded (levels 2-4 then use the real launches)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="auto",
        help="cuda (a GPU), npu (an Ascend NPU) or interpret (the CPU, TRITON_INTERPRET=1); "
        "auto: cuda when nvidia-smi is on PATH, npu when npu-smi is, else interpret",
    )
    p.add_argument("--runner", default="", help="local (default) or the URL of a remote runner")
    p.add_argument("--token-env", default="TRITONLENS_RUNNER_TOKEN", help="env var holding the remote token")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds before the command is stopped")
    p.add_argument("--workspace", default="", help="workspace root (default: nearest pyproject.toml/.git)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("-q", "--quiet", action="store_true", help="do not echo the command's output")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    argv = list(args.command)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        print(
            "tritonlens record: give the command after --, e.g. `tritonlens record -- pytest tests/`",
            file=sys.stderr,
        )
        return 2
    cwd = Path.cwd()
    root = Path(args.workspace).resolve() if args.workspace else workspace_root(cwd)
    backend = default_backend(shutil.which) if args.backend == "auto" else args.backend
    echo = None if args.quiet or args.format == "json" else (lambda line: sys.stderr.write(line))
    if args.runner and args.runner != "local":
        outcome = record_remote(args.runner, args.token_env, argv, root, cwd, backend, args.timeout)
    else:
        outcome = record_local(argv, cwd, backend, args.timeout, on_output=echo)
    if outcome.setup_error:
        print(f"tritonlens record: {outcome.setup_error}", file=sys.stderr)
        return 2
    recorded = outcome.run
    summary = save(root, recorded.launches)
    if args.format == "json":
        print(json.dumps(_json(recorded.to_dict(), summary, root), indent=1, default=repr))
    else:
        _print_summary(recorded.errors, summary, root, backend, len(recorded.launches))
    if recorded.returncode is None:
        return 2
    return 0 if summary.stored else 1


def _json(run: dict[str, Any], summary: SaveSummary, root: Path) -> dict[str, Any]:
    run = {k: v for k, v in run.items() if k != "launches"}
    return {
        **run,
        "launches_recorded": sum(sum(k.values()) for k in summary.stored.values()),
        "stored": summary.stored,
        "outside_workspace": summary.outside,
        "unmatched": summary.unmatched,
        "store": str(root / ".tritonlens" / "launches"),
    }


def _print_summary(errors: list[str], summary: SaveSummary, root: Path, backend: str, total: int) -> None:
    out = sys.stdout
    for error in errors:
        print(f"tritonlens record: {error}", file=sys.stderr)
    if not summary.stored:
        print(
            f"tritonlens record: no launch of a kernel in {root} was recorded ({total} launches seen)",
            file=out,
        )
        return
    print(f"tritonlens record ({backend}): stored in {root / '.tritonlens' / 'launches'}", file=out)
    for rel, kernels in sorted(summary.stored.items()):
        for kernel, n in sorted(kernels.items()):
            print(f"  {rel}: {kernel}: {n} distinct launch(es)", file=out)
    if summary.outside:
        print(f"  ({summary.outside} launch(es) of kernels outside the workspace not stored)", file=out)
