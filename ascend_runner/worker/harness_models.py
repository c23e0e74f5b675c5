"""KernelBench models and inputs on a backend: seeding, construction, module-global size overrides.

Stdlib + torch only (no tritonlens); shared by run_job.py and verify_job.py.
"""

from __future__ import annotations

import os
import traceback
from typing import Any

from harness_backend import Backend
from harness_load import HarnessError


def seed_all(be: Backend, seed: int) -> None:
    be.torch.manual_seed(seed)
    if be.name == "cuda":
        be.torch.cuda.manual_seed_all(seed)


def kernelbench(module: Any, names: tuple[str, ...] = ("Model", "ModelNew")) -> None:
    missing = [n for n in (*names, "get_inputs", "get_init_inputs") if not hasattr(module, n)]
    if missing:
        raise HarnessError(
            f"not a KernelBench-format module: missing {', '.join(missing)} "
            "(needs Model, ModelNew, get_inputs(), get_init_inputs())"
        )


def make_model(be: Backend, module: Any, cls_name: str, init: list[Any], seed: int) -> Any:
    seed_all(be, seed)  # same seed for both models: their parameters start equal, as KernelBench does
    model = getattr(module, cls_name)(*init)
    return model.to(be.device) if hasattr(model, "to") else model


def inputs(be: Backend, module: Any, seed: int) -> list[Any]:
    seed_all(be, seed)
    return [be.to_device(x) for x in module.get_inputs()]


def clone(x: Any) -> Any:
    return x.clone() if hasattr(x, "clone") else x


def apply_overrides(modules: list[Any], overrides: dict[str, Any]) -> None:
    """Set module-level size globals (bench/README.md: TEST_SHAPES entries) on every module of the job, so the
    reference, the baseline and the candidate see the same sizes. An unknown name is an error, not a no-op."""
    for name, value in overrides.items():
        if not str(name).isidentifier():
            raise HarnessError(f"shape override {name!r} is not a Python name")
        for module in modules:
            if not hasattr(module, name):
                raise HarnessError(f"shape override {name}={value!r}: the module has no global {name!r}")
            setattr(module, name, value)


def describe_exception(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    user = [f for f in frames if "ascend_runner/worker" not in f.filename.replace(os.sep, "/")]
    where = f" ({user[-1].filename}:{user[-1].lineno})" if user else ""
    return f"{type(exc).__name__}: {exc}{where}"
