"""A compile-only stand-in for Triton's CUDA driver, for compile jobs on a machine with no GPU.

Kernel files ask the device questions at import time: `triton.runtime.driver.active.get_active_torch_device()`,
`...get_current_target().backend == "cuda"` inside the helpers that pick `@triton.autotune` configs,
`driver.active.utils.get_device_properties(...)` to size a grid, `torch.cuda.get_device_capability()`.
Without a GPU, upstream Triton has no active driver and those statements raise, so the kernels they define
(or configure) cannot be compiled. While a compile job runs, `compile_only(target)` answers those questions
for the requested target (sm_90 -> GPUTarget("cuda", 90, 32), properties of a representative part of that
architecture) and refuses anything that would launch or benchmark a kernel, with a message that says why.

It only ever stands in where there is nothing to stand in for: when a driver is already active, or a
backend reports a real device, nothing is replaced. Everything it changes is undone when the job ends.
Runs inside the CUDA runner environment (stdlib + triton; torch only if the kernel file imports it).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import importlib.machinery
import os
import sys
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DeviceSpec:
    """What the CUDA driver reports for one device; values of a representative part of each architecture."""

    name: str
    capability: tuple[int, int]
    multiprocessor_count: int
    max_shared_mem: int  # bytes per block with opt-in (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
    shared_per_multiprocessor: int  # bytes
    max_num_regs: int  # 32-bit registers per block
    regs_per_multiprocessor: int
    max_threads_per_multiprocessor: int
    l2_cache_size: int  # bytes
    total_memory: int  # bytes
    sm_clock_rate: int  # kHz
    mem_clock_rate: int  # kHz
    mem_bus_width: int  # bits
    warp_size: int = 32


_GIB = 1024**3
# fmt: off
DEVICES: dict[str, DeviceSpec] = {
    "sm_80": DeviceSpec(
        "NVIDIA A100-SXM4-80GB", (8, 0), 108, 166912, 167936, 65536, 65536, 2048,
        40 * 1024**2, 80 * _GIB, 1410000, 1593000, 5120,
    ),
    "sm_86": DeviceSpec(
        "NVIDIA A10", (8, 6), 72, 101376, 102400, 65536, 65536, 1536,
        6 * 1024**2, 24 * _GIB, 1695000, 6251000, 384,
    ),
    "sm_89": DeviceSpec(
        "NVIDIA L4", (8, 9), 58, 101376, 102400, 65536, 65536, 1536,
        48 * 1024**2, 24 * _GIB, 2040000, 6251000, 192,
    ),
    "sm_90": DeviceSpec(
        "NVIDIA H100 80GB HBM3", (9, 0), 132, 232448, 233472, 65536, 65536, 2048,
        50 * 1024**2, 80 * _GIB, 1980000, 2619000, 5120,
    ),
    "sm_100": DeviceSpec(
        "NVIDIA B200", (10, 0), 148, 232448, 233472, 65536, 65536, 2048,
        126 * 1024**2, 180 * _GIB, 1965000, 3996000, 8192,
    ),
}
# fmt: on


class NoDeviceError(RuntimeError):
    """Raised for anything that needs a real GPU (launching, benchmarking, loading a binary)."""


def _refusal(target: str, what: str) -> NoDeviceError:
    return NoDeviceError(
        f"no GPU on this machine: tritonlens compiles for {target} here but cannot {what}; "
        "run, profile and benchmark jobs need a runner with a GPU"
    )


class _CompileOnlyUtils:
    """driver.active.utils: device properties from the table; loading a compiled binary is refused."""

    def __init__(self, target: str, spec: DeviceSpec) -> None:
        self._target = target
        self._spec = spec

    def get_device_properties(self, device: Any = 0) -> dict[str, int]:
        spec = self._spec
        return {
            "max_shared_mem": spec.max_shared_mem,
            "max_num_regs": spec.max_num_regs,
            "multiprocessor_count": spec.multiprocessor_count,
            "warpSize": spec.warp_size,
            "sm_clock_rate": spec.sm_clock_rate,
            "mem_clock_rate": spec.mem_clock_rate,
            "mem_bus_width": spec.mem_bus_width,
        }

    def __getattr__(self, name: str) -> Any:
        raise _refusal(self._target, f"use driver.utils.{name}")


class CompileOnlyCudaDriver:
    """Answers what a kernel file asks the active driver at import time; refuses to launch or benchmark."""

    def __init__(self, target: str) -> None:
        from triton.backends.compiler import GPUTarget

        self.target_name = target
        self.spec = DEVICES[target]
        major, minor = self.spec.capability
        self.target = GPUTarget("cuda", major * 10 + minor, self.spec.warp_size)
        self.utils = _CompileOnlyUtils(target, self.spec)

    @staticmethod
    def is_active() -> bool:
        return False  # never a real device: triton must not pick this class on its own

    def get_current_target(self) -> Any:
        return self.target

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device: Any) -> None:
        return None

    def get_active_torch_device(self) -> Any:
        # A value for `device=` arguments; allocating on it fails in torch itself (no CUDA build here).
        import torch

        return torch.device("cuda", 0)

    def get_device_capability(self, device: Any = None) -> tuple[int, int]:
        return self.spec.capability

    def map_python_to_cpp_type(self, ty: str) -> str:
        from triton.backends.nvidia.driver import ty_to_cpp

        return str(ty_to_cpp(ty))

    def get_benchmarker(self) -> Callable[..., Any]:
        target = self.target_name

        def refuse(*_args: Any, **_kwargs: Any) -> Any:
            raise _refusal(target, "benchmark a kernel")

        return refuse

    def get_current_stream(self, device: Any = None) -> Any:
        raise _refusal(self.target_name, "launch a kernel")

    def __getattr__(self, name: str) -> Any:
        # launcher_cls, get_device_interface, get_empty_cache_for_benchmark, clear_cache, ...
        raise _refusal(self.target_name, f"use driver.{name}")


class _TorchCudaQueries:
    """Stand-ins for the torch.cuda queries kernel files make at module level, for one target's device."""

    def __init__(self, spec: DeviceSpec) -> None:
        self.spec = spec

    def properties(self, device: Any = None) -> types.SimpleNamespace:
        spec = self.spec
        return types.SimpleNamespace(
            name=spec.name,
            major=spec.capability[0],
            minor=spec.capability[1],
            multi_processor_count=spec.multiprocessor_count,
            total_memory=spec.total_memory,
            L2_cache_size=spec.l2_cache_size,
            warp_size=spec.warp_size,
            regs_per_multiprocessor=spec.regs_per_multiprocessor,
            max_threads_per_multi_processor=spec.max_threads_per_multiprocessor,
            shared_memory_per_block=48 * 1024,
            shared_memory_per_block_optin=spec.max_shared_mem,
            shared_memory_per_multiprocessor=spec.shared_per_multiprocessor,
            is_integrated=False,
            is_multi_gpu_board=False,
        )

    def replacements(self) -> dict[str, Callable[..., Any]]:
        spec = self.spec
        return {
            "is_available": lambda: True,
            "device_count": lambda: 1,
            "current_device": lambda: 0,
            "get_device_capability": lambda device=None: spec.capability,
            "get_device_name": lambda device=None: spec.name,
            "get_device_properties": self.properties,
        }


