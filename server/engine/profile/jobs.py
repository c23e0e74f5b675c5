"""Level 2 pieces shared by the language server and `tritonlens profile`: the profile job's payload, picking a
backend from what a runner reports, and turning the runner's result into a ProfileReport.

Also the harness detection and the measured-ceilings cache; the text report and flags stay in
server/commands/profile.py (no argparse, no printing here).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ....analysis.core import devices
from ....analysis.profile import analyze as profiling
from ....analysis.profile.ncu import NcuParseError, parse_source_csv
from ....ascend_runner.protocol import ProfileRequest, profile_request_from
from . import ceilings as ceilings_cache

if TYPE_CHECKING:  # the runner client is imported where a runner is made, not by the engine
    from ....ascend_runner.client import Runner

DEFAULT_PROFILE_TIMEOUT_S = 600.0
BACKEND_CHOICES = ("cuda", "npu", "interpret")


def detect_harness(source: str) -> str:
    """kernelbench if the module defines ModelNew and get_inputs at top level, else script."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return "script"
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    return "kernelbench" if {"ModelNew", "get_inputs", "get_init_inputs"} <= names else "script"


def harness_spec(path: str, source: str, harness: str, argv: list[str]) -> dict[str, Any]:
    mode = detect_harness(source) if harness == "auto" else harness
    spec: dict[str, Any] = {"mode": mode, "path": os.path.abspath(path), "source": source, "argv": argv}
    if mode not in ("kernelbench", "script"):
        spec.update(mode="entry", entry=harness)
    return spec


def load_measured(device_name: str | None) -> dict[str, Any] | None:
    return ceilings_cache.load(device_name)


def save_measured(
    device_name: str, ceilings: dict[str, Any], runner: str | None = None, backend: str | None = None
) -> None:
    ceilings_cache.save(device_name, ceilings, runner, backend)


def profile_request(
    harness: dict[str, Any],
    backend: str,
    *,
    measure_ceilings: bool = False,
    ncu: bool = False,
    sizes: dict[str, int] | None = None,
) -> ProfileRequest:
    """The `profile` job's typed request for the editor's profile of a file (`harness` as harness_spec makes it;
    `sizes`: module globals to run a KernelBench task at, e.g. its smallest TEST_SHAPES entry under interpret);
    ProtocolError names a bad field."""
    raw: dict[str, Any] = {
        "harness": harness, "backend": backend, "snapshot": False, "measure_ceilings": measure_ceilings, "ncu": ncu
    }
    if sizes:
        raw["sizes"] = dict(sizes)
    return profile_request_from(raw)


def interpret_sizes(source: str, mode: str) -> tuple[dict[str, int], str | None]:
    """Under `interpret` (the CPU) a KernelBench task runs at its smallest `TEST_SHAPES` entry, not at the
    benchmark size (minutes on the CPU). Returns the size overrides and a note that says which, or why none."""
    if mode != "kernelbench":
        return {}, None
    from ..optimize.shapes import declared_test_shapes

    declared = [
        {k: v for k, v in d.items() if isinstance(k, str) and type(v) is int}
        for d in declared_test_shapes(source) or []
    ]
    declared = [d for d in declared if d]
    if not declared:
        return {}, (
            "interpret: no TEST_SHAPES in the file, so it runs at the sizes as written (slow on the CPU); "
            "add TEST_SHAPES (bench/README.md) to profile at a small shape"
        )

    def volume(d: dict[str, int]) -> int:
        out = 1
        for v in d.values():
            out *= max(1, v)
        return out

    small = min(declared, key=volume)
    shown = ", ".join(f"{k}={v}" for k, v in small.items())
    return small, f"interpret: at the smallest TEST_SHAPES entry ({shown}), not the benchmark size"


def local_devices(dev: str = "/dev") -> dict[str, list[str]]:
    """Accelerators this machine exposes, as the runner worker's health job lists them (no torch import)."""
    try:
        names = os.listdir(dev)
    except OSError:
        names = []
    return {
        "cuda": sorted(n for n in names if n.startswith("nvidia") and n[6:].isdigit()),
        "npu": sorted(n for n in names if n.startswith("davinci") and n[7:].isdigit()),
    }


