"""Record every Triton launch at the launch seam, under the runner environment's own Python.

Triton 3.6's `knobs.runtime.launch_enter_hook` is called without the arguments, so the recorder wraps
`JITFunction.run` (and the interpreter's `InterpretedFunction.run`) instead: every `kernel[grid](...)` and every
launch from a library goes through it. `@triton.autotune` benchmarks each config through the same seam; those
trial launches are counted, not recorded (`Autotuner._bench` is wrapped to tell them apart): the launch the
program really runs is the one with the chosen config, and it carries how many trials preceded it.
Stdlib + triton + torch only (no tritonlens).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from launch_describe import (
    KernelInfo,
    describe_arg,
    grid_of,
    is_tensor,
    jsonable,
    refine_from_binder,
    resources_of,
    specialize_arg,
    torch_module,
    ttir_of,
    value_ranges,
)

_OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "multibuffer", "enable_fp_fusion")


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
                constants[name] = jsonable(value)
            elif attr == "D":
                divisible.append(name)
        opts = {k: jsonable(options[k]) for k in _OPTION_KEYS if k in options}
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
        tensors = [a for a in list(args) + list(kwargs.values()) if is_tensor(a)]
        size = sum(int(t.numel() * t.element_size()) for t in tensors)
        if self.snapshot_bytes + 2 * size > self.max_snapshot_bytes:
            if not self._snapshots_full:  # said once, not once per launch
                self._snapshots_full = True
                self.errors.append("snapshot budget reached: later launches are recorded without snapshots")
            return None
        self.snapshot_bytes += 2 * size
        _synchronize()
        return {
            "args": [a.detach().clone().cpu() if is_tensor(a) else a for a in args],
            "kwargs": {k: v.detach().clone().cpu() if is_tensor(v) else v for k, v in kwargs.items()},
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
        torch = torch_module()
        _synchronize()
        after: dict[str, Any] = {}
        for i, a in enumerate(args):
            if is_tensor(a):
                now = a.detach().cpu()
                written = not torch.equal(now, before["args"][i]) if now.dtype != torch.bool else False
                if now.is_floating_point():
                    written = not torch.equal(torch.nan_to_num(now), torch.nan_to_num(before["args"][i]))
                rec["args"][i]["written"] = bool(written)
                if written:
                    after[str(i)] = now.clone()
        for k, v in kwargs.items():
            if is_tensor(v):
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


def _synchronize() -> None:
    torch = torch_module()
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
