"""How far a correct kernel may be from its reference: a bound from the dtype, the longest sum the reference
computes, and whether the kernel's `tl.dot` rounds float32 inputs to TF32.

Error model (docs/optimize.md, "Tolerance"). A kernel that computes the same function in the output's precision
differs from the exact result by rounding its inputs (relative `eps_in`: the dtype's epsilon, or TF32's when a
float32 `tl.dot` runs on TF32 tensor cores) and by accumulating a K-term sum in another order (random rounding
errors grow like `eps_acc * sqrt(K)`, relative to the magnitude of the partial sums). Measured from the
reference itself, per output:

    atol = max(floor_atol * min(1, max|ref|), MARGIN * (eps_in + eps_acc * sqrt(K)) * max|ref|)
    rtol = max(floor_rtol, MARGIN * eps_in)

K is the longest single sum among the operations the reference dispatches (`AccumulationProbe`: a matmul's inner
dimension, a convolution's input channels x taps, a scan's or softmax's length, a reduction's input/output ratio).
The floors are the per-dtype table the gate always used (its atol scaled down for outputs smaller than 1, such as
probabilities, where an absolute 1e-4 would hide a 1e-3 relative error), so a kernel without long sums is held to
the same bound as before. Stdlib + torch only (no tritonlens).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

# Unit of least precision at 1.0 (machine epsilon) per dtype; TF32 keeps float32's exponent and 10 mantissa bits.
EPS: dict[str, float] = {
    "float64": 2.0**-52,
    "float32": 2.0**-23,
    "tf32": 2.0**-10,
    "float16": 2.0**-10,
    "bfloat16": 2.0**-7,
    "float8_e4m3fn": 2.0**-3,
    "float8_e5m2": 2.0**-2,
}
# (atol, rtol) floors per dtype: one rounding per element plus room for libdevice vs PyTorch transcendentals.
FLOORS: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-7),
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
    "float8_e4m3fn": (1e-1, 1e-1),
    "float8_e5m2": (2e-1, 2e-1),
}
# The bound's constant: a sum's rounding error is a random walk whose typical size is below eps*sqrt(K)*|partial
# sums|; the largest of millions of elements sits a few standard deviations out. 4x covers that and still
# rejects a 1e-3 relative error in float32 up to K ~ 4e6.
MARGIN = 4.0


@dataclass
class Accumulation:
    """The longest sum the reference computes, and the operation that computes it."""

    k: int = 1
    op: str = ""
    note: str = ""  # why K is unknown, when it is

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"k": self.k, "op": self.op}
        if self.note:
            out["note"] = self.note
        return out


@dataclass
class DotPrecision:
    """Whether the candidate's tl.dot rounds float32 inputs to TF32, and the evidence."""

    tf32: bool = False
    evidence: str = ""


def dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def bound(
    dtype: Any,
    max_ref: float,
    accumulation: Accumulation,
    dot: DotPrecision,
    atol: float | None = None,
    rtol: float | None = None,
    observed: float = 0.0,
) -> dict[str, Any]:
    """{"atol", "rtol", "basis"} for one output of `dtype` whose reference peaks at `max_ref` in magnitude.
    Integers and booleans are exact. `observed`: the reference's own distance from its float64 evaluation, used
    where K cannot be known (replay): atol is at least MARGIN times it. `atol`/`rtol` given by the caller win and
    the basis says so."""
    name = dtype_name(dtype)
    if name not in EPS:
        return {"atol": atol or 0.0, "rtol": rtol or 0.0, "basis": f"{name}: exact" if atol is None else "given"}
    floor_a, floor_r = FLOORS[name]
    tf32 = dot.tf32 and name == "float32"
    eps_in = EPS["tf32"] if tf32 else EPS[name]
    eps_acc = EPS["float64"] if name == "float64" else EPS["float32"]  # Triton and PyTorch accumulate in fp32
    k = max(1, int(accumulation.k))
    scale = max_ref if math.isfinite(max_ref) else 0.0
    derived = MARGIN * (eps_in + eps_acc * math.sqrt(k)) * scale
    widened = MARGIN * observed if math.isfinite(observed) else 0.0
    floor_a *= min(1.0, scale) if scale > 0 else 1.0  # the table's atol is for outputs of order 1
    a_tol, r_tol = max(floor_a, derived, widened), max(floor_r, MARGIN * eps_in)
    precision = f"TF32 inputs ({dot.evidence})" if tf32 else name
    summed = f"K={k} ({accumulation.op})" if accumulation.op else (accumulation.note or f"K={k}")
    basis = (
        f"{precision}, {summed}, max|ref| {scale:.3g}: atol max({floor_a:.3g}, {MARGIN:g}*({eps_in:.2g} + "
        f"{eps_acc:.2g}*sqrt({k}))*{scale:.3g}"
        + (f", {MARGIN:g}*own error {observed:.2g}" if observed > 0 else "")
        + f") = {a_tol:.3g}, rtol {r_tol:.3g}"
    )
    if atol is not None or rtol is not None:
        a_tol = a_tol if atol is None else float(atol)
        r_tol = r_tol if rtol is None else float(rtol)
        basis = f"given by the caller (atol {a_tol:g}, rtol {r_tol:g}); the derived bound was: {basis}"
    return {"atol": a_tol, "rtol": r_tol, "basis": basis}


# -- the longest sum: watch the operations the reference dispatches ------------------------------------------

_CONTRACTIONS = {  # operation -> index of the operand whose last dimension is summed over
    "mm": 0, "bmm": 0, "matmul": 0, "dot": 0, "vdot": 0, "mv": 0, "inner": 0, "_scaled_mm": 0,
    "addmm": 1, "baddbmm": 1, "addbmm": 1, "addmv": 1, "_addmm_activation": 1,
}
_ALONG_DIM = {"cumsum", "cumprod", "logcumsumexp", "_logcumsumexp", "_softmax", "_log_softmax", "softmax",
              "log_softmax", "_safe_softmax"}
_CONVOLUTIONS = {"convolution", "_convolution", "convolution_overrideable", "cudnn_convolution",
                 "mkldnn_convolution", "_slow_conv2d_forward", "slow_conv3d_forward", "_nnpack_spatial_convolution",
                 "slow_conv_dilated2d", "slow_conv_dilated3d"}
_BATCH_NORMS = {"native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_functional",
                "cudnn_batch_norm", "miopen_batch_norm"}
# Reductions and accumulating scatters: each output element combines about (largest input / output) inputs.
_REDUCTIONS = {"sum", "mean", "nansum", "nanmean", "var", "std", "var_mean", "std_mean", "norm",
               "linalg_vector_norm", "prod", "logsumexp", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
               "nll_loss", "nll_loss_forward", "nll_loss2d_forward", "binary_cross_entropy",
               "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss", "trace", "_cdist_forward", "dist",
               "scatter_add", "scatter_reduce", "index_add", "index_reduce", "embedding_bag", "_embedding_bag",
               "_embedding_bag_forward_only", "index_put", "_index_put_impl", "sum_to_size", "_weight_norm_interface"}


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype") and hasattr(x, "numel")


def _numel(value: Any) -> int:
    if _is_tensor(value):
        return int(value.numel())
    if isinstance(value, (list, tuple)):
        return sum(_numel(v) for v in value)
    return 0