def _sightings(health: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The devices each available backend's worker reported (local: {"runner": "local", "backends": ...};
    remote: {"runner": {"backends": ...}})."""
    runner = health.get("runner")
    if not isinstance(runner, Mapping):
        runner = health  # local: {"runner": "local", "backends": ...}
    backends = runner.get("backends", {})
    out = []
    for info in backends.values() if isinstance(backends, Mapping) else []:
        if isinstance(info, Mapping) and info.get("available"):
            found = info.get("devices") or (info.get("worker") or {}).get("devices")
            if isinstance(found, Mapping):
                out.append(found)
    return out


def backend_from_health(health: Mapping[str, Any]) -> str:
    """cuda when the runner sees an NVIDIA GPU, npu when it sees an Ascend NPU, else interpret (CPU).

    `health` is a runner's health answer (local: {"backends": ...}; remote: {"runner": {"backends": ...}})."""
    seen = _sightings(health)
    for kind in ("cuda", "npu"):
        if any(_sees(found, kind) for found in seen):
            return kind
    return "interpret"


def _sees(found: Mapping[str, Any], kind: str) -> bool:
    """Device nodes of `kind`, or (CUDA) GPUs the driver counts where /dev lists none (some containers)."""
    return bool(found.get(kind)) or bool(found.get(f"{kind}_driver"))


def runner_lacks_device(runner: Runner, backend: str) -> str | None:
    """device_missing on the runner's own health answer; None when it cannot answer (the jobs will tell)."""
    if backend == "interpret":
        return None
    try:
        health = runner.health()
    except Exception:  # noqa: BLE001 - an unreachable or busy runner: no verdict here
        return None
    return device_missing(health, backend) if isinstance(health, Mapping) else None


def device_missing(health: Mapping[str, Any], backend: str) -> str | None:
    """Why `backend` cannot time anything on this runner, when a worker answered and saw no such device; None
    when one did, or when no worker said (a busy or remote pool: the jobs will tell)."""
    seen = _sightings(health)
    if backend == "interpret" or not seen or any(_sees(found, backend) for found in seen):
        return None
    device = {"cuda": "NVIDIA GPU", "npu": "Ascend NPU"}.get(backend, backend)
    return (f"the runner's workers see no {device}, which backend '{backend}' runs and times candidates on; "
            "verify on the CPU with --backend interpret (correctness only, no timing), or point --runner at a "
            "machine that has one")


def backend_setting(raw: Any) -> str | None:
    """`tritonlens.profileBackend` if it names a backend; None for "auto" or nothing."""
    return raw if isinstance(raw, str) and raw in BACKEND_CHOICES else None


def reply_error(reply: Mapping[str, Any]) -> str:
    error = reply.get("error")
    if isinstance(error, Mapping):
        return str(error.get("message") or error.get("kind") or "the runner failed")
    return str(error or "the runner gave no reason")


def reply_unavailable(reply: Mapping[str, Any]) -> bool:
    """The runner has no environment for the job's backend (as opposed to the user's code failing)."""
    error = reply.get("error")
    reason = error.get("reason") if isinstance(error, Mapping) else None
    return reason == "unavailable" or "not set up" in reply_error(reply)


def analyze_result(
    result: dict[str, Any], path: str, source: str, runner: str | None = None
) -> profiling.ProfileReport:
    """The report `tritonlens profile` prints, from a RunResult dict (ceilings measured by it are cached, per
    device and for the runner that reached it)."""
    device_info = result.get("device") or {}
    measured = result.get("ceilings") or None
    if measured and device_info.get("name"):
        save_measured(device_info["name"], measured, runner, result.get("backend"))
    else:
        measured = load_measured(device_info.get("name"))
    device = devices.from_runner(device_info, measured) if device_info else None
    ncu_view = None
    ncu_raw = result.get("ncu") or {}
    if ncu_raw.get("source_csv"):
        try:
            ncu_view = parse_source_csv(ncu_raw["source_csv"])
        except NcuParseError as exc:
            result.setdefault("errors", []).append(f"ncu source view unreadable: {exc}")
    return profiling.analyze_run(
        result,
        device,
        source=source,
        path=os.path.abspath(path),
        ncu=ncu_view,
        other_sources=launch_sources(result, path),
    )


def launch_sources(result: Mapping[str, Any], path: str, limit_bytes: int = 2_000_000) -> dict[str, str]:
    """The text of each other file whose kernels the harness launched (a script calling a library's ops), where
    this machine can read it: their findings' lines are in those files."""
    out: dict[str, str] = {}
    mine = os.path.abspath(path)
    for rec in result.get("launches") or []:
        file = rec.get("file") if isinstance(rec, Mapping) else None
        if not isinstance(file, str) or file in out or os.path.abspath(file) == mine:
            continue
        try:
            if os.path.getsize(file) <= limit_bytes:
                with open(file, encoding="utf-8") as fh:
                    out[file] = fh.read()
        except (OSError, UnicodeDecodeError):
            continue  # a remote runner's path, or unreadable: the findings keep their file and line, no span text
    return out
