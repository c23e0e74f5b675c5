"""Compile one Triton kernel with triton-ascend 3.2 and return every stage's text (a runner worker).

Runs under the ascend environment's own Python (started by file path): stdlib + triton-ascend only, never
tritonlens. Usage: `python compile_ascend.py < request.json > result.json`, where the request is a
CompileRequest dict (or a job envelope holding one in "payload") and the result a CompileResult dict.

What works without CANN (x86, no NPU): the front end (Python AST -> ttir) and triton-ascend's
`triton-adapter-opt` (ttir -> ttadapter, the linalg/hivm MLIR handed to bishengir). Both carry source
locations when TRITON_DISABLE_LINE_INFO=0. The binary stage (npubin) needs CANN's `bishengir-compile` on PATH;
without it the result says so in metadata["npubin"] and no binary, UB size or task type is reported.

We drive the backend's stage functions ourselves instead of `triton.compile`: that function resolves the
active driver (absent without CANN), writes to the kernel cache and always runs npubin.
"""

from __future__ import annotations

import linecache
import os
import re
import shutil
import sys
import time
import traceback
import types
import warnings
from typing import Any

# Locations must be on before triton's backend module reads the variable.
os.environ["TRITON_DISABLE_LINE_INFO"] = "0"
# bishengir prints "UB size = N bits" only when asked.
os.environ.setdefault("ENABLE_PRINT_UB_BITS", "1")

# Request target -> (SoC name bishengir and TRITON_ASCEND_ARCH use, compile for the 910_95 family).
TARGETS: dict[str, tuple[str, bool]] = {
    "ascend910b1": ("Ascend910B1", False),
    "ascend910b2": ("Ascend910B2", False),
    "ascend910b3": ("Ascend910B3", False),
    "ascend910b4": ("Ascend910B4", False),
    "ascend910_9391": ("Ascend910_9391", False),
    "ascend950": ("Ascend910_9599", True),
}
# The name bishengir-compile(-a5) knows the SoC by, where it differs from triton-ascend's.
BISHENG_TARGETS = {"ascend950": "Ascend950PR_9599"}
_LOC_RE = re.compile(r'loc\("(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)\)')
_DIAG_RE = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.*)$", re.MULTILINE)


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _error(stage: str, message: str, line: int | None = None, col: int | None = None) -> dict[str, Any]:
    return {"stage": stage, "message": message.strip()[:4000], "line": line, "col": col}


def _result(req: dict[str, Any], compiler: str) -> dict[str, Any]:
    return {
        "ok": False,
        "target": str(req.get("target", "")),
        "stages": {},
        "metadata": {},
        "resources": {},
        "errors": [],
        "compiler": compiler,
        "elapsed_s": 0.0,
        "cached": False,
    }


def _triton_version() -> str:
    try:
        from importlib.metadata import version

        return f"triton-ascend {version('triton-ascend')}"
    except Exception:  # noqa: BLE001 - the version is informative only
        return "triton-ascend (unknown version)"


def _ensure_pybind11() -> None:
    # triton-ascend's backend imports pybind11 at module level only to build its NPU launcher, which a
    # compile-only worker never does; an env without it would otherwise fail on `import triton`.
    try:
        import pybind11  # noqa: F401
    except ImportError:
        placeholder = types.ModuleType("pybind11")
        placeholder.get_include = lambda: ""  # type: ignore[attr-defined]
        sys.modules["pybind11"] = placeholder


class _CompileOnlyDriver:
    """Stands in for the NPU driver on a machine without one, so decorators that query it at import time
    (`@triton.autotune` asks for a benchmarker) still let the kernel be compiled. Running is refused."""

    def __init__(self, target: Any) -> None:
        self.target = target

    def get_current_target(self) -> Any:
        return self.target

    def get_benchmarker(self) -> Any:
        def refuse(*_args: Any, **_kwargs: Any) -> Any:
            raise RuntimeError(
                "this triton-ascend worker has no NPU: kernels can be compiled, not benchmarked"
            )

        return refuse

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"this triton-ascend worker has no NPU driver (asked for {name!r})")


