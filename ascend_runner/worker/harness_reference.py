"""The reference's outputs twice: as written (its own dtype, on the device: cuDNN may use TF32, a scan may sum in
any order) and the same model in float64, which separates a kernel's error from the reference's own.

A kernel is compared with both (harness_verify.compare): an element passes when it is within the tolerance of
either faithful evaluation. The float64 run also watches the operations the reference dispatches, to find the
longest sum it computes (harness_tolerance.AccumulationProbe). A model that cannot run in float64 (a dtype check,
an operation without a float64 kernel) is compared with the reference as written only, and the record says why.
Stdlib + torch only (no tritonlens).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from harness_tolerance import Accumulation, AccumulationProbe


@dataclass
class ReferenceOutputs:
    native: Any
    exact: Any = None  # the float64 evaluation, or None (see `note`)
    accumulation: Accumulation = field(default_factory=Accumulation)
    note: str = ""  # why there is no float64 evaluation

    @property
    def kind(self) -> str:
        return "float64" if self.exact is not None else f"as written only ({self.note})"


def _to_float64(torch: Any, value: Any) -> Any:
    if hasattr(value, "is_floating_point") and value.is_floating_point():
        return value.detach().to(torch.float64)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_float64(torch, v) for v in value)
    return value


def _clone(value: Any) -> Any:
    return value.clone() if hasattr(value, "clone") else value


def _shapes(value: Any) -> list[tuple[int, ...]]:
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return [tuple(value.shape)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _shapes(v)]
    if isinstance(value, dict):
        return [s for k in sorted(value) for s in _shapes(value[k])]
    return []


class Float64Reference:
    """A float64 copy of the reference model, made once per shape and used for every seed."""

    def __init__(self, torch: Any, reference: Any) -> None:
        self.torch = torch
        self.model: Any = None
        self.note = ""
        try:
            model = copy.deepcopy(reference)
            self.model = model.to(torch.float64) if hasattr(model, "to") else model
        except Exception as exc:
            self.note = f"the reference cannot be copied to float64: {type(exc).__name__}: {str(exc)[:120]}"

    def run(self, native_model: Any, args: list[Any]) -> ReferenceOutputs:
        torch = self.torch
        probe = AccumulationProbe()
        if self.model is None:
            native = probe.run(lambda: native_model(*[_clone(x) for x in args]))
            return ReferenceOutputs(native, None, probe.found, self.note)
        native = native_model(*[_clone(x) for x in args])
        previous = torch.get_default_dtype()
        try:
            torch.set_default_dtype(torch.float64)  # tensors the model makes itself are float64 too
            exact = probe.run(lambda: self.model(*[_to_float64(torch, x) for x in args]))
        except Exception as exc:
            torch.set_default_dtype(previous)
            probe = AccumulationProbe()
            probe.run(lambda: native_model(*[_clone(x) for x in args]))
            note = f"the reference failed in float64: {type(exc).__name__}: {str(exc)[:120]}"
            return ReferenceOutputs(native, None, probe.found, note)
        finally:
            torch.set_default_dtype(previous)
        if _shapes(exact) != _shapes(native):
            return ReferenceOutputs(native, None, probe.found, "the float64 reference returned other shapes")
        return ReferenceOutputs(native, exact, probe.found)
