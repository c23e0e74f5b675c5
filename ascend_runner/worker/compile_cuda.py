"""Compile one kernel of an editor buffer for an NVIDIA target with upstream Triton; no GPU needed.

Runs inside the CUDA runner environment (stdlib + triton; never imports tritonlens). Input is a
CompileRequest dict (see ascend_runner/protocol.py), output a CompileResult dict: every stage's text
(ttir, ttgir, llir, ptx, sass with source lines), the compiler's metadata, and resources from ptxas -v
and cuobjdump -res-usage. Any failure becomes a StageError dict naming the stage and, when known, the
1-based source line of the request's buffer.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import time
from typing import Any

from compile_cuda_errors import capture_fd2, diagnostic_error, frontend_error, ptx_line_to_source, stage_error
from compile_only_cuda import DEVICES, compile_only
from cuda_binary import parse_resources, sass_and_usage
from source_module import (
    LoadedSource,
    SourceError,
    decode_constants,
    find_jit,
    kernel_missing,
    load_alone,
    load_source,
    merged_warnings,
    needs_alone,
)

CUDA_TARGETS = {"sm_80": 80, "sm_86": 86, "sm_89": 89, "sm_90": 90, "sm_100": 100}
STAGE_ORDER = ("ttir", "ttgir", "llir", "ptx", "sass")
# Options a request may pass through to Triton's CUDA backend.
ALLOWED_OPTIONS = {
    "num_warps",
    "num_stages",
    "num_ctas",
    "maxnreg",
    "enable_fp_fusion",
    "launch_cooperative_grid",
    "default_dot_input_precision",
    "max_num_imprecise_acc_default",
    "debug",
    "sanitize_overflow",
    "arch",
    "ptx_version",
}
# Options read by this module itself, not passed to Triton.
TRITONLENS_OPTIONS = {"sass"}


def _failed(
    req: dict[str, Any], errors: list[dict[str, Any]], started: float, **extra: Any
) -> dict[str, Any]:
    return {
        "ok": False,
        "target": str(req.get("target", "")),
        "stages": extra.get("stages", {}),
        "metadata": extra.get("metadata", {}),
        "resources": {},
        "errors": errors,
        "compiler": _compiler_version(),
        "elapsed_s": time.perf_counter() - started,
    }


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _compiler_version() -> str:
    try:
        import triton

        return f"triton {triton.__version__}"
    except Exception:  # the error about triton itself is reported where it is imported
        return "triton (not importable)"


def _find_kernel(loaded: LoadedSource, name: str) -> Any:
    from triton.runtime.jit import JITFunction

    # @triton.autotune / @triton.heuristics wrap the JITFunction; `k = triton.jit(f)` binds it to another name.
    obj = find_jit(loaded.module.__dict__, name, JITFunction)
    if obj is None and loaded.define_nested(name):  # a kernel defined inside a function
        obj = find_jit(loaded.module.__dict__, name, JITFunction)
    if obj is not None:
        return obj
    kernels = sorted(k for k, v in loaded.module.__dict__.items() if isinstance(v, JITFunction))
    found = f"; @triton.jit functions in the file: {', '.join(kernels)}" if kernels else "; the file has none"
    hint = ""
    if name in loaded.module.__dict__:
        hint = f" ({name!r} is a {type(loaded.module.__dict__[name]).__name__}, not a @triton.jit function)"
    else:
        for warning in loaded.warnings:
            hint = f" (a top-level statement at line {warning['line']} failed: {warning['message']})"
            break
    raise SourceError(f"no @triton.jit function named {name!r}{hint}{found}")


def _source_spec(fn: Any, req: dict[str, Any]) -> Any:
    """Build Triton's ASTSource from the request's signature, constants and divisibility hints."""
    from triton.compiler import ASTSource

    signature = dict(req.get("signature") or {})
    constants = decode_constants(dict(req.get("constants") or {}))
    names = list(fn.arg_names)
    missing = [a for a in names if a not in signature and a not in constants]
    unknown = [a for a in list(signature) + list(constants) if a not in names]
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"no type or value for {', '.join(missing)}")
        if unknown:
            parts.append(f"{', '.join(sorted(set(unknown)))} not parameters of the kernel")
        raise SourceError(f"signature does not match {fn.__name__}({', '.join(names)}): {'; '.join(parts)}")
    full_sig = {a: signature.get(a, "constexpr") for a in names}
    for a in names:
        if full_sig[a] == "constexpr" and a not in constants:
            raise SourceError(f"constexpr argument {a!r} needs a value in constants")
    divisible = set(req.get("divisibility") or [])
    attrs = {(names.index(a),): [["tt.divisibility", 16]] for a in names if a in divisible}
    return ASTSource(fn, full_sig, {a: constants[a] for a in names if a in constants}, attrs=attrs)


def _clear_private_cache() -> None:
    """Triton wrote every stage into its cache; in a worker-private cache nobody will read them again."""
    folder = os.environ.get("TRITON_CACHE_DIR")
    if os.environ.get("TRITONLENS_WORKER_OWNS_CACHE") != "1" or not folder or not os.path.isdir(folder):
        return
    for entry in os.listdir(folder):
        shutil.rmtree(os.path.join(folder, entry), ignore_errors=True)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "_asdict"):
        return _jsonable(value._asdict())
    return str(value)


def compile_kernel(req: dict[str, Any]) -> dict[str, Any]:
    """Compile req["kernel"] of req["source"] for req["target"]; never raises for a bad kernel."""
    started = time.perf_counter()
    cpu_started = _cpu_seconds()
    target = str(req.get("target", ""))
    if target not in CUDA_TARGETS:
        return _failed(
            req, [stage_error("worker", f"{target!r} is not a CUDA target ({', '.join(CUDA_TARGETS)})")], started
        )
    path = str(req.get("path") or "<buffer>")
    try:
        import triton
        from triton import knobs
        from triton.backends.compiler import GPUTarget
    except Exception as exc:
        return _failed(
            req, [stage_error("worker", f"cannot import triton in the CUDA environment: {exc}")], started
        )

    # Kernel files ask the driver about the device at import time, and Triton's front end asks it during
    # the compile (tl.target_info, TMA support): on a machine without a GPU a stand-in answers for `target`.
    with compile_only(target) as standing_in:
        try:
            loaded = load_source(str(req.get("source", "")), path, req.get("workdir") or None)
        except SourceError as exc:
            return _failed(req, [stage_error("frontend", exc.message, exc.line, exc.col)], started)
        try:
            result = _compile_loaded(req, loaded, target, triton, knobs, GPUTarget, started)
        finally:
            loaded.close()
        if not result["ok"] and needs_alone(loaded, result["errors"], str(req.get("kernel", ""))):
            result = _compile_alone(req, loaded, result, (triton, knobs, GPUTarget), started)
    if standing_in:
        result["metadata"]["device"] = f"compile-only stand-in (no GPU here): {DEVICES[target].name}"
    # CPU time of this process and the tools it ran (ptxas, nvdisasm): unlike wall time, not inflated
    # by other work on a busy machine.
    result["metadata"]["cpu_seconds"] = round(_cpu_seconds() - cpu_started, 4)
    return result


def _compile_alone(
    req: dict[str, Any],
    first: LoadedSource,
    failed: dict[str, Any],
    tools: tuple[Any, Any, Any],
    started: float,
) -> dict[str, Any]:
    """The kernel built from the file's source alone (source_alone.py), labeled as such; the first failure
    when even that does not define the kernel."""
    try:
        built = load_alone(
            first, str(req.get("source", "")), str(req.get("kernel", "")), req.get("workdir") or None
        )
    except SourceError:
        return failed
    if built is None:
        return failed
    alone, label = built
    try:
        result = _compile_loaded(req, alone, str(req.get("target", "")), *tools, started)
    finally:
        alone.close()
    if kernel_missing(result["errors"]):
        return failed
    result["metadata"]["source_alone"] = label
    result["metadata"]["module_warnings"] = merged_warnings(first, alone)
    return result


def _compile_loaded(
    req: dict[str, Any],
    loaded: LoadedSource,
    target: str,
    triton: Any,
    knobs: Any,
    gpu_target: Any,
    started: float,
) -> dict[str, Any]:
    path = str(req.get("path") or "<buffer>")
    try:
        fn = _find_kernel(loaded, str(req.get("kernel", "")))
        spec = _source_spec(fn, req)
    except SourceError as exc:
        failed = _failed(req, [stage_error("frontend", exc.message, exc.line, exc.col)], started)
        failed["metadata"]["module_warnings"] = loaded.warnings  # a failed import explains a missing kernel
        return failed

    options = {k: v for k, v in (req.get("options") or {}).items() if k in ALLOWED_OPTIONS}
    unknown = sorted(set(req.get("options") or {}) - ALLOWED_OPTIONS - TRITONLENS_OPTIONS)
    # options["sass"] = False skips the disassembly (the costliest step of a small kernel's compile).
    want_sass = (req.get("options") or {}).get("sass", True) is not False
    current = {"stage": "frontend"}
    timings: dict[str, float] = {}
    produced: dict[str, str] = {}

    def hook(backend: Any, stages: dict[str, Any], opts: Any, language: Any, capability: Any) -> None:
        # Wrap each stage to know which one failed and how long each took.
        for name, run in list(stages.items()):

            def timed(src: Any, metadata: Any, _name: str = name, _run: Any = run) -> Any:
                current["stage"] = "ptxas" if _name == "cubin" else _name
                t0 = time.perf_counter()
                out = _run(src, metadata)
                timings[_name] = time.perf_counter() - t0
                if isinstance(out, str):
                    produced[_name] = out  # text stages kept to explain a later stage's failure
                return out

            stages[name] = timed

    ptxas_log = io.StringIO()
    knobs.compilation.always_compile = True  # Triton's own cache would skip ptxas and its -v report
    knobs.nvidia.dump_ptxas_log = True
    knobs.runtime.add_stages_inspection_hook = hook
    try:
        with capture_fd2() as diag, contextlib.redirect_stdout(ptxas_log):
            compiled = triton.compile(
                spec, target=gpu_target("cuda", CUDA_TARGETS[target], 32), options=options
            )
    except Exception as exc:
        stage = current["stage"]
        if stage == "frontend":
            warnings = {"module_warnings": loaded.warnings}  # a failed import may be why the front end failed
            return _failed(req, [frontend_error(exc, loaded)], started, metadata=warnings)
        text = f"{type(exc).__name__}: {exc}\n{diag.get('text', '')}"
        error = diagnostic_error(stage, text, path)
        if stage == "ptxas" and error["line"] is None and "ptx" in produced:
            error["line"] = ptx_line_to_source(produced["ptx"], text)
        return _failed(req, [error], started, stages=produced)
    finally:
        knobs.runtime.add_stages_inspection_hook = None
        _clear_private_cache()

    asm = compiled.asm
    stages = {name: asm[name] for name in ("ttir", "ttgir", "llir", "ptx") if name in asm}
    metadata = _jsonable(compiled.metadata._asdict())
    metadata.pop("extern_libs", None)  # local file paths, no use to analysis
    metadata["stage_seconds"] = timings
    metadata["module_warnings"] = loaded.warnings
    if unknown:
        metadata["ignored_options"] = unknown
    try:
        sass, res_usage = sass_and_usage(asm["cubin"], disassemble=want_sass)
        if sass is not None:
            stages["sass"] = sass
    except (OSError, subprocess.SubprocessError) as exc:
        res_usage = ""  # the compile itself succeeded: say what is missing, keep the rest
        metadata["sass_error"] = f"could not disassemble the cubin: {exc}"
    metadata["cubin_bytes"] = len(asm.get("cubin", b""))
    return {
        "ok": True,
        "target": target,
        "stages": stages,
        "metadata": metadata,
        "resources": parse_resources(ptxas_log.getvalue(), res_usage, metadata),
        "errors": [],
        "compiler": f"triton {triton.__version__}",
        "elapsed_s": time.perf_counter() - started,
    }


_WARM_UP_SOURCE = """
import triton
import triton.language as tl


@triton.jit
def warm_up_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)
"""


def warm_up() -> None:
    """Compile a tiny kernel once so MLIR, LLVM, ptxas and nvdisasm are loaded before the first real job."""
    compile_kernel(
        {
            "source": _WARM_UP_SOURCE,
            "path": "<tritonlens-warm-up>",
            "kernel": "warm_up_kernel",
            "signature": {"x_ptr": "*fp32", "n": "i32"},
            "constants": {"BLOCK": 256},
            "divisibility": ["x_ptr"],
            "target": "sm_90",
            "options": {"num_warps": 4},
        }
    )
