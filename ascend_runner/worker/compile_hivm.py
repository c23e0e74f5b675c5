"""The `hivm` stage: run BiSheng's MLIR pipeline (`bishengir-compile`) on triton-ascend's ttadapter text.

Stdlib only (runs under the ascend environment's Python, imported by compile_ascend.py, never tritonlens).
The PyPI package `ascendnpu-ir` ships `bishengir-compile` (Ascend910B*/910_93 targets) and
`bishengir-compile-a5` (the Ascend 950 family). Both run every HFusion and HIVM pass on a CPU; the last,
external step (`hivmc`, part of CANN) is absent here, so a successful run ends with "Cannot find hivmc":
no device binary, and therefore no timing. What the run gives is every decision the pipeline made:
the final HIVM module (`--save-temps` keeps `module.hivm.opt.mlir`), the dumps after the passes that matter
(`--mlir-print-ir-after=...`, with locations), and the compiler's diagnostics (UB overflow with its numbers,
the retries it made).

The options are the ones triton-ascend's `linalg_to_bin_enable_npu_compile_{A2_A3,910_95}` pass.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
import time
from typing import Any

# Passes whose dumps the analysis reads (pass argument -> stage name suffix). Asking the compiler for these
# only is ~5x faster than --mlir-print-ir-after-all and keeps the stored text small.
PASS_DUMPS: dict[str, str] = {
    "hivm-insert-load-store-for-scalar": "scalar",
    "hivm-infer-func-core-type": "core-type",
    "hivm-mark-multi-buffer": "multibuffer",
    "cv-pipelining": "cv-pipelining",
    "hivm-split-mix-kernel": "split-mix",
    "hivm-bind-sub-block": "bind-sub-block",
    "hivm-plan-memory": "plan-memory",
    "hivm-graph-sync-solver": "sync",
    "hivm-inject-sync": "sync",
    "hivm-enable-multi-buffer": "enable-multibuffer",
}
DEFAULT_TIMEOUT_S = 60.0
HIVMC_MISSING_RE = re.compile(r"Cannot find hivmc(?:-a5)? under \$PATH")
_DUMP_HEADER_RE = re.compile(r"^// -----// IR Dump After (\w+)( Failed)? \(([\w-]+)\) //----- //$")
_RETRY_RE = re.compile(r"^\[NOTE\] .*retrying compilation", re.IGNORECASE)
# Bytes of dump text kept per pass stage: a huge kernel's dumps must not bloat the cache.
MAX_DUMP_CHARS = 400_000


def find_compiler(a5: bool) -> str | None:
    """bishengir-compile[-a5]: $TRITONLENS_BISHENGIR_DIR, then the ascendnpu-ir package, then PATH."""
    name = "bishengir-compile-a5" if a5 else "bishengir-compile"
    candidates: list[str] = []
    override = os.environ.get("TRITONLENS_BISHENGIR_DIR")
    if override:
        candidates.append(os.path.join(override, name))
    try:
        spec = importlib.util.find_spec("ascendnpuir")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            candidates.append(os.path.join(folder, "bin", name))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return shutil.which(name)


def _flag(name: str, value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, bool):
        value = "true" if value else "false"
    return [f"--{name}={value}"]


def compile_options(soc: str, on_910_95: bool, opts: dict[str, Any]) -> list[str]:
    """The option list triton-ascend passes for this target (NPUOptions fields in `opts`), debug info on."""
    out = [f"--target={soc}"]
    out += _flag("enable-auto-multi-buffer", opts.get("multibuffer"))
    out += _flag("enable-auto-bind-sub-block", opts.get("enable_auto_bind_sub_block"))
    out.append("--enable-debug-info=true")  # locations: the stage is attributed to source lines through them
    out += _flag("enable-hivm-auto-cv-balance", opts.get("enable_hivm_auto_cv_balance"))
    if not on_910_95:
        out += _flag("enable-hivm-graph-sync-solver", opts.get("sync_solver"))
    out += _flag("enable-hivm-unit-flag-sync", opts.get("unit_flag"))
    out += _flag("enable-hivm-inject-barrier-all-sync", opts.get("inject_barrier_all"))
    if not on_910_95:
        out += _flag("enable-hivm-inject-block-all-sync", opts.get("inject_block_all"))
    for key in (
        "limit_auto_multi_buffer_only_for_local_buffer",
        "set_workspace_multibuffer",
        "tile_mix_vector_loop",
        "tile_mix_cube_loop",
        "limit_auto_multi_buffer_of_local_buffer",
    ):
        out += _flag(key.replace("_", "-"), opts.get(key))
    if not on_910_95:
        out += _flag("disable-auto-inject-block-sync", opts.get("disable_auto_inject_block_sync"))
    out += ["--enable-hfusion-compile=true"]
    if not on_910_95:
        out.append("--enable-hivm-compile=true")
    out.append("--enable-triton-kernel-compile=true")
    return out


def _input_text(ttadapter: str) -> str:
    # triton-ascend strips the mix_mode attribute before handing the text to bishengir (_parse_linalg_metadata).
    return re.sub(r', mix_mode\s*=\s*"[^"]*"', "", ttadapter)


def split_output(stderr: str) -> tuple[dict[str, str], str, int]:
    """(stage suffix -> dumps of the last attempt, diagnostic lines, attempts) from the compiler's stderr.

    The pipeline retries after a UB overflow (without code motion, then without multibuffer); a retry
    starts a new attempt, and only the last attempt's dumps describe the module it ended with.
    """
    dumps: dict[str, list[str]] = {}
    log: list[str] = []
    current: list[str] | None = None
    attempts = 1
    for line in stderr.splitlines():
        header = _DUMP_HEADER_RE.match(line)
        if header:
            suffix = PASS_DUMPS.get(header.group(3), header.group(3))
            current = dumps.setdefault(suffix, [])
            current.append(line)
            continue
        if line.startswith("[") or " error: " in line or " warning: " in line or " note: " in line:
            log.append(line)
            current = None
            if _RETRY_RE.match(line):
                attempts += 1
                dumps = {}
            continue
        if current is not None:
            current.append(line)
    texts = {k: "\n".join(v).strip() + "\n" for k, v in dumps.items()}
    return {k: v[:MAX_DUMP_CHARS] for k, v in texts.items()}, "\n".join(log) + ("\n" if log else ""), attempts


def pipeline_errors(log: str) -> list[str]:
    """The compiler's own error lines, without the expected end (no hivmc) and the generic summary line."""
    return [
        ln
        for ln in log.splitlines()
        if " error: " in ln and "External hivmc run fails" not in ln and "Failed to run BiSheng" not in ln
    ]


