"""`tritonlens profile FILE`: run the file on a runner with every Triton launch recorded, time each launch, and
print the launches with level-2 findings (roofline, grid, occupancy; Nsight Compute lines with --ncu).

The harness is picked from the file (KernelBench `Model`/`ModelNew`/`get_inputs` -> kernelbench, else the file
runs as a script) or named with --harness kernelbench|script|module:function. Measured ceilings are cached per
device name, so later profiles on that device compare against them (see analysis/core/devices.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ...analysis.core.findings import Finding
from ...analysis.profile import analyze as profiling
from ...analysis.profile.launch import LaunchAnalysis
from ..engine.profile.jobs import BACKEND_CHOICES, analyze_result, harness_spec
from ..engine.record.launch_store import keep_profiled_launches
from ..source_files import read_python_source


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "profile", help="run a file on a runner, record its Triton launches and diagnose them"
    )
    p.add_argument("file", metavar="FILE", help="KernelBench module or script that launches Triton kernels")
    p.add_argument(
        "--harness", default="auto", help="kernelbench, script or module:function (default: from the file)"
    )
    p.add_argument(
        "--runner", default="local", help="local, local:ENV (cuda|ascend|path to a python) or an http(s) URL"
    )
    p.add_argument("--token-env", metavar="VAR", help="environment variable holding a remote runner's token")
    p.add_argument("--token-file", metavar="PATH", help="file holding a remote runner's token")
    p.add_argument("--backend", choices=BACKEND_CHOICES, default="cuda")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument(
        "--ncu", action="store_true", help="also run Nsight Compute on the slowest launch (NVIDIA)"
    )
    p.add_argument(
        "--measure-ceilings", action="store_true", help="time a copy and a matmul on the device first (default: when none are cached for this runner)"
    )
    p.add_argument(
        "--snapshot", action="store_true", help="keep replayable snapshots of each launch on the runner"
    )
    p.add_argument("--timeout", type=float, default=900.0, metavar="S", help="give up after S seconds")
    p.add_argument(
        "--report", metavar="DIR", help="also write profile-report.md and roofline.svg (the roofline chart) there"
    )
    p.add_argument(
        "--from-json", metavar="RESULT", help="analyze a saved run/profile result instead of running"
    )
    p.add_argument(
        "args", nargs="*", metavar="ARG", help="arguments for a script harness (put them after --)"
    )
    p.set_defaults(func=run)


def make_runner(
    spec: str, token_env: str | None = None, token_file: str | None = None, *, cache: bool = False, workers: int = 1
) -> Any:
    """A runner for --runner SPEC; `cache` keeps compile results, `workers` runs that many jobs at once (local)."""
    from ...ascend_runner.client import LocalRunner, get_runner

    if spec.startswith(("http://", "https://")):
        remote: dict[str, Any] = {"url": spec}
        if token_env:
            remote["tokenEnv"] = token_env
        if token_file:
            remote["tokenFile"] = token_file
        if not token_env and not token_file:
            raise RuntimeError(
                f"the remote runner {spec} needs its token: pass --token-env VAR (a variable holding it) "
                "or --token-file PATH"
            )
        try:
            return get_runner(remote)
        except Exception as exc:  # the remote client may not exist or may want credentials
            message = str(exc).replace("tokenEnv", "--token-env").replace("tokenFile", "--token-file")
            raise RuntimeError(f"cannot use the remote runner {spec}: {message}") from None
    if spec.startswith(("ray://", "ray:auto")):
        try:
            return get_runner({"address": spec})
        except Exception as exc:  # Ray missing, no cluster at the address, or no token
            raise RuntimeError(f"cannot use the Ray runner {spec}: {exc}") from None
    config: dict[str, Any] = {"cache": cache, "workers": workers}
    if spec.startswith("local:"):
        env = spec.split(":", 1)[1]
        if env in ("cuda", "ascend"):
            # Every backend runs under the named environment's interpreter (e.g. interpret under ascend).
            from ...ascend_runner.client import EnvironmentUnavailable, find_environment

            try:
                python = find_environment(env).python
            except EnvironmentUnavailable as exc:
                raise RuntimeError(f"--runner local:{env}: {exc}") from None
            config.update(cuda={"python": python}, ascend={"python": python})
        elif env:
            config.update(cuda={"python": env}, ascend={"python": env})
        else:
            raise RuntimeError("--runner local:ENV needs an environment name or a python path")
    elif spec != "local":
        raise RuntimeError(f"--runner must be local, local:ENV, an http(s) URL, ray://HOST:PORT or ray:auto, not {spec!r}")
    return LocalRunner(config)


def _measure(args: argparse.Namespace) -> bool:
    """--measure-ceilings, or by default when no ceilings were measured yet through this runner and backend."""
    from ..engine.profile.ceilings import needs_measuring

    return bool(args.measure_ceilings) or needs_measuring(args.runner, args.backend)


def run_profile(args: argparse.Namespace, harness: dict[str, Any]) -> dict[str, Any]:
    """Submit the profile job; returns the RunResult dict or raises RuntimeError with the runner's message."""
    payload = {
        "harness": harness,
        "backend": args.backend,
        "snapshot": bool(args.snapshot),
        "measure_ceilings": _measure(args),
        "ncu": bool(args.ncu),
    }
    from ...ascend_runner.protocol import ProtocolError, profile_request_from

    try:
        profile_request_from(payload)
    except ProtocolError as exc:
        raise RuntimeError(f"bad profile request: {exc}") from None
    from ..provenance import Recorder, provenance

    runner = Recorder(make_runner(args.runner, args.token_env, args.token_file))
    try:
        reply = runner.profile(args.backend, payload, timeout_s=args.timeout)
    except Exception as exc:  # a remote runner that cannot be reached, or one without profile jobs
        raise RuntimeError(
            f"the runner could not take the profile job: {type(exc).__name__}: {exc}"
        ) from None
    finally:
        runner.close()
    if not reply.get("ok"):
        error = reply.get("error") or {}
        raise RuntimeError(error.get("message") if isinstance(error, dict) else str(error))
    result = dict(reply["result"])
    result["provenance"] = provenance(runner, runner.runner, args.runner, args.backend)
    return result


