"""`run`, `profile` and `verify` jobs, executed inside a runner environment (stdlib + torch + triton).

`handle(kind, payload)` is what the JSON-lines worker (worker/main.py) dispatches to; the payload and result
shapes are the RunRequest / ProfileRequest / VerifyRequest and RunResult / VerifyResult dataclasses of
ascend_runner/protocol.py, as plain dicts (this file cannot import tritonlens). The backend comes from the
job envelope (third argument) or a "backend" key in the payload.

Also a command for tests and GPU scripts: `python run_job.py KIND BACKEND < payload.json > result.json`.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling modules, however we were started

from device_lock import exclusive  # noqa: E402
from harness_backend import Backend, BackendUnavailable, interpret_mode, make_backend  # noqa: E402
from harness_load import (  # noqa: E402
    HarnessError,
    captured_output,
    job_imports,
    kernel_of_launch,
    load_module,
    resolve_entry,
    run_script,
    tail,
)
from harness_models import apply_overrides as _apply_overrides  # noqa: E402
from harness_models import describe_exception as _describe_exception  # noqa: E402
from harness_models import inputs as _inputs  # noqa: E402
from harness_models import kernelbench as _kernelbench  # noqa: E402
from harness_models import make_model as _make_model  # noqa: E402
from harness_record import LaunchRecorder, recording  # noqa: E402
from harness_tolerance import dot_precision  # noqa: E402
from harness_verify import compare  # noqa: E402
from verify_job import verify_job  # noqa: E402

RUN_KINDS = ("run", "profile", "verify")


def handle(kind: str, payload: dict[str, Any], backend: str | None = None) -> dict[str, Any]:
    """Run one job; never raises: failures come back as ok=False with a plain message in `errors`."""
    payload = dict(payload)
    backend = backend or payload.pop("backend", None) or "cuda"
    payload.pop("backend", None)
    start = time.perf_counter()
    base: dict[str, Any] = {"ok": False, "backend": backend, "errors": []}
    if kind not in RUN_KINDS:
        return {**base, "errors": [f"run_job handles {', '.join(RUN_KINDS)}, not {kind!r}"]}
    if _triton_mode_mismatch(backend == "interpret"):
        return _in_fresh_process(kind, payload, backend)
    harness = payload.get("harness") if isinstance(payload.get("harness"), dict) else {}
    try:
        with (
            interpret_mode(backend == "interpret"),
            job_imports(str(harness.get("path", "")), payload.get("workdir")),
        ):
            be = make_backend(backend)
            if kind == "verify":
                out = verify_job(be, payload)
            else:
                out = run_job(be, payload, profile=kind == "profile")
    except (HarnessError, BackendUnavailable) as exc:
        out = {**base, "errors": [str(exc)]}
        if kind == "verify":
            out["passed"] = False
    except Exception as exc:  # the user's code failed: say where, briefly
        out = {**base, "errors": [_describe_exception(exc)]}
        if kind == "verify":
            out["passed"] = False
    out["elapsed_s"] = round(time.perf_counter() - start, 3)
    return out


def _triton_mode_mismatch(interpret: bool) -> bool:
    """Triton decides at import whether its own library kernels (tl.sum, tl.max...) are interpreted: a worker
    that imported triton in the other mode must run this job in a fresh process."""
    standard = sys.modules.get("triton.language.standard")
    if standard is None:
        return False
    interpreted = type(getattr(standard, "sum", None)).__name__ == "InterpretedFunction"
    return interpreted != interpret


def _in_fresh_process(kind: str, payload: dict[str, Any], backend: str) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    if backend == "interpret":
        env["TRITON_INTERPRET"] = "1"
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), kind, backend],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
    )
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"ok": False, "backend": backend, "errors": [f"job process failed: {tail(proc.stderr, 1500)}"]}


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in ("torch", "triton", "numpy", "torch_npu"):
        module = sys.modules.get(name)
        if module is not None:
            out[name] = str(getattr(module, "__version__", "?"))
    return out


def _timing(payload: dict[str, Any]) -> tuple[float, float]:
    timing = payload.get("timing") or {}
    return float(timing.get("warmup_ms", 25.0)), float(timing.get("rep_ms", 100.0))


def run_job(be: Backend, payload: dict[str, Any], profile: bool) -> dict[str, Any]:
    harness = payload["harness"]
    path, source, mode = harness["path"], harness.get("source"), harness["mode"]
    warmup_ms, rep_ms = _timing(payload)
    result: dict[str, Any] = {
        "ok": True,
        "backend": be.name,
        "device": be.describe(),
        "launches": [],
        "timings": {},
        "timing_meaningful": be.timing_meaningful,
        "errors": [],
        "versions": {},
    }
    if getattr(be, "numpy_warning", ""):
        result["errors"].append(be.numpy_warning)
    if payload.get("replay"):
        replay_launch(be, harness, payload["replay"], warmup_ms, rep_ms, result)
        result["versions"] = _versions()
        return result

    want_ncu = profile and bool(payload.get("ncu"))
    snapshot_dir = None
    if payload.get("snapshot") or want_ncu:
        snapshot_dir = payload.get("artifacts_dir") or scratch_dir("tritonlens-snap-")
        os.makedirs(snapshot_dir, exist_ok=True)
    recorder = LaunchRecorder(max_launches=int(payload.get("max_launches", 64)), snapshot_dir=snapshot_dir)
    seed = int(payload.get("seed", 0))
    model = inputs = None
    module = None
    with captured_output() as printed:
        if mode == "kernelbench":
            module = load_module(path, source)
            _kernelbench(module)
            _apply_overrides([module], dict(payload.get("sizes") or {}))
            init = list(module.get_init_inputs())
            model = _make_model(be, module, "ModelNew", init, seed)
            inputs = _inputs(be, module, seed)
            with recording(recorder):
                model(*inputs)
            be.synchronize()
        elif mode == "script":
            started = time.perf_counter()
            try:
                with recording(recorder):
                    run_script(path, source, list(harness.get("argv") or []))
            except HarnessError as exc:  # "exited with status 1" alone does not say why: show what it printed
                said = printed.getvalue().strip()
                raise HarnessError(f"{exc}; it printed: {tail(said, 1500)}" if said else str(exc)) from None
            be.synchronize()
            result["timings"]["script_s"] = round(time.perf_counter() - started, 4)
        elif mode == "entry":
            func = resolve_entry(path, source, harness.get("entry", ""))
            with recording(recorder):
                func()
            be.synchronize()
        else:
            raise HarnessError(f"unknown harness mode {mode!r}")
        if not recorder.launches:
            result["errors"].append("the harness ran but launched no Triton kernel")
        if be.timing_meaningful and mode == "kernelbench" and module is not None:
            result["timings"]["model_ms"] = be.time_ms(lambda: model(*inputs), warmup_ms, rep_ms)
            if payload.get("time_reference", True):
                reference = _make_model(be, module, "Model", init, seed)
                result["timings"]["reference_ms"] = be.time_ms(lambda: reference(*inputs), warmup_ms, rep_ms)
        if payload.get("time_launches", True) and be.timing_meaningful:
            for rec, call in zip(recorder.launches, recorder.callables, strict=True):
                try:
                    rec["time_ms"] = be.time_ms(call, warmup_ms, rep_ms)
                except Exception as exc:
                    result["errors"].append(f"timing {rec['kernel']} failed: {_describe_exception(exc)}")
    result["stdout"] = tail(printed.getvalue())
    result["launches"] = recorder.launches
    result["errors"].extend(recorder.errors)
    if recorder.dropped:
        result["errors"].append(
            f"{recorder.dropped} launch(es) beyond max_launches were run but not recorded"
        )
    if profile and payload.get("measure_ceilings") and be.name == "cuda":
        result["ceilings"] = be.ceilings()
    if want_ncu:
        result["ncu"] = run_ncu(be, harness, recorder.launches, float(payload.get("ncu_timeout_s", 240.0)))
    if snapshot_dir and not payload.get("snapshot") and not payload.get("artifacts_dir"):
        shutil.rmtree(snapshot_dir, ignore_errors=True)  # made only for ncu's replay: nobody asked to keep it
        for rec in recorder.launches:
            rec["snapshot"] = None
    result["versions"] = _versions()
    return result


def replay_launch(
    be: Backend,
    harness: dict[str, Any],
    replay: dict[str, Any],
    warmup_ms: float,
    rep_ms: float,
    result: dict[str, Any],
) -> None:
    """Launch one recorded kernel alone from its snapshot: same arguments, grid and options."""
    torch = be.torch
    try:
        # weights_only: a snapshot is tensors, numbers and strings; never let a file run code on load.
        snap = torch.load(replay["snapshot"], map_location="cpu", weights_only=True)
    except Exception as exc:
        raise HarnessError(f"cannot read snapshot {replay['snapshot']}: {exc}") from None
    rec = snap["record"]
    kernel = kernel_of_launch(harness["path"], harness.get("source"), rec)
    grid = tuple(snap["grid"])

    def fresh() -> tuple[list[Any], dict[str, Any]]:
        return [be.to_device(a) for a in snap["args"]], {
            k: be.to_device(v) for k, v in snap["kwargs"].items()
        }

    args, kwargs = fresh()
    kernel.run(*args, grid=grid, warmup=False, **kwargs)
    be.synchronize()
    outcome: dict[str, Any] = {"snapshot": replay["snapshot"], "kernel": rec["kernel"], "compared": []}
    if replay.get("verify", True):
        passed = True
        for key, expected in snap["after"].items():
            got = args[int(key)] if key.isdigit() else kwargs[key]
            check = compare(got, expected, dot=dot_precision([rec], be.name))
            check["arg"] = rec["args"][int(key)]["name"] if key.isdigit() else key
            outcome["compared"].append(check)
            passed = passed and check["passed"]
        outcome["passed"] = passed
    if be.timing_meaningful:
        rec["time_ms"] = be.time_ms(
            lambda: kernel.run(*args, grid=grid, warmup=False, **kwargs), warmup_ms, rep_ms
        )
    result["launches"] = [rec]
    result["replay"] = outcome


def scratch_dir(prefix: str) -> str:
    """A temporary folder inside the worker's private scratch (removed with the worker), else in the system's
    temporary folder (a standalone run_job)."""
    return tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TRITONLENS_WORKER_SCRATCH") or None)


def run_ncu(be: Backend, harness: dict[str, Any], launches: list[dict[str, Any]], timeout_s: float) -> dict:
    """Nsight Compute source view of the slowest recorded launch, replayed alone from its snapshot."""
    ncu = shutil.which("ncu")
    if be.name != "cuda":
        return {"error": "ncu profiles NVIDIA GPUs only"}
    if ncu is None:
        return {"error": "ncu (Nsight Compute) is not on PATH on this runner"}
    timed = [r for r in launches if r.get("snapshot")]
    if not timed:
        return {"error": "no launch with a snapshot to replay under ncu"}
    target = max(timed, key=lambda r: (r.get("time_ms") or {}).get("median", 0.0))
    work = scratch_dir("tritonlens-ncu-")
    try:
        with exclusive():  # counters and ncu's own times mean nothing beside another job's kernels
            return _run_ncu_in(work, ncu, harness, target, timeout_s)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_ncu_in(work: str, ncu: str, harness: dict[str, Any], target: dict[str, Any], timeout_s: float) -> dict:
    payload = {"harness": harness, "replay": {"snapshot": target["snapshot"], "verify": False}}
    payload_path = os.path.join(work, "payload.json")
    with open(payload_path, "w", encoding="utf-8") as fh:
        json.dump({**payload, "time_launches": False}, fh)
    report = os.path.join(work, "report")
    cmd = [
        ncu,
        "--clock-control",
        "none",
        "--set",
        "full",
        "--import-source",
        "yes",
        "-k",
        f"regex:^{target['kernel']}$",
        "-c",
        "1",
        "-o",
        report,
        "-f",
        sys.executable,
        os.path.abspath(__file__),
        "ncu-replay",
        "cuda",
        payload_path,
    ]
    out: dict[str, Any] = {"kernel": target["kernel"], "launch": target["index"], "file": target["file"]}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        if proc.returncode != 0 or not os.path.exists(report + ".ncu-rep"):
            return {
                **out,
                "error": f"ncu failed ({proc.returncode}): {tail(proc.stdout + proc.stderr, 1500)}",
            }
        src = subprocess.run(
            [ncu, "--import", report + ".ncu-rep", "--page", "source", "--csv", "--print-source=cuda,sass"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        details = subprocess.run(
            [ncu, "--import", report + ".ncu-rep", "--page", "details", "--print-rule-details"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        out["source_csv"] = src.stdout[:8_000_000]
        out["details"] = details.stdout[:400_000]
        if src.returncode != 0:
            out["error"] = f"ncu --page source failed: {tail(src.stderr, 1000)}"
    except subprocess.TimeoutExpired:
        out["error"] = f"ncu took longer than {timeout_s:.0f} s"
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(
            "usage: run_job.py run|profile|verify|ncu-replay BACKEND [PAYLOAD.json] < payload",
            file=sys.stderr,
        )
        return 2
    kind, backend = argv[0], argv[1]
    text = open(argv[2], encoding="utf-8").read() if len(argv) > 2 else sys.stdin.read()
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        print(json.dumps({"ok": False, "errors": [f"payload is not JSON: {exc}"]}))
        return 2
    result = handle("run" if kind == "ncu-replay" else kind, payload, backend)
    print(json.dumps(result, default=repr))
    return 0 if result.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