def sum_length(name: str, args: tuple[Any, ...], out: Any) -> int:
    """The number of terms each output element of one aten operation sums (1: no sum)."""
    base = name.rstrip("_")
    if base in _CONTRACTIONS:
        operand = args[_CONTRACTIONS[base]]
        return int(operand.shape[-1]) if _is_tensor(operand) and operand.dim() else 1
    if base in _ALONG_DIM:
        x, dim = args[0], int(args[1]) if len(args) > 1 else -1
        return int(x.shape[dim]) if _is_tensor(x) and x.dim() else 1
    if base in _CONVOLUTIONS:
        weight = args[1]
        taps = math.prod(int(s) for s in weight.shape[2:])
        transposed = bool(args[6]) if base in ("convolution", "_convolution") and len(args) > 8 else False
        if transposed:  # weight (C_in, C_out/groups, *k): an output sums at most C_in/groups x taps terms
            return max(1, int(weight.shape[0]) // max(1, int(args[8]))) * taps
        return int(weight.shape[1]) * taps  # weight (C_out, C_in/groups, *k)
    if base == "native_layer_norm":
        return math.prod(int(s) for s in args[1])
    if base == "native_group_norm":  # (input, weight, bias, N, C, HxW, group, eps)
        return max(1, int(args[4]) // max(1, int(args[6]))) * int(args[5])
    if base in _BATCH_NORMS:
        training = bool(args[5]) if len(args) > 5 and isinstance(args[5], bool) else base != "native_batch_norm"
        x = args[0]
        return int(x.numel()) // max(1, int(x.shape[1])) if training and x.dim() > 1 else 1
    if base.startswith("_scaled_dot_product") or base == "scaled_dot_product_attention":
        q, k = args[0], args[1]
        return max(int(q.shape[-1]), int(k.shape[-2]))
    if base in _REDUCTIONS:
        largest = max((_numel(a) for a in args), default=0)
        return max(1, largest // max(1, _numel(out)))
    return 1


class AccumulationProbe:
    """Runs a function under a dispatch mode that notes the longest sum of any aten operation it calls."""

    def __init__(self) -> None:
        self.found = Accumulation()

    def run(self, fn: Any) -> Any:
        try:
            from torch.utils._python_dispatch import TorchDispatchMode
        except ImportError:  # every torch since 1.13 has it; say so rather than guess
            self.found = Accumulation(note="K unknown, this torch has no dispatch mode")
            return fn()
        probe = self

        class _Probe(TorchDispatchMode):
            def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                out = func(*args, **(kwargs or {}))
                try:
                    name = func.overloadpacket.__name__
                    k = sum_length(name, tuple(args), out)
                except Exception:  # an operation whose arguments we read wrong counts as no sum
                    k = 1
                if k > probe.found.k:
                    probe.found = Accumulation(k, f"aten.{name}")
                return out

        with _Probe():
            return fn()


# -- TF32: the TTIR's word, else the source's ---------------------------------------------------------------

_PRECISION = re.compile(r"\btt\.dot\b[^\n]*?inputPrecision\s*=\s*(\w+)")
_IEEE_IN_SOURCE = re.compile(r"input_precision\s*=\s*['\"]ieee['\"]|allow_tf32\s*=\s*False")


def dot_precision(launches: list[dict[str, Any]], backend: str) -> DotPrecision:
    """TF32 is in play when a launch's TTIR has `tt.dot ... inputPrecision = tf32` (Triton prints the attribute
    only when it is not IEEE). Without TTIR: the interpreter multiplies in float32 (numpy), so no; a compiled
    backend that kept no TTIR falls back to the source (a tl.dot without input_precision="ieee"), named as such."""
    no_ttir: list[str] = []
    for rec in launches:
        ttir = rec.get("ttir")
        if ttir:
            found = {m.group(1) for m in _PRECISION.finditer(ttir)}
            if "tf32" in found:
                return DotPrecision(True, f"TTIR of {rec.get('kernel')}: tt.dot inputPrecision = tf32")
        elif rec.get("uses_dot") and not rec.get("dot_ieee_in_source"):
            no_ttir.append(str(rec.get("kernel")))
    if no_ttir and backend not in ("interpret", "cpu"):
        return DotPrecision(True, f"source of {no_ttir[0]}: tl.dot without input_precision=\"ieee\" (no TTIR kept)")
    return DotPrecision(False, "")


def ieee_in_source(source: str) -> bool:
    return bool(_IEEE_IN_SOURCE.search(source))
