"""Backends a run can use: `cuda` (NVIDIA via torch + Triton), `npu` (triton-ascend + torch_npu), `interpret`
(TRITON_INTERPRET=1 on the CPU: correctness only). Device facts, timing and ceilings per backend.

The `npu` paths follow the torch_npu / triton-ascend docs and were never exercised on Ascend hardware.
Stdlib + torch + triton only (no tritonlens).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from device_lock import exclusive

# How a time was taken (time_ms's "method"): replayed from a CUDA graph, or launched from Python each time.
GRAPH_REPLAY = "cuda graph replay"
LAUNCHES = "launches"


class BackendUnavailable(Exception):
    """The requested backend cannot run here; the message says why in plain words."""


NEEDS = {"npu": " and torch_npu (Ascend's PyTorch adapter, with CANN)"}
SETUP_HINT = {
    "npu": "Profiling on Ascend needs an Ascend host with CANN, torch and torch_npu; without one, use "
    "--backend interpret for a CPU correctness run.",
    "cuda": "Set up the CUDA runner environment with scripts/bootstrap (or point --runner local:PYTHON at one).",
    "interpret": "Set up the CUDA runner environment with scripts/bootstrap (it has a CPU build of torch).",
}


class Backend:
    name = "base"
    timing_meaningful = True

    def __init__(self) -> None:
        try:
            import torch
        except ImportError as exc:  # a plain message, not "No module named 'torch'"
            raise BackendUnavailable(
                f"backend {self.name!r} needs PyTorch{NEEDS.get(self.name, '')} in the runner environment "
                f"({sys.executable}), and importing torch failed: {exc}. "
                f"{SETUP_HINT.get(self.name, '')}"
            ) from None
        self.torch = torch

    @property
    def device(self) -> str:
        raise NotImplementedError

    def to_device(self, value: Any) -> Any:
        if hasattr(value, "to") and hasattr(value, "dtype"):
            return value.to(self.device)
        if isinstance(value, (list, tuple)):
            return type(value)(self.to_device(v) for v in value)
        return value

    def synchronize(self) -> None:
        pass

    def info(self) -> dict[str, Any]:
        return {}

    def describe(self) -> dict[str, Any]:
        """`info` plus the versions a report names (worker_versions.py)."""
        from worker_versions import versions  # a sibling: workers run with this folder on sys.path

        return {**self.info(), "versions": versions(self.name, self.torch)}

    def time_ms(self, fn: Callable[[], Any], warmup_ms: float, rep_ms: float) -> dict[str, float]:
        raise NotImplementedError

    def ceilings(self) -> dict[str, Any]:
        return {}


def _percentiles(samples: list[float]) -> dict[str, float]:
    samples = sorted(samples)

    def q(p: float) -> float:
        return samples[min(len(samples) - 1, int(round(p * (len(samples) - 1))))]

    return {"median": statistics.median(samples), "p20": q(0.2), "p80": q(0.8), "reps": float(len(samples))}


class CudaBackend(Backend):
    name = "cuda"

    def __init__(self) -> None:
        super().__init__()
        if not self.torch.cuda.is_available():
            raise BackendUnavailable(
                "backend 'cuda' needs an NVIDIA GPU visible to torch; torch.cuda.is_available() is False "
                f"here (torch {self.torch.__version__}). Use --backend interpret for a CPU correctness run."
            )

    @property
    def device(self) -> str:
        return "cuda"

    def synchronize(self) -> None:
        self.torch.cuda.synchronize()

    def info(self) -> dict[str, Any]:
        p = self.torch.cuda.get_device_properties(0)
        out: dict[str, Any] = {
            "name": p.name,
            "vendor": "nvidia",
            "compute_capability": f"{p.major}.{p.minor}",
            "sm_count": p.multi_processor_count,
            "memory_bytes": int(p.total_memory),
        }
        for key, attr in (
            ("l2_bytes", "L2_cache_size"),
            ("regs_per_sm", "regs_per_multiprocessor"),
            ("smem_per_sm", "shared_memory_per_multiprocessor"),
            ("smem_per_block_optin", "shared_memory_per_block_optin"),
            ("max_threads_per_sm", "max_threads_per_multi_processor"),
            ("warp_size", "warp_size"),
        ):
            value = getattr(p, attr, None)
            if value is not None:
                out[key] = int(value)
        return out

    def time_ms(self, fn: Callable[[], Any], warmup_ms: float, rep_ms: float) -> dict[str, Any]:
        # do_bench: events around each rep, the L2 flushed before each, median and quantiles over many reps. The call
        # is replayed from a CUDA graph of itself where it can be captured: timed launch by launch, a call of a few
        # tens of microseconds reads its Python launch path (H200: a 21 us kernel read 25 us idle and 76-92 us with
        # every core busy; bench/results/h200-launch-probe/). The flush before each replay keeps the graph's launch
        # off the timed span; a call that cannot be captured (a host sync, a CPU copy) is timed launch by launch.
        from triton.testing import do_bench

        with exclusive():
            replay, why = self._graph_replay(fn)
            median, p20, p80 = do_bench(replay or fn, warmup=warmup_ms, rep=rep_ms, quantiles=[0.5, 0.2, 0.8])
        out: dict[str, Any] = {"median": float(median), "p20": float(p20), "p80": float(p80),
                               "method": GRAPH_REPLAY if replay else LAUNCHES}
        if why:
            out["graph_error"] = why
        return out

    def _graph_replay(self, fn: Callable[[], Any]) -> tuple[Callable[[], Any] | None, str]:
        """`fn` captured into a CUDA graph, as a replay call, or None and why it could not be captured."""
        torch = self.torch
        try:
            fn()  # compiles, autotunes and fills caches outside the capture
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # a warm-up on a side stream, as capture wants
                fn()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, capture_error_mode="thread_local"):
                kept = fn()
            graph.replay()
            torch.cuda.synchronize()
        except Exception as exc:
            torch.cuda.synchronize()  # raises if the device itself failed: that is no capture problem
            return None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"

        def replay() -> Any:
            graph.replay()
            return kept  # the captured outputs live as long as the replay

        return replay, ""

    def ceilings(self) -> dict[str, Any]:
        """Measured ceilings: a large device-to-device copy (bytes read + written) and a bf16 matmul."""
        torch = self.torch
        out: dict[str, Any] = {
            "device": self.info()["name"],
            "method": "torch copy_ and bf16 matmul, do_bench median of a CUDA graph replay",
        }
        n = 1 << 30  # 1 GiB each way: far beyond any L2
        buffers = [
            torch.empty(n, dtype=torch.uint8, device="cuda").random_(0, 255),
            torch.empty(n, dtype=torch.uint8, device="cuda"),
        ]
        t = self.time_ms(lambda: buffers[1].copy_(buffers[0]), 25, 200)
        out["copy_gbps"] = 2 * n / (t["median"] * 1e-3) / 1e9
        out["copy_ms"] = t["median"]
        buffers.clear()  # give the 2 GiB back before the matmul
        m = 8192
        a = torch.randn(m, m, dtype=torch.bfloat16, device="cuda")
        b = torch.randn(m, m, dtype=torch.bfloat16, device="cuda")
        t = self.time_ms(lambda: a @ b, 50, 300)
        out["bf16_tflops"] = 2 * m**3 / (t["median"] * 1e-3) / 1e12
        out["matmul_ms"] = t["median"]
        return out


class NpuBackend(Backend):
    name = "npu"

    def __init__(self) -> None:
        super().__init__()
        try:
            import torch_npu  # noqa: F401  (registers torch.npu)
        except Exception as exc:
            raise BackendUnavailable(
                f"backend 'npu' needs torch_npu (Ascend's PyTorch adapter) and CANN; importing it failed here: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        if not self.torch.npu.is_available():
            raise BackendUnavailable("backend 'npu': torch_npu is installed but no Ascend NPU is visible")

    @property
    def device(self) -> str:
        return "npu"

    def synchronize(self) -> None:
        self.torch.npu.synchronize()

    def info(self) -> dict[str, Any]:
        out: dict[str, Any] = {"vendor": "huawei", "name": self.torch.npu.get_device_name(0)}
        try:
            p = self.torch.npu.get_device_properties(0)
            out["memory_bytes"] = int(getattr(p, "total_memory", 0))
        except Exception:
            pass
        try:  # triton-ascend's driver reports the AI-core (cube) and vector-core counts
            from triton.runtime import driver

            props = driver.active.utils.get_device_properties(0)
            out["ai_cores"] = int(props.get("num_aicore", 0)) or None
            out["vector_cores"] = int(props.get("num_vectorcore", 0)) or None
        except Exception as exc:
            out["cores_error"] = f"{type(exc).__name__}: {exc}"
        return out

    def time_ms(self, fn: Callable[[], Any], warmup_ms: float, rep_ms: float) -> dict[str, float]:
        with exclusive():
            return self._events_ms(fn, warmup_ms, rep_ms)

    def _events_ms(self, fn: Callable[[], Any], warmup_ms: float, rep_ms: float) -> dict[str, float]:
        npu = self.torch.npu
        fn()
        npu.synchronize()
        start, end = npu.Event(enable_timing=True), npu.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            fn()
        end.record()
        npu.synchronize()
        estimate = max(start.elapsed_time(end) / 5, 1e-3)
        for _ in range(max(1, int(warmup_ms / estimate))):
            fn()
        samples = []
        for _ in range(max(5, int(rep_ms / estimate))):
            s, e = npu.Event(enable_timing=True), npu.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            npu.synchronize()
            samples.append(s.elapsed_time(e))
        return {**_percentiles(samples), "method": LAUNCHES}


class InterpretBackend(Backend):
    name = "interpret"
    timing_meaningful = (
        False  # the interpreter runs each program in NumPy: timings say nothing about hardware
    )

    def __init__(self) -> None:
        super().__init__()
        import numpy

        major, minor = (int(x) for x in numpy.__version__.split(".")[:2])
        self.numpy_warning = (
            f"numpy {numpy.__version__}: Triton 3.6's interpreter breaks on runtime loop bounds with numpy >= 2.3"
            if (major, minor) >= (2, 3)
            else ""
        )

    @property
    def device(self) -> str:
        return "cpu"

    def info(self) -> dict[str, Any]:
        return {"name": "cpu (TRITON_INTERPRET=1)", "vendor": "cpu"}

    def time_ms(self, fn: Callable[[], Any], warmup_ms: float, rep_ms: float) -> dict[str, float]:
        samples = []
        for _ in range(3):
            start = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - start) * 1e3)
        return _percentiles(samples)


def make_backend(name: str) -> Backend:
    if name == "cuda":
        return CudaBackend()
    if name == "npu":
        return NpuBackend()
    if name == "interpret":
        return InterpretBackend()
    raise BackendUnavailable(f"unknown backend {name!r}; use cuda, npu or interpret")


def _host_bench(kernel_call: Callable[[], Any], quantiles: Any = None, **_: Any) -> Any:
    """Autotuner benchmark for the interpreter: one call on the host clock (the meaning is nil either way)."""
    start = time.perf_counter()
    kernel_call()
    ms = (time.perf_counter() - start) * 1e3
    return [ms] * len(quantiles) if quantiles else ms


class interpret_mode:
    """Set TRITON_INTERPRET for the block: `@triton.jit` reads it when a harness module is executed.

    Interpreted, `@triton.autotune` still asks the GPU driver for a benchmarker and fails on a host without
    one ("0 active drivers"), so the block also times autotune candidates on the host clock.
    """

    def __init__(self, on: bool) -> None:
        self.on = on
        self.saved: str | None = None
        self.saved_bench: Any = None
        self.autotuner: Any = None

    def __enter__(self) -> None:
        self.saved = os.environ.get("TRITON_INTERPRET")
        if self.on:
            os.environ["TRITON_INTERPRET"] = "1"
            try:
                from triton.runtime import autotuner
            except ImportError:  # a triton without this module: nothing to patch
                return
            self.autotuner = autotuner.Autotuner
            self.saved_bench = self.autotuner.__dict__.get("do_bench")
            self.autotuner.do_bench = property(lambda _self: _host_bench)
        else:
            os.environ.pop("TRITON_INTERPRET", None)

    def __exit__(self, *exc: object) -> None:
        if self.autotuner is not None:
            if self.saved_bench is None:
                del self.autotuner.do_bench
            else:
                self.autotuner.do_bench = self.saved_bench
            self.autotuner = None
        if self.saved is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = self.saved
