"""Level 2 pieces shared by the language server and `tritonlens profile`: the profile job's payload, picking a
backend from what a runner reports, and turning the runner's result into a ProfileReport.

Also the harness detection and the measured-ceilings cache; the text report and flags stay in
server/commands/profile.py (no argparse, no printing here).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from typing import Any

from ....analysis.core import devices
from ....analysis.profile import analyze as profiling
from ....analysis.profile.ncu import NcuParseError, parse_source_csv
from ....ascend_runner.protocol import ProfileRequest, profile_request_from
from . import ceilings as ceilings_cache

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
    harness: dict[str, Any], backend: str, *, measure_ceilings: bool = False, ncu: bool = False
) -> ProfileRequest:
    """The `profile` job's typed request for the editor's profile of a file (`harness` as harness_spec makes it);
    ProtocolError names a bad field."""
    return profile_request_from(
        {"harness": harness, "backend": backend, "snapshot": False, "measure_ceilings": measure_ceilings, "ncu": ncu}
    )


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


def backend_from_health(health: Mapping[str, Any]) -> str:
    """cuda when the runner sees an NVIDIA GPU, npu when it sees an Ascend NPU, else interpret (CPU).

    `health` is a runner's health answer (local: {"backends": ...}; remote: {"runner": {"backends": ...}})."""
    runner = health.get("runner", health)
    backends = runner.get("backends", {}) if isinstance(runner, Mapping) else {}
    seen: dict[str, bool] = {"cuda": False, "npu": False}
    for info in backends.values() if isinstance(backends, Mapping) else []:
        if not isinstance(info, Mapping) or not info.get("available"):
            continue
        found = info.get("devices") or (info.get("worker") or {}).get("devices") or {}
        for kind in seen:
            seen[kind] = seen[kind] or bool(found.get(kind))
    if seen["cuda"]:
        return "cuda"
    if seen["npu"]:
        return "npu"
    return "interpret"


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