def run_hivm(
    ttadapter: str, soc: str, on_910_95: bool, opts: dict[str, Any], timeout_s: float = DEFAULT_TIMEOUT_S
) -> dict[str, Any]:
    """Run bishengir-compile on `ttadapter`; returns {"status", "stages", "log", "command", ...}.

    status: "hivmc-missing" (the whole pipeline ran; expected without CANN), "binary" (a device binary was
    produced: CANN is installed), "failed" (the pipeline stopped, see log), "timeout", "unavailable".
    Everything runs in a private temporary directory that is removed on every path.
    """
    compiler = find_compiler(on_910_95)
    if compiler is None:
        return {
            "status": "unavailable",
            "message": "bishengir-compile not found: install ascendnpu-ir (scripts/bootstrap --all)",
            "stages": {},
            "log": "",
        }
    options = compile_options(soc, on_910_95, opts)
    dump_flag = "--mlir-print-ir-after=" + ",".join(PASS_DUMPS)
    started, cpu_started = time.monotonic(), _children_cpu()
    with tempfile.TemporaryDirectory(prefix="tritonlens-hivm-") as tmp:
        src = os.path.join(tmp, "kernel.ttadapter.mlir")
        with open(src, "w", encoding="utf-8") as f:
            f.write(_input_text(ttadapter))
        temps = os.path.join(tmp, "temps")
        os.mkdir(temps)
        cmd = [
            compiler,
            src,
            *options,
            dump_flag,
            "--mlir-print-debuginfo",
            "--mlir-disable-threading",  # dumps of different functions must not interleave
            f"--save-temps={temps}",
            "-o",
            os.path.join(tmp, "kernel"),
        ]
        try:
            proc = subprocess.run(
                cmd, cwd=tmp, capture_output=True, text=True, errors="replace", timeout=timeout_s
            )
        except subprocess.TimeoutExpired:
            return {
                "status": "timeout",
                "message": f"bishengir-compile did not finish in {timeout_s:g} s",
                "stages": {},
                "log": "",
                "command": _public_command(cmd, tmp),
            }
        dumps, log, attempts = split_output(proc.stderr)
        stdout = proc.stdout.strip()
        if stdout:
            log = stdout + "\n" + log
        stages = {f"hivm.{k}": v for k, v in dumps.items()}
        final = os.path.join(temps, "module.hivm.opt.mlir")
        if os.path.isfile(final):
            with open(final, encoding="utf-8", errors="replace") as f:
                stages = {"hivm": f.read(), **stages}
        binary = os.path.join(tmp, "kernel.o")
        if proc.returncode == 0 and os.path.isfile(binary):
            status = "binary"
        elif pipeline_errors(log):
            status = "failed"  # e.g. a UB overflow: the pipeline itself stopped
        elif HIVMC_MISSING_RE.search(proc.stderr):
            status = "hivmc-missing"
        else:
            status = "failed"
        return {
            "status": status,
            "returncode": proc.returncode,
            "stages": stages,
            "log": log,
            "attempts": attempts,
            "command": _public_command(cmd, tmp),
            "elapsed_s": round(time.monotonic() - started, 3),
            "cpu_s": round(_children_cpu() - cpu_started, 3),
        }


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def _public_command(cmd: list[str], tmp: str) -> str:
    # The temporary directory is gone when the result is read: name its files generically.
    return " ".join(os.path.basename(cmd[0]) if i == 0 else a.replace(tmp, "$TMP") for i, a in enumerate(cmd))
