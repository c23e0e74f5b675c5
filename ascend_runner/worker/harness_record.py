"""Record every Triton launch at the launch seam, under the runner environment's own Python.

Triton 3.6's `knobs.runtime.launch_enter_hook` is called without the arguments, so the recorder wraps
`JITFunction.run` (and the interpreter's `InterpretedFunction.run`) instead: every `kernel[grid](...)` and every
launch from a library goes through it. `@triton.autotune` benchmarks each config through the same seam; those
trial launches are counted, not recorded (`Autotuner._bench` is wrapped to tell them apart): the launch the
program really runs is the one with the chosen config, and it carries how many trials preceded it.
Stdlib + triton + torch only (no tritonlens).
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from harness_tolerance import ieee_in_source

_OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "multibuffer", "enable_fp_fusion")


def _torch() -> Any:
    import torch

    return torch


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "data_ptr") and hasattr(value, "dtype") and hasattr(value, "shape")


def _dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "value") and type(value).__name__ == "constexpr":
        return _jsonable(value.value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return repr(value)


class KernelInfo:
    """What the recorder needs from a JITFunction or InterpretedFunction, whichever Triton built."""

    def __init__(self, fn_obj: Any) -> None:
        self.obj = fn_obj
        self.fn: Callable[..., Any] = fn_obj.fn
        self.name: str = self.fn.__name__
        code = self.fn.__code__
        self.file: str = code.co_filename
        self.line: int = code.co_firstlineno
        params = getattr(fn_obj, "params", None)
        sig = inspect.signature(self.fn)
        self.arg_names: list[str] = list(sig.parameters)
        if params:
            self.constexpr = {p.name for p in params if p.is_constexpr}
            self.no_spec = {p.name for p in params if p.do_not_specialize}
            self.no_align = {p.name for p in params if p.do_not_specialize_on_alignment}
        else:  # the interpreter keeps no KernelParam: read annotations and the jit() keyword arguments
            self.constexpr = {n for n, p in sig.parameters.items() if "constexpr" in str(p.annotation)}
            kw = getattr(fn_obj, "kwargs", {}) or {}
            self.no_spec = {self._name(x) for x in kw.get("do_not_specialize") or ()}
            self.no_align = {self._name(x) for x in kw.get("do_not_specialize_on_alignment") or ()}
        self.defaults = {
            n: p.default for n, p in sig.parameters.items() if p.default is not inspect.Parameter.empty
        }
        try:
            lines, start = inspect.getsourcelines(self.fn)
        except (OSError, TypeError):
            lines, start = [], self.line
        src = "".join(lines)
        # co_firstlineno is the first decorator's line; report the `def` line, where the kernel is named
        for offset, text in enumerate(lines):
            if text.lstrip().startswith(("def ", "async def ")):
                self.line = start + offset
                break
        self.uses_dot = "dot(" in src or "dot_scaled(" in src
        self.dot_ieee = ieee_in_source(src)  # evidence for the gate's TF32 question when no TTIR is kept

    def _name(self, x: Any) -> str:
        return self.arg_names[x] if isinstance(x, int) else str(x)


def specialize_arg(value: Any, is_constexpr: bool, specialize: bool, align: bool) -> tuple[str, Any]:
    """(type, attribute) as Triton's binder computes them; falls back to a plain-Python mirror."""
    if is_constexpr:
        return "constexpr", value
    try:
        from triton.backends.compiler import BaseBackend
        from triton.runtime.jit import native_specialize_impl

        return tuple(native_specialize_impl(BaseBackend, value, False, specialize, align))  # type: ignore[return-value]
    except Exception:  # older Triton (3.2, triton-ascend) or an argument the native code refuses
        pass
    if value is None:
        return "constexpr", None
    if _is_tensor(value):
        ty = "*" + {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64"}.get(
            _dtype_name(value.dtype), _dtype_name(value.dtype)
        )
        return ty, "D" if align and value.data_ptr() % 16 == 0 else ""
    if isinstance(value, bool):
        return "u1", None
    if isinstance(value, int):
        if specialize and value == 1:
            return "constexpr", 1
        ty = "i32" if -(2**31) <= value < 2**31 else "i64"
        return ty, "D" if specialize and value % 16 == 0 else ""
    if isinstance(value, float):
        return "fp32", None
    return type(value).__name__, None


