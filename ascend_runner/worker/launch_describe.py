"""What one recorded launch is: the kernel's parameters, each argument as Triton's JIT specializes it (type,
divisibility, constexpr value, tensor shape/strides/value range), the grid; and what the compiled kernel reports
(TTIR, registers, shared memory). Used by harness_record's recorder. Stdlib + triton + torch only (no tritonlens).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

from harness_tolerance import ieee_in_source


def torch_module() -> Any:
    import torch

    return torch


def is_tensor(value: Any) -> bool:
    return hasattr(value, "data_ptr") and hasattr(value, "dtype") and hasattr(value, "shape")


def _dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "value") and type(value).__name__ == "constexpr":
        return jsonable(value.value)
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
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
    if is_tensor(value):
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
        return {"name": name, "kind": "constexpr", "value": jsonable(value)}
    if value is None:
        return {"name": name, "kind": "none"}
    if is_tensor(value):
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
        if arg.get("kind") != "tensor" or not is_tensor(value) or value.numel() == 0:
            continue
        try:
            torch = torch_module()
            flat = value.detach().reshape(-1)
            if flat.is_floating_point():
                flat = flat[torch.isfinite(flat)]
                if flat.numel() == 0:
                    continue
            elif flat.dtype == torch.bool:
                flat = flat.to(torch.int8)
            arg["range"] = [jsonable(flat.min().item()), jsonable(flat.max().item())]
        except Exception:  # a tensor subclass or a device that refuses: replay falls back to its default
            continue


def grid_of(grid: Any, bound: dict[str, Any]) -> list[int]:
    if callable(grid):
        grid = grid(bound)
    return [int(g) for g in tuple(grid)] + [1] * (3 - len(tuple(grid)))


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