def _ensure_driver(soc: str) -> None:
    """Install the compile-only driver when no backend reports an active device."""
    from triton.backends import backends
    from triton.backends.compiler import GPUTarget
    from triton.runtime.driver import driver

    if driver.active is not driver.default:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the NPU driver warns about the missing CANN tools while probing
        if any(b.driver.is_active() for b in backends.values()):
            return
    driver.set_active(_CompileOnlyDriver(GPUTarget("npu", soc, 0)))


def _sibling(name: str) -> types.ModuleType:
    # Sibling worker modules live next to this file; the worker is started by path, not as a package.
    import importlib

    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    return importlib.import_module(name)


def _sibling_source_module() -> types.ModuleType:
    return _sibling("source_module")


def _signature_for(fn: Any, req: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    signature: dict[str, str] = {}
    constants = _sibling_source_module().decode_constants(dict(req.get("constants") or {}))
    given = req.get("signature") or {}
    missing: list[str] = []
    for name in fn.arg_names:
        if name in constants:
            signature[name] = "constexpr"
        elif name in given and given[name] != "constexpr":
            signature[name] = str(given[name])
        else:
            missing.append(name)
    if missing:
        raise ValueError(f"no type or constexpr value for argument(s) {', '.join(missing)}")
    return signature, constants


def _line_of_compilation_error(exc: BaseException, fn: Any) -> tuple[int | None, int | None]:
    """Triton numbers error nodes from the `def` line of the kernel's (decorator-free) source."""
    node = getattr(exc, "node", None)
    lineno = getattr(node, "lineno", None)
    if lineno is None:
        return None, None
    src = getattr(fn, "src", "") or ""
    full = "".join(linecache.getlines(fn.fn.__code__.co_filename)) if hasattr(fn, "fn") else ""
    def_line = fn.fn.__code__.co_firstlineno if hasattr(fn, "fn") else 1
    # co_firstlineno is the first decorator; the parsed source starts at `def`.
    if full and src:
        lines = full.splitlines()
        for i in range(def_line - 1, min(len(lines), def_line + 50)):
            if re.match(r"\s*(async\s+)?def\s", lines[i]):
                def_line = i + 1
                break
    return def_line + lineno - 1, getattr(node, "col_offset", None)


def _first_location(text: str, path: str) -> tuple[int | None, int | None]:
    for m in _DIAG_RE.finditer(text):
        if m.group("file") == path:
            return int(m.group("line")), int(m.group("col"))
    for m in _LOC_RE.finditer(text):
        if m.group("file") == path:
            return int(m.group("line")), int(m.group("col"))
    return None, None


def _stage_failure(stage: str, exc: BaseException, path: str) -> dict[str, Any]:
    detail = ""
    stderr = getattr(exc, "stderr", None)
    if isinstance(stderr, bytes):
        detail = stderr.decode("utf-8", "replace")
    elif isinstance(stderr, str):
        detail = stderr
    message = detail or f"{type(exc).__name__}: {exc}"
    line, col = _first_location(message, path)
    return _error(stage, f"{stage} failed: {message}", line, col)


def warm_up() -> None:
    """Import triton-ascend's compiler before the first job (called by worker/main.py when asked)."""
    _ensure_pybind11()
    import triton.backends.ascend.compiler  # noqa: F401
    import triton.compiler.compiler  # noqa: F401


def _npubin_compiler() -> str | None:
    return shutil.which("bishengir-compile")


def compile_kernel(req: dict[str, Any]) -> dict[str, Any]:
    """Compile `req` (a CompileRequest dict) through ttir and ttadapter (and npubin with CANN)."""
    started, cpu_started = time.monotonic(), _cpu_seconds()
    result = _result(req, "triton-ascend")
    try:
        _compile_into(req, result)
    except Exception as exc:  # noqa: BLE001 - a worker must always answer with a result
        result["errors"].append(_error("worker", f"internal error: {exc}\n{traceback.format_exc(limit=4)}"))
        result["ok"] = False
    # Notes gathered on the way (npubin not built, no driver) belong to metadata on every path.
    result["metadata"].update(result.pop("metadata_notes", {}))
    result["elapsed_s"] = round(time.monotonic() - started, 3)
    # CPU time of the worker and its children (bishengir-compile): what the compile costs on an idle machine.
    result["metadata"]["cpu_seconds"] = round(_cpu_seconds() - cpu_started, 4)
    return result


def _compile_into(req: dict[str, Any], result: dict[str, Any]) -> None:
    source, path, kernel = req.get("source"), req.get("path") or "<buffer>", req.get("kernel")
    target = str(req.get("target", "ascend910b3"))
    if not isinstance(source, str) or not isinstance(kernel, str):
        result["errors"].append(_error("worker", "request needs string fields 'source' and 'kernel'"))
        return
    if target not in TARGETS:
        result["errors"].append(
            _error("worker", f"unknown Ascend target {target!r}; use one of {sorted(TARGETS)}")
        )
        return
    soc, on_910_95 = TARGETS[target]
    os.environ["TRITON_ASCEND_ARCH"] = soc  # read by triton-ascend's NPU utilities for the npubin stage

    _ensure_pybind11()
    try:
        _ensure_driver(soc)
    except Exception as exc:  # noqa: BLE001 - without a driver only autotuned kernels fail, later and clearly
        result.setdefault("metadata_notes", {})["driver"] = f"no compile-only driver: {exc}"
    source_module = _sibling_source_module()
    try:
        loaded = source_module.load_source(source, path, req.get("workdir") or None)
    except source_module.SourceError as exc:
        result["errors"].append(_error("frontend", exc.message, exc.line, exc.col))
        return
    try:
        from triton.runtime.jit import JITFunction

        if source_module.find_jit(loaded.module.__dict__, req["kernel"], JITFunction) is None:
            loaded.define_nested(req["kernel"])  # a kernel defined inside a function
        _compile_loaded(req, result, loaded.module.__dict__, loaded.warnings, (soc, on_910_95))
    finally:
        loaded.close()
    if result["errors"] and source_module.needs_alone(loaded, result["errors"], req["kernel"]):
        _compile_alone(req, result, loaded, (soc, on_910_95))
        return
    if result["errors"]:  # a failed import may be why the compile failed: the caller puts it on its line
        result.setdefault("metadata", {}).setdefault("module_warnings", loaded.warnings)


def _compile_alone(
    req: dict[str, Any], result: dict[str, Any], first: Any, soc_info: tuple[str, bool]
) -> None:
    """Compile the kernel built from the file's source alone (source_alone.py) into `result`, labeled as
    such; keep the first failure when even that does not define the kernel."""
    source_module = _sibling_source_module()
    try:
        built = source_module.load_alone(first, req["source"], req["kernel"], req.get("workdir") or None)
    except source_module.SourceError:
        built = None
    if built is None:
        result.setdefault("metadata", {}).setdefault("module_warnings", first.warnings)
        return
    alone, label = built
    second = _result(req, result.get("compiler") or "triton-ascend")
    try:
        _compile_loaded(req, second, alone.module.__dict__, alone.warnings, soc_info)
    finally:
        alone.close()
    if source_module.kernel_missing(second["errors"]):
        result.setdefault("metadata", {}).setdefault("module_warnings", first.warnings)
        return
    second["metadata"]["source_alone"] = label
    second["metadata"]["module_warnings"] = source_module.merged_warnings(first, alone)
    notes = result.get("metadata_notes")
    result.clear()
    result.update(second)
    if notes:
        result["metadata_notes"] = notes


def _compile_loaded(
    req: dict[str, Any],
    result: dict[str, Any],
    namespace: dict[str, Any],
    skipped: list[dict[str, Any]],
    soc_info: tuple[str, bool],
) -> None:
    source, path, kernel = req["source"], req.get("path") or "<buffer>", req["kernel"]
    soc, on_910_95 = soc_info
    try:
        from triton._C.libtriton import ir
        from triton.backends.ascend.compiler import AscendAttrsDescriptor
        from triton.backends.compiler import GPUTarget
        from triton.compiler.compiler import ASTSource, make_backend
    except Exception as exc:  # noqa: BLE001
        result["errors"].append(_error("worker", f"cannot import triton-ascend: {exc}"))
        return
    result["compiler"] = _triton_version()

    from triton.runtime.jit import JITFunction

    fn = _sibling_source_module().find_jit(namespace, kernel, JITFunction)
    if fn is None:
        why = next((s["message"] for s in skipped if kernel in source.splitlines()[s["line"] - 1]), "")
        msg = f"no @triton.jit function named {kernel!r} in {path}" + (f" ({why})" if why else "")
        result["errors"].append(_error("frontend", msg))
        return
    try:
        signature, constants = _signature_for(fn, req)
    except ValueError as exc:
        result["errors"].append(_error("frontend", str(exc), fn.fn.__code__.co_firstlineno))
        return
    divisible = set(req.get("divisibility") or ())
    hints = {i: 16 for i, name in enumerate(fn.arg_names) if name in divisible}
    attrs = AscendAttrsDescriptor.from_hints(hints)

    gpu_target = GPUTarget("npu", soc, 0)
    backend = make_backend(gpu_target)
    user_opts = dict(req.get("options") or {})
    want_hivm = user_opts.pop("hivm", True) is not False
    user_opts.pop("hivm_timeout_s", None)
    # NPUOptions' defaults follow the device triton-ascend is imported on (`not is_compile_on_910_95`); here the
    # target decides, so an Ascend950 compile gets what triton-ascend on that device would pass to bishengir.
    defaults: dict[str, Any] = {"compile_on_910_95": on_910_95}
    if on_910_95:
        defaults.update(multibuffer=False, enable_auto_bind_sub_block=False)
    options = backend.parse_options({**defaults, **user_opts})
    stages: dict[str, Any] = {}
    backend.add_stages(stages, options)
    metadata: dict[str, Any] = {"hash": "tritonlens", "target": gpu_target, **options.__dict__}

    src = ASTSource(fn, signature, constants=constants, attrs=attrs)
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    try:
        module = src.make_ir(options, backend.get_codegen_implementation(), backend.get_module_map(), context)
    except Exception as exc:  # noqa: BLE001 - CompilationError and anything the code generator raises
        line, col = _line_of_compilation_error(exc, fn)
        text = str(exc).strip()
        message = getattr(exc, "error_message", None) or (text.splitlines()[-1] if text else repr(exc))
        result["errors"].append(_error("frontend", f"{type(exc).__name__}: {message}", line, col))
        return

    for name, run in stages.items():
        if name == "npubin":
            break
        try:
            module = run(module, metadata)
        except Exception as exc:  # noqa: BLE001 - each stage failure becomes a StageError
            result["errors"].append(_stage_failure(name, exc, path))
            return
        result["stages"][name] = str(module)

    _linalg_metadata(result["stages"].get("ttadapter", ""), metadata)
    if "npubin" in stages and _npubin_compiler() is not None:
        _npubin(stages["npubin"], result, metadata, path)
    hivm = _hivm(req, result, options.__dict__, (soc, on_910_95), path) if want_hivm else None
    result["metadata"] = _public_metadata(metadata, soc, skipped, user_opts)
    if hivm is not None:
        result["metadata"]["hivm"] = hivm
    elif want_hivm is False:
        result["metadata"]["hivm"] = {"status": "skipped", "message": "not requested (options.hivm = false)"}
    if "npubin" not in result["stages"]:
        result["metadata"]["npubin"] = (
            "not built: no device binary without CANN's hivmc (bishengir-compile ran up to it: see the hivm stage)"
        )
    # The BiSheng stages are analysis, not the kernel's compile: their failures (a UB overflow) are findings.
    result["ok"] = not any(e["stage"] not in ("npubin", "hivm") for e in result["errors"])


def _hivm(
    req: dict[str, Any],
    result: dict[str, Any],
    options: dict[str, Any],
    soc_info: tuple[str, bool],
    path: str,
) -> dict[str, Any] | None:
    """Run bishengir-compile on the ttadapter text (the `hivm` stage); its stages and log go into the result."""
    ttadapter = result["stages"].get("ttadapter")
    if not ttadapter:
        return None
    soc, on_910_95 = soc_info
    compile_hivm = _sibling("compile_hivm")
    timeout = req.get("options", {}).get("hivm_timeout_s") if isinstance(req.get("options"), dict) else None
    target = BISHENG_TARGETS.get(str(req.get("target", "")), soc)
    run = compile_hivm.run_hivm(
        ttadapter, target, on_910_95, options, float(timeout or compile_hivm.DEFAULT_TIMEOUT_S)
    )
    result["stages"].update(run.pop("stages", {}))
    log = run.pop("log", "")
    if log:
        result["stages"]["hivm.log"] = log
    if run["status"] in ("failed", "timeout"):
        text = log or run.get("message", "")
        errors = compile_hivm.pipeline_errors(text)
        message = errors[0] if errors else (run.get("message") or text.strip().splitlines()[-1:] or [""])[0]
        line, col = _first_location(message, path)
        result["errors"].append(_error("hivm", f"bishengir-compile: {message}", line, col))
    return run


def _linalg_metadata(ttadapter: str, metadata: dict[str, Any]) -> None:
    # Same fields the backend's npubin stage reads from the ttadapter text (mix_mode, kernel name, ...).
    for key, pattern in (
        ("mix_mode", r'mix_mode\s*=\s*"([^"]+)"'),
        ("parallel_mode", r'parallel_mode\s*=\s*"([^"]+)"'),
        ("kernel_name", r"func\.func\s+@(\w+)"),
    ):
        m = re.search(pattern, ttadapter)
        if m:
            metadata[key] = m.group(1)
    kinds = re.findall(r"%arg(\d+):[^,)]*?\{[^}]*?tt\.tensor_kind\s*=\s*([^:\s}]+)\s*:[^}]*?\}", ttadapter)
    metadata["tensor_kinds"] = [int(k) for _, k in kinds]


def _npubin(run: Any, result: dict[str, Any], metadata: dict[str, Any], path: str) -> None:
    # Only with CANN: triton-ascend's own binary stage (bishengir-compile + hivmc on PATH).
    try:
        binary = run(result["stages"]["ttadapter"], metadata)
    except Exception as exc:  # noqa: BLE001 - the binary stage is optional for analysis
        result["errors"].append(_stage_failure("npubin", exc, path))
        return
    result["stages"]["npubin"] = f"<{len(binary)} bytes of NPU binary>"
    ub_bits = metadata.get("required_ub_bits")
    if ub_bits:
        result["resources"]["required_ub_bits"] = int(ub_bits)
        result["resources"]["required_ub_bytes"] = int(ub_bits) // 8
    for key in ("bs_task_type", "workspace_size", "lock_num"):
        if key in metadata:
            result["resources"][key] = metadata[key]


def _public_metadata(
    metadata: dict[str, Any], soc: str, skipped: list[dict[str, Any]], user_opts: dict[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {"soc": soc}
    for key in (
        "kernel_name",
        "mix_mode",
        "parallel_mode",
        "tensor_kinds",
        "multibuffer",
        "enable_auto_bind_sub_block",
        "compile_on_910_95",
        "compile_mode",
        "num_warps",
        "required_ub_bits",
    ):
        if key in metadata and metadata[key] is not None:
            out[key] = metadata[key]
    if "grid" in user_opts:
        out["grid"] = user_opts["grid"]
    if skipped:
        out["skipped_statements"] = skipped
    return out


def main() -> int:
    import json

    try:
        raw = json.load(sys.stdin)
    except ValueError as exc:
        json.dump({"ok": False, "errors": [_error("worker", f"request is not JSON: {exc}")]}, sys.stdout)
        return 2
    req = raw.get("payload", raw) if isinstance(raw, dict) else {}
    result = compile_kernel(req if isinstance(req, dict) else {})
    json.dump(result, sys.stdout, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