def describe_arg(name: str, value: Any, is_constexpr: bool) -> dict[str, Any]:
    if is_constexpr:
        return {"name": name, "kind": "constexpr", "value": _jsonable(value)}
    if value is None:
        return {"name": name, "kind": "none"}
    if _is_tensor(value):
        return {
            "name": name,
            "kind": "tensor",
            "dtype": _dtype_name(value.dtype),
            "shape": list(value.shape),
            "strides": list(value.stride()),
            "nbytes": int(value.numel() * value.element_size()),
        }
    for kind, ty in (("bool", bool), ("int", int), ("float", float)):
        if isinstance(value, ty):
            return {"name": name, "kind": kind, "value": value}
    return {"name": name, "kind": "other", "value": repr(value)[:80]}


def value_ranges(rec: dict[str, Any], bound: dict[str, Any]) -> None:
    """Each tensor argument's finite [min, max] before the launch, for replay verification to draw inputs from
    (an index tensor's range keeps replayed loads in bounds). Only for new distinct launches: one reduction each."""
    for arg in rec["args"]:
        value = bound.get(arg["name"])
        if arg.get("kind") != "tensor" or not _is_tensor(value) or value.numel() == 0:
            continue
        try:
            torch = _torch()
            flat = value.detach().reshape(-1)
            if flat.is_floating_point():
                flat = flat[torch.isfinite(flat)]
                if flat.numel() == 0:
                    continue
            elif flat.dtype == torch.bool:
                flat = flat.to(torch.int8)
            arg["range"] = [_jsonable(flat.min().item()), _jsonable(flat.max().item())]
        except Exception:  # a tensor subclass or a device that refuses: replay falls back to its default
            continue


def grid_of(grid: Any, bound: dict[str, Any]) -> list[int]:
    if callable(grid):
        grid = grid(bound)
    return [int(g) for g in tuple(grid)] + [1] * (3 - len(tuple(grid)))