def run(args: argparse.Namespace) -> int:
    path = args.file
    if Path(path).suffix not in (".py", ".pyi") and Path(path).is_file():
        print(f"tritonlens profile: {path} is not a Python file (.py)", file=sys.stderr)
        return 2
    try:
        source = read_python_source(Path(path))
    except (OSError, UnicodeDecodeError) as exc:
        print(f"tritonlens profile: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    argv = [a for a in args.args if a != "--"]
    try:
        if args.from_json:
            result = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
            _attach_saved_ncu(result, Path(args.from_json).parent)
        else:
            result = run_profile(args, harness_spec(path, source, args.harness, argv))
            keep_profiled_launches(str(path), result)  # levels 3-4 use the real launches from now on
    except (OSError, ValueError) as exc:
        print(f"tritonlens profile: cannot read {args.from_json}: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        print(f"tritonlens profile: {exc}", file=sys.stderr)
        return 1
    return report(args, path, source, result)


def _attach_saved_ncu(result: dict[str, Any], folder: Path) -> None:
    """Saved results may keep the ncu CSV beside them (benchmarks/gpu/results/): read it back."""
    ncu = result.get("ncu")
    if isinstance(ncu, dict) and ncu.get("source_csv_file") and not ncu.get("source_csv"):
        csv_path = folder / str(ncu["source_csv_file"])
        if csv_path.is_file():
            ncu["source_csv"] = csv_path.read_text(encoding="utf-8")


def report(args: argparse.Namespace, path: str, source: str, result: dict[str, Any]) -> int:
    rep = analyze_result(result, path, source, getattr(args, "runner", None))
    ncu_raw = result.get("ncu") or {}
    if args.format == "json":
        slim = {**result, "ncu": {k: v for k, v in ncu_raw.items() if k not in ("source_csv", "details")}}
        prov = result.get("provenance") or "unknown (a saved result without it)"
        print(json.dumps({"path": path, "provenance": prov, "result": slim, "report": rep.to_dict()}, indent=2,
                         default=str))
    else:
        print_text(path, result, rep)
        if isinstance(result.get("provenance"), dict):
            from ..provenance import markdown_lines

            print("\n".join(markdown_lines(result["provenance"])))
    if getattr(args, "report", None):
        written = write_report(Path(args.report), path, result, rep)
        print(f"tritonlens profile: wrote {written}", file=sys.stderr)
    return 0 if result.get("ok") else 1


def write_report(folder: Path, path: str, result: dict[str, Any], rep: profiling.ProfileReport) -> Path:
    """profile-report.md with the roofline chart (roofline.svg) and one line per launch."""
    from ..charts.files import profile_chart_lines

    folder.mkdir(parents=True, exist_ok=True)
    dev = (result.get("device") or {}).get("name", "unknown device")
    lines = [f"# tritonlens profile: {path}", "", f"Backend `{result.get('backend')}` on {dev}.", ""]
    lines += profile_chart_lines(rep, folder, path)
    lines += ["", "## Launches", ""]
    records = result.get("launches") or []
    for la in rep.launches:
        rec = records[la.index] if la.index < len(records) else {}
        lines += ["```", *_launch_line(la, rec), "```"]
    out = folder / "profile-report.md"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _launch_line(la: LaunchAnalysis, rec: dict[str, Any]) -> list[str]:
    sig = ", ".join(f"{k}: {v}" for k, v in (rec.get("signature") or {}).items() if v != "constexpr")
    consts = ", ".join(f"{k}={v}" for k, v in (rec.get("constants") or {}).items())
    out = [f"launch {la.index}: {la.kernel} (line {la.line}) grid {la.grid} x{la.count}"]
    out.append(f"    signature {sig}" + (f"; constexpr {consts}" if consts else ""))
    if rec.get("divisibility"):
        out.append(f"    divisible by 16: {', '.join(rec['divisibility'])}")
    shapes = [
        f"{a['name']} {a.get('dtype')}{a.get('shape')}" + (" (written)" if a.get("written") else "")
        for a in rec.get("args") or []
        if a.get("kind") == "tensor"
    ]
    if shapes:
        out.append(f"    tensors {', '.join(shapes)}")
    if la.time_ms is not None:
        parts = [f"median {la.time_ms * 1e3:.1f} us", f"{la.bytes_moved / 2**20:.1f} MiB"]
        if la.achieved_gbps is not None and la.bandwidth_fraction is not None:
            parts.append(f"{la.achieved_gbps:,.0f} GB/s ({la.bandwidth_fraction:.0%} of ceiling)")
        if la.achieved_tflops is not None and la.compute_fraction is not None:
            parts.append(f"{la.achieved_tflops:,.1f} TFLOP/s ({la.compute_fraction:.0%})")
        parts.append(f"{la.bound}-bound")
        if la.waves is not None:
            parts.append(f"{la.waves:.2f} waves")
        if la.occupancy is not None:
            parts.append(f"occupancy {la.occupancy:.0%} ({la.occupancy_limiter})")
        out.append("    " + " | ".join(parts))
    return out


def print_text(path: str, result: dict[str, Any], rep: profiling.ProfileReport) -> None:
    if not result.get("ok") and not result.get("launches"):
        for err in result.get("errors") or ["the runner gave no reason"]:
            print(f"tritonlens profile: {err}", file=sys.stderr)
        return
    dev = result.get("device") or {}
    print(f"runner backend {result.get('backend')}: {dev.get('name', 'unknown device')}")
    if rep.device is not None:
        rates = ", ".join(f"{k} {v.label()}" for k, v in rep.device.rates.items() if k in ("bf16", "fp8"))
        print(f"ceilings: bandwidth {rep.device.memory_bandwidth.label()}" + (f"; {rates}" if rates else ""))
    for note in rep.notes:
        print(f"note: {note}")
    records = {int(r.get("index", i)): r for i, r in enumerate(result.get("launches") or [])}
    for la in rep.launches:
        for line in _launch_line(la, records.get(la.index, {})):
            print(line)
    for f in rep.findings:
        print(format_finding(path, f))
    if rep.stop_escalation:
        print("every launch runs near its roofline: no rewrite can pay off much (stop here)")
    for err in result.get("errors") or []:
        print(f"runner: {err}", file=sys.stderr)
    ncu = result.get("ncu") or {}
    if ncu.get("error"):
        print(f"ncu: {ncu['error']}", file=sys.stderr)


def format_finding(path: str, f: Finding) -> str:
    gain = f" [gain: {f.estimated_gain}]" if f.estimated_gain else ""
    where = f.data.get("file") or path  # a kernel the harness launched from another file (a library's op)
    text = f"{where}:{f.span.line}:{f.span.col + 1}: {f.code} {f.message}{gain}"
    for ev in f.evidence:
        text += f"\n    evidence ({ev.stage or ev.kind}): {ev.summary}"
    return text