class _TorchPatch:
    """Replaces a few torch.cuda functions now (torch already imported) or as soon as torch is imported."""

    def __init__(self, queries: _TorchCudaQueries) -> None:
        self.queries = queries
        self.saved: dict[str, Any] = {}
        self.cuda: Any = None

    def apply(self, torch: Any) -> None:
        cuda = getattr(torch, "cuda", None)
        if cuda is None or self.cuda is not None:
            return
        self.cuda = cuda
        for name, replacement in self.queries.replacements().items():
            self.saved[name] = getattr(cuda, name, None)
            setattr(cuda, name, replacement)

    def undo(self) -> None:
        if self.cuda is None:
            return
        for name, original in self.saved.items():
            if original is None:
                with contextlib.suppress(AttributeError):
                    delattr(self.cuda, name)
            else:
                setattr(self.cuda, name, original)
        self.cuda = None
        self.saved.clear()


class _PatchAfterLoad(importlib.abc.Loader):
    """Runs the real loader, then the patch; puts the real loader back on the module afterwards."""

    def __init__(self, real: Any, after: Callable[[types.ModuleType], None]) -> None:
        self.real = real
        self.after = after

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.real.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: types.ModuleType) -> None:
        module.__loader__ = self.real
        if module.__spec__ is not None:
            module.__spec__.loader = self.real
        self.real.exec_module(module)
        self.after(module)


class _TorchImportWatch(importlib.abc.MetaPathFinder):
    """Patches torch.cuda the moment `torch` is imported (by `import torch.cuda`, a lazy binding, ...)."""

    def __init__(self, after: Callable[[types.ModuleType], None]) -> None:
        self.after = after

    def find_spec(
        self, fullname: str, path: Any, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "torch":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _PatchAfterLoad(spec.loader, self.after)
                return spec
            if spec is not None:
                return spec
        return None


@functools.cache
def gpu_present(dev_dir: str = "/dev") -> bool:
    """Whether a real GPU is usable: device nodes first (cheap), then the backends' own check (imports torch)."""
    try:
        names = os.listdir(dev_dir)
    except OSError:
        names = ["unknown"]  # cannot tell from the nodes: ask the backends
    nodes = [
        n for n in names if (n.startswith("nvidia") and n[6:].isdigit()) or n in ("kfd", "dxg", "unknown")
    ]
    if not nodes:
        return False
    try:
        from triton.backends import backends

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return any(b.driver.is_active() for b in backends.values())
    except Exception:  # a backend that cannot even probe has no usable device
        return False


def _driver_config() -> Any:
    from triton.runtime.driver import driver

    return driver


@contextlib.contextmanager
def compile_only(target: str, has_gpu: Callable[[], bool] = gpu_present) -> Iterator[bool]:
    """Stand in for the CUDA driver and torch.cuda's queries for `target` while the block runs.

    Yields whether the stand-in is in place: False when `target` is unknown, a driver is already active
    (on a GPU host the real one is never replaced), or `has_gpu()` finds a real device.
    """
    config = _driver_config()
    # DriverConfig has no public "already chosen" query; `active` would create the default driver
    # (importing torch) just to ask.
    if target not in DEVICES or getattr(config, "_active", None) is not None or has_gpu():
        yield False
        return
    patch = _TorchPatch(_TorchCudaQueries(DEVICES[target]))
    watch = _TorchImportWatch(patch.apply)
    config.set_active(CompileOnlyCudaDriver(target))
    if "torch" in sys.modules:
        patch.apply(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, watch)
    try:
        yield True
    finally:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(watch)
        patch.undo()
        config._active = None  # back to "not chosen": a later job decides again (private, see above)
