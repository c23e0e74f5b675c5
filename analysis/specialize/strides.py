"""Stride parameters of a tensor's innermost dimension, told by their names, for when no launch shows them.

Real launches pass `x.stride(0), x.stride(1)` of contiguous tensors, so the last stride of each tensor is 1 and
Triton's JIT specializes it to the constant 1: the loads along that dimension are contiguous and vectorize. A
kernel compiled with that stride as an unknown multiple of 16 gets scalar loads no real launch has. Strides are
grouped per tensor by name, in parameter order (`stride_am, stride_ak` -> tensor `a`; `x_stride_0, x_stride_1`
-> `x`; `stride_qz, stride_qh, stride_qm, stride_qk` -> `q`); the last of a group of two or more is the innermost.
A lone stride (`row_stride`) is a row stride: never assumed 1. Pure: names in, names out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

ASSUMED_UNIT_STRIDE = (
    "value unknown: taken as 1, the innermost stride of a contiguous tensor as real launches pass it "
    "(the JIT specializes it to the constant 1)"
)
_DIM_WORDS = frozenset({"row", "rows", "col", "cols", "column", "batch", "head", "heads", "seq", "dim", "tok",
                        "token", "feat", "channel", "h", "t", "d", "m", "n", "k", "z"})


def _tensor_of(name: str) -> str | None:
    """The tensor a stride parameter belongs to (its name less the dimension), or None for no stride/a lone one."""
    parts = [p for p in name.lower().split("_") if p]
    at = next((i for i, p in enumerate(parts) if "stride" in p), None)
    if at is None or parts[at] not in ("stride", "strides"):
        return None
    before, after = parts[:at], parts[at + 1 :]
    if len(after) >= 2:
        return "_".join(before + after[:-1])
    if len(after) == 1:
        token = after[0]
        if before:
            return "_".join(before)
        digits = re.match(r"^([a-z]*?)(\d+)$", token)
        if digits:
            return digits.group(1)
        if token in _DIM_WORDS:
            return ""
        return token[:-1] if len(token) >= 2 else None
    return "_".join(before[:-1]) if len(before) >= 2 else None  # `x_row_stride`: tensor x, dim row


tensor_of = _tensor_of  # public name for the policy that pairs a stride with its tensor's unit stride


def innermost_strides(params: Sequence[str]) -> frozenset[str]:
    """The parameters of `params` that are the last stride of a tensor with two or more named strides."""
    groups: dict[str, list[str]] = {}
    for name in params:
        tensor = _tensor_of(name)
        if tensor is not None:
            groups.setdefault(tensor, []).append(name)
    return frozenset(names[-1] for names in groups.values() if len(names) >= 2)
