"""Compare a candidate's outputs with a reference's: tolerances by dtype, NaN/unwritten detection, poisoning.

Poisoning: while the candidate runs, fresh `torch.empty*` allocations are filled with NaN (floats) or an
extreme sentinel (integers), so an output element the kernel never writes shows up as a mismatch instead of
happening to hold the right value. Stdlib + torch only (no tritonlens).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

# (atol, rtol) per dtype: float32 leaves room for reordered sums; low precision for one rounding per element.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
    "float8_e4m3fn": (1e-1, 1e-1),
    "float8_e5m2": (2e-1, 2e-1),
}
TF32_TOLERANCE = (1e-2, 1e-2)  # Triton's default for a float32 tl.dot is tf32


def tolerance_for(dtype: Any, uses_dot: bool = False) -> tuple[float, float]:
    name = str(dtype).replace("torch.", "")
    if name == "float32" and uses_dot:
        return TF32_TOLERANCE
    return TOLERANCES.get(name, (0.0, 0.0))  # integers and bools: exact


def flatten_outputs(value: Any) -> list[Any]:
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in flatten_outputs(v)]
    if isinstance(value, dict):
        return [t for k in sorted(value) for t in flatten_outputs(value[k])]
    return []


def compare(
    out: Any, ref: Any, atol: float | None = None, rtol: float | None = None, uses_dot: bool = False
) -> dict[str, Any]:
    """Max abs / max rel / norm-relative error over all output tensors; passed if every element is within
    atol + rtol*|ref| and the candidate has no NaN where the reference has none."""
    import torch

    outs, refs = flatten_outputs(out), flatten_outputs(ref)
    result: dict[str, Any] = {"passed": True, "max_abs": 0.0, "max_rel": 0.0, "norm_rel": 0.0, "reason": ""}
    if len(outs) != len(refs):
        return {
            **result,
            "passed": False,
            "reason": f"candidate returned {len(outs)} tensors, reference {len(refs)}",
        }
    worst_norm = 0.0
    for i, (o, r) in enumerate(zip(outs, refs, strict=True)):
        if tuple(o.shape) != tuple(r.shape):
            return {
                **result,
                "passed": False,
                "reason": f"output {i}: shape {list(o.shape)} != {list(r.shape)}",
            }
        a_tol, r_tol = tolerance_for(r.dtype, uses_dot)
        a_tol = a_tol if atol is None else atol
        r_tol = r_tol if rtol is None else rtol
        result["atol"], result["rtol"] = a_tol, r_tol
        o64 = o.detach().to("cpu", torch.float64)
        r64 = r.detach().to("cpu", torch.float64)
        bad_nan = torch.isnan(o64) & ~torch.isnan(r64)
        if bool(bad_nan.any()):
            count = int(bad_nan.sum())
            result.update(
                passed=False, reason=f"output {i}: {count} element(s) NaN or never written (poisoned)"
            )
        diff = (o64 - r64).abs()
        diff = torch.where(torch.isnan(r64) & torch.isnan(o64), torch.zeros_like(diff), diff)
        finite = torch.nan_to_num(diff, nan=float("inf"))
        if finite.numel():
            max_abs = float(finite.max())
            rel = finite / r64.abs().clamp_min(1e-12)
            result["max_abs"] = max(result["max_abs"], max_abs)
            result["max_rel"] = max(result["max_rel"], float(rel.max()))
            ref_norm = float(torch.nan_to_num(r64).norm())
            err_norm = float(torch.nan_to_num(diff, nan=0.0).norm())
            worst_norm = max(worst_norm, err_norm / ref_norm if ref_norm > 0 else err_norm)
            within = finite <= a_tol + r_tol * r64.abs()
            if not bool(within.all()) and result["passed"]:
                n_bad = int((~within).sum())
                result.update(
                    passed=False,
                    reason=f"output {i}: {n_bad} of {within.numel()} element(s) outside atol={a_tol:g} rtol={r_tol:g} "
                    f"(max abs error {max_abs:.3g})",
                )
    result["norm_rel"] = worst_norm
    for key in ("max_abs", "max_rel", "norm_rel"):
        if result[key] == float("inf"):
            result[key] = None  # JSON has no infinity
    return result


def _poison_fill(t: Any) -> Any:
    import torch

    if t.is_floating_point() or t.is_complex():
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.fill_(True)
    else:
        t.fill_(torch.iinfo(t.dtype).min)
    return t


@contextlib.contextmanager
def poisoned_allocations() -> Iterator[None]:
    """Fill every fresh torch.empty / empty_like / empty_strided / Tensor.new_empty with poison."""
    import torch

    originals = {
        "empty": torch.empty,
        "empty_like": torch.empty_like,
        "empty_strided": torch.empty_strided,
    }
    new_empty = torch.Tensor.new_empty

    def wrap(fn: Any) -> Any:
        def poisoned(*args: Any, **kwargs: Any) -> Any:
            return _poison_fill(fn(*args, **kwargs))

        return poisoned

    try:
        for name, fn in originals.items():
            setattr(torch, name, wrap(fn))
        torch.Tensor.new_empty = wrap(new_empty)  # type: ignore[method-assign]
        yield
    finally:
        for name, fn in originals.items():
            setattr(torch, name, fn)
        torch.Tensor.new_empty = new_empty  # type: ignore[method-assign]