class LaunchRecorder:
    """Collects distinct launches; optional snapshots make each replayable alone."""

    def __init__(
        self, max_launches: int = 64, snapshot_dir: str | None = None, max_snapshot_bytes: int = 4 << 30
    ):
        self.max_launches = max_launches
        self.snapshot_dir = snapshot_dir
        self.max_snapshot_bytes = max_snapshot_bytes
        self.snapshot_bytes = 0
        self.launches: list[dict[str, Any]] = []
        self.callables: list[Callable[[], Any]] = []  # per launch: re-launch with the same arguments
        self._keys: dict[Any, int] = {}
        self.dropped = 0
        self.errors: list[str] = []
        self._info: dict[int, KernelInfo] = {}
        self.autotuning = 0  # > 0 while an autotuner benchmarks its configs
        self.autotune_trials = 0
        self._pending_trials: dict[int, int] = {}  # per kernel object: trials not yet followed by a real launch
        self._snapshots_full = False

    def info(self, fn_obj: Any) -> KernelInfo:
        key = id(fn_obj)
        if key not in self._info:
            self._info[key] = KernelInfo(fn_obj)
        return self._info[key]

    def bind(
        self, info: KernelInfo, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[dict[str, Any], dict]:
        """Split call arguments into kernel arguments (with defaults) and compile options."""
        bound = dict(zip(info.arg_names, args, strict=False))
        options = {}
        for k, v in kwargs.items():
            if k in info.arg_names:
                bound[k] = v
            else:
                options[k] = v
        for k, v in info.defaults.items():
            bound.setdefault(k, v)
        return bound, options

    def describe(self, info: KernelInfo, bound: dict[str, Any], options: dict[str, Any], grid: Any) -> dict:
        signature: dict[str, str] = {}
        constants: dict[str, Any] = {}
        divisible: list[str] = []
        for name in info.arg_names:
            value = bound.get(name)
            ty, attr = specialize_arg(
                value, name in info.constexpr, name not in info.no_spec, name not in info.no_align
            )
            signature[name] = ty
            if ty == "constexpr":
                constants[name] = _jsonable(value)
            elif attr == "D":
                divisible.append(name)
        opts = {k: _jsonable(options[k]) for k in _OPTION_KEYS if k in options}
        return {
            "kernel": info.name,
            "file": info.file,
            "module": getattr(info.fn, "__module__", None),
            "line": info.line,
            "grid": grid_of(grid, bound),
            "signature": signature,
            "constants": constants,
            "divisibility": divisible,
            "options": opts,
            "args": [describe_arg(n, bound.get(n), n in info.constexpr) for n in info.arg_names],
            "uses_dot": info.uses_dot,
            **({"dot_ieee_in_source": True} if info.uses_dot and info.dot_ieee else {}),
            "specialized_by": "mirror",
        }

    @staticmethod
    def _key(rec: dict[str, Any]) -> str:
        shape = [
            (a.get("dtype"), tuple(a.get("shape") or ()), tuple(a.get("strides") or ())) for a in rec["args"]
        ]
        scalars = [a.get("value") for a in rec["args"] if a["kind"] in ("int", "float", "bool")]
        parts = (rec["kernel"], rec["file"], rec["grid"], rec["signature"], rec["constants"], rec["options"])
        return repr((parts, rec["divisibility"], shape, scalars))

    def wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        def run(fn_self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            if warmup:
                return original(fn_self, *args, grid=grid, warmup=warmup, **kwargs)
            if recorder.autotuning:
                recorder.autotune_trials += 1
                recorder._pending_trials[id(fn_self)] = recorder._pending_trials.get(id(fn_self), 0) + 1
                return original(fn_self, *args, grid=grid, warmup=warmup, **kwargs)
            trials = recorder._pending_trials.pop(id(fn_self), 0)
            try:
                info = recorder.info(fn_self)
                bound, options = recorder.bind(info, args, kwargs)
                rec = recorder.describe(info, bound, options, grid)
                key = recorder._key(rec)
            except Exception as exc:  # never break the user's program because recording failed
                recorder.errors.append(f"could not record a launch: {type(exc).__name__}: {exc}")
                return original(fn_self, *args, grid=grid, warmup=warmup, **kwargs)
            if key in recorder._keys:
                recorder.launches[recorder._keys[key]]["count"] += 1
                return original(fn_self, *args, grid=grid, warmup=warmup, **kwargs)
            if len(recorder.launches) >= recorder.max_launches:
                recorder.dropped += 1
                return original(fn_self, *args, grid=grid, warmup=warmup, **kwargs)
            rec["index"] = len(recorder.launches)
            rec["count"] = 1
            if trials:
                rec["autotune_trials"] = trials  # configs benchmarked before this (chosen) one ran
            value_ranges(rec, bound)
            before = recorder._snapshot_before(args, kwargs)
            kernel = original(fn_self, *args, grid=grid, warmup=warmup, **kwargs)
            rec["resources"] = resources_of(kernel)
            ttir = ttir_of(kernel)
            if ttir:
                rec["ttir"] = ttir  # the analysis counts FLOPs per program from it (roofline)
            refine_from_binder(rec, fn_self, args, kwargs)
            recorder._keys[key] = rec["index"]
            recorder.launches.append(rec)
            recorder.callables.append(lambda: original(fn_self, *args, grid=grid, warmup=False, **kwargs))
            if before is not None:
                recorder._snapshot_after(rec, info, before, args, kwargs, grid)
            return kernel

        run.__tritonlens_original__ = original  # type: ignore[attr-defined]
        return run

    def _snapshot_before(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
        if not self.snapshot_dir:
            return None
        tensors = [a for a in list(args) + list(kwargs.values()) if _is_tensor(a)]
        size = sum(int(t.numel() * t.element_size()) for t in tensors)
        if self.snapshot_bytes + 2 * size > self.max_snapshot_bytes:
            if not self._snapshots_full:  # said once, not once per launch
                self._snapshots_full = True
                self.errors.append("snapshot budget reached: later launches are recorded without snapshots")
            return None
        self.snapshot_bytes += 2 * size
        _synchronize()
        return {
            "args": [a.detach().clone().cpu() if _is_tensor(a) else a for a in args],
            "kwargs": {k: v.detach().clone().cpu() if _is_tensor(v) else v for k, v in kwargs.items()},
        }

    def _snapshot_after(
        self,
        rec: dict[str, Any],
        info: KernelInfo,
        before: dict[str, Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        grid: Any,
    ) -> None:
        torch = _torch()
        _synchronize()
        after: dict[str, Any] = {}
        for i, a in enumerate(args):
            if _is_tensor(a):
                now = a.detach().cpu()
                written = not torch.equal(now, before["args"][i]) if now.dtype != torch.bool else False
                if now.is_floating_point():
                    written = not torch.equal(torch.nan_to_num(now), torch.nan_to_num(before["args"][i]))
                rec["args"][i]["written"] = bool(written)
                if written:
                    after[str(i)] = now.clone()
        for k, v in kwargs.items():
            if _is_tensor(v):
                after[k] = v.detach().cpu().clone()
        path = os.path.join(self.snapshot_dir or ".", f"launch{rec['index']:03d}_{info.name}.pt")
        try:
            torch.save(
                {
                    "record": rec,
                    "args": before["args"],
                    "kwargs": before["kwargs"],
                    "grid": rec["grid"],
                    "after": after,
                },
                path,
            )
            rec["snapshot"] = path
        except Exception as exc:
            self.errors.append(f"could not save a snapshot for {info.name}: {exc}")


def refine_from_binder(
    rec: dict[str, Any], fn_obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """Compiled (non-interpreted) kernels: take signature and divisibility from the JIT's own binder, so
    annotations and backend rules are exactly what the JIT used."""
    caches = getattr(fn_obj, "device_caches", None)
    if caches is None:
        return
    try:
        from triton.runtime.driver import driver

        binder = caches[driver.active.get_current_device()][4]
        _, specialization, _ = binder(*args, **kwargs)
    except Exception:  # keep the mirror computed before the launch
        return
    names = list(rec["signature"])
    if len(names) != len(specialization):
        return
    rec["divisibility"] = []
    for name, (ty, attr) in zip(names, specialization, strict=True):
        rec["signature"][name] = ty if isinstance(ty, str) else str(ty)
        if attr == "D":
            rec["divisibility"].append(name)
    rec["specialized_by"] = "jit-binder"


MAX_TTIR_CHARS = 256 * 1024
_LOC = re.compile(r" loc\([^\n]*\)$", re.M)


def ttir_of(kernel: Any) -> str | None:
    """The compiled kernel's TTIR without location info (its #loc lines dominate the size), capped; None for the
    interpreter or when the compiler kept no TTIR."""
    try:
        text = (getattr(kernel, "asm", None) or {}).get("ttir")
    except Exception:
        return None
    if not isinstance(text, str) or not text:
        return None
    text = "\n".join(line for line in _LOC.sub("", text).splitlines() if not line.startswith("#loc"))
    return text[:MAX_TTIR_CHARS]


def resources_of(kernel: Any) -> dict[str, Any]:
    """Registers, spills and shared memory of a compiled kernel (the interpreter compiles nothing)."""
    out: dict[str, Any] = {}
    if kernel is None or not hasattr(kernel, "metadata"):
        return out
    try:
        if hasattr(kernel, "_init_handles"):
            kernel._init_handles()
        for attr in ("n_regs", "n_spills", "n_max_threads"):
            value = getattr(kernel, attr, None)
            if isinstance(value, int):
                out[attr] = value
        meta = kernel.metadata
        for attr in ("shared", "num_warps", "num_stages", "num_ctas"):
            value = getattr(meta, attr, None)
            if isinstance(value, int):
                out[attr] = value
    except Exception as exc:  # resources are a bonus; say why they are missing
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


def _synchronize() -> None:
    torch = _torch()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
    npu = getattr(torch, "npu", None)
    if npu is not None and hasattr(npu, "synchronize"):
        try:
            npu.synchronize()
        except Exception:
            pass


def _run_classes() -> list[type]:
    classes: list[type] = []
    from triton.runtime.jit import JITFunction

    classes.append(JITFunction)
    try:
        from triton.runtime.interpreter import InterpretedFunction

        classes.append(InterpretedFunction)
    except ImportError:
        pass
    return classes


@contextmanager
def recording(recorder: LaunchRecorder) -> Iterator[LaunchRecorder]:
    """Install the recorder on every kernel class for the duration of the block."""
    patched: list[tuple[type, str, Any]] = []
    try:
        for cls in _run_classes():
            original = cls.__dict__.get("run")
            if original is None:
                continue
            patched.append((cls, "run", original))
            cls.run = recorder.wrap(original)  # type: ignore[method-assign]
        tuner = _autotuner_class()
        bench = tuner.__dict__.get("_bench") if tuner is not None else None
        if bench is not None:
            patched.append((tuner, "_bench", bench))
            tuner._bench = _marking_trials(recorder, bench)  # type: ignore[union-attr]
        yield recorder
    finally:
        for cls, name, original in patched:
            setattr(cls, name, original)


def _autotuner_class() -> type | None:
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:
        return None
    return Autotuner


def _marking_trials(recorder: LaunchRecorder, bench: Callable[..., Any]) -> Callable[..., Any]:
    def _bench(self: Any, *args: Any, **kwargs: Any) -> Any:
        recorder.autotuning += 1
        try:
            return bench(self, *args, **kwargs)
        finally:
            recorder.autotuning -= 1

    return _bench
