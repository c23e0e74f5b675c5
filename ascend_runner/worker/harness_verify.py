"""Compare a candidate's outputs with a reference's: tolerances from harness_tolerance (dtype, longest sum, TF32),
NaN/unwritten detection, poisoning; and the per-seed checks a verification records (`check_seeds`, shared by the
KernelBench-form verify job and the replay of recorded launches).

Poisoning: while the candidate runs, fresh `torch.empty*` allocations are filled with NaN (floats) or an
extreme sentinel (integers), so an output element the kernel never writes shows up as a mismatch instead of
happening to hold the right value. Stdlib + torch only (no tritonlens).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from harness_models import describe_exception
from harness_tolerance import Accumulation, DotPrecision, bound


def flatten_outputs(value: Any) -> list[Any]:
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in flatten_outputs(v)]
    if isinstance(value, dict):
        return [t for k in sorted(value) for t in flatten_outputs(value[k])]
    return []


def _distance(torch: Any, o64: Any, r64: Any) -> Any:
    """|o - r| with NaN where both are NaN counted as agreement and any other NaN as infinitely far. Equal
    infinities agree (a masked score or an empty max is -inf in both): inf - inf is NaN, not a distance."""
    diff = (o64 - r64).abs()
    agree = (torch.isnan(r64) & torch.isnan(o64)) | (torch.isinf(r64) & (o64 == r64))
    diff = torch.where(agree, torch.zeros_like(diff), diff)
    return torch.nan_to_num(diff, nan=float("inf"))


def compare(
    out: Any,
    ref: Any,
    exact: Any = None,
    accumulation: Accumulation | None = None,
    dot: DotPrecision | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    widen_by_reference_error: bool = False,
) -> dict[str, Any]:
    """Compare a candidate's outputs with the reference's (`ref`: as written; `exact`: the same reference in
    float64, when it could run). Per output, the bound of harness_tolerance.bound; an element passes when it is
    within that bound of either reference. A NaN where neither reference has one fails (poisoned, never written).
    The result names the tolerance used and, with `exact`, the reference's own error; `widen_by_reference_error`
    (replay, where K is unknown) lets that own error widen the bound."""
    import torch

    acc, prec = accumulation or Accumulation(), dot or DotPrecision()
    outs, refs = flatten_outputs(out), flatten_outputs(ref)
    exacts = flatten_outputs(exact) if exact is not None else [None] * len(refs)
    result: dict[str, Any] = {"passed": True, "max_abs": 0.0, "max_rel": 0.0, "norm_rel": 0.0, "reason": ""}
    if len(outs) != len(refs):
        return {**result, "passed": False, "reason": f"candidate returned {len(outs)} tensors, reference {len(refs)}"}
    tolerances: list[dict[str, Any]] = []
    worst_norm = ref_error = 0.0
    for i, (o, r, e) in enumerate(zip(outs, refs, exacts, strict=True)):
        if tuple(o.shape) != tuple(r.shape):
            return {**result, "passed": False, "reason": f"output {i}: shape {list(o.shape)} != {list(r.shape)}"}
        o64 = o.detach().to("cpu", torch.float64)
        r64 = r.detach().to("cpu", torch.float64)
        e64 = e.detach().to("cpu", torch.float64) if e is not None else None
        best = e64 if e64 is not None else r64  # the scale and the relative term come from the better reference
        nan_ok = torch.isnan(r64) | (torch.isnan(e64) if e64 is not None else torch.zeros_like(r64, dtype=torch.bool))
        bad_nan = torch.isnan(o64) & ~nan_ok
        if bool(bad_nan.any()) and result["passed"]:
            count = int(bad_nan.sum())
            result.update(passed=False, reason=f"output {i}: {count} element(s) NaN or never written (poisoned)")
        diff = _distance(torch, o64, r64)
        own_error = 0.0
        if e64 is not None:
            diff = torch.minimum(diff, _distance(torch, o64, e64))
            if r64.numel():
                own_error = float(torch.nan_to_num(_distance(torch, r64, e64), posinf=0.0).max())
                ref_error = max(ref_error, own_error)
        finite_ref = best[torch.isfinite(best)].abs()
        scale = float(finite_ref.max()) if finite_ref.numel() else 0.0
        tol = bound(r.dtype, scale, acc, prec, atol, rtol, own_error if widen_by_reference_error else 0.0)
        tolerances.append(tol)
        if not diff.numel():
            continue
        max_abs = float(diff.max())
        result["max_abs"] = max(result["max_abs"], max_abs)
        result["max_rel"] = max(result["max_rel"], float((diff / best.abs().clamp_min(1e-12)).max()))
        ref_norm = float(torch.nan_to_num(best).norm())
        err_norm = float(torch.nan_to_num(diff, posinf=0.0).norm())
        worst_norm = max(worst_norm, err_norm / ref_norm if ref_norm > 0 else err_norm)
        within = diff <= tol["atol"] + tol["rtol"] * torch.nan_to_num(best.abs(), nan=0.0)
        if not bool(within.all()) and result["passed"]:
            n_bad = int((~within).sum())
            result.update(
                passed=False,
                reason=f"output {i}: {n_bad} of {within.numel()} element(s) outside atol={tol['atol']:.3g} "
                f"rtol={tol['rtol']:.3g} (max abs error {max_abs:.3g}; bound: {tol['basis']})",
            )
    result["norm_rel"] = worst_norm
    result["tolerance"] = tolerances[0] if len(tolerances) == 1 else {"outputs": tolerances}
    result["reference"] = "float64 and as written" if exact is not None else "as written"
    if exact is not None:
        result["reference_error"] = ref_error  # the reference's own distance from float64: what it rounds
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


def check_seeds(
    payload: dict[str, Any],
    result: dict[str, Any],
    shape: str,
    held_out: bool,
    check_one: Callable[[int], dict[str, Any]],
    failed: str,
) -> bool:
    """`check_one(seed)` (a `compare` outcome) for every seed of the payload, each recorded in `result["checks"]`
    and and-ed into `result["passed"]`; False when one raised (stop: the rest would repeat it), recorded with
    `failed` as the reason's start."""
    for seed in payload.get("seeds") or [0]:
        check: dict[str, Any] = {"seed": int(seed), "shape": shape, "held_out": held_out}
        try:
            outcome = check_one(int(seed))
            result["tolerance"] = outcome.get("tolerance") or {}
            check.update(outcome)
        except Exception as exc:
            check.update(passed=False, reason=f"{failed}: {describe_exception(exc)}")
            result["checks"].append(check)
            result["passed"] = False
            return False
        result["checks"].append(check)
        result["passed"] = result["passed"] and bool(check["passed"])
    return True
