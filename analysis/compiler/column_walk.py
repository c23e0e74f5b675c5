"""A strided access whose stride the launch shows is an outer dimension's: lanes walk a column.

TL301 blames the runtime stride that multiplies the contiguous (`tl.arange`) index and, when nobody shows its
value, hedges that a launch passing 1 would specialize it away. When the launch passes `x.stride(d)` of an outer
dimension of a rank-2+ tensor (`launch.OUTER_STRIDE` in the provenance), that stride is never 1 for a row-major
tensor: each lane touches another row, the access is uncoalesced on every launch, and the only cure is to give
`tl.arange` to the contiguous axis. This rewrites such a finding to say so (pure: findings and specializations).
"""

from __future__ import annotations

from dataclasses import replace

from ..core.findings import Finding
from ..specialize.launch import OUTER_STRIDE
from ..specialize.strides import tensor_of
from ..specialize.variant import Specialization

NOT_CONTIGUOUS_CODE = "TL301"
SECTOR_BITS = 256  # a 32-byte memory sector


def outer_stride(f: Finding, spec: Specialization) -> str | None:
    """The stride `f` blames when the launch shows it is an outer dimension's and no other runtime stride of the
    address could be the unit one (which would leave the hedge open)."""
    arg = f.data.get("culprit")
    if f.code != NOT_CONTIGUOUS_CODE or f.data.get("cause") != "stride" or not isinstance(arg, str):
        return None
    if OUTER_STRIDE not in spec.provenance.get(arg, ""):
        return None
    others = [a for a in f.data.get("runtime_multipliers") or [] if a != arg]
    if any(OUTER_STRIDE not in spec.provenance.get(a, "") for a in others):
        return None
    return arg


def unit_stride_of(arg: str, spec: Specialization) -> str | None:
    """The parameter compiled as the unit (innermost) stride of the tensor `arg` strides, told by its name."""
    tensor = tensor_of(arg)
    if tensor is None:
        return None
    return next(
        (p for p, v in spec.constants.items() if p != arg and v == 1 and tensor_of(p) == tensor), None
    )


def as_column_walk(f: Finding, spec: Specialization) -> Finding:
    """`f` rewritten as a column walk when it blames an outer dimension's stride, else `f` unchanged."""
    arg = outer_stride(f, spec)
    if arg is None:
        return f
    base = f.data.get("base") or "the pointer"
    bits = int(f.data.get("achieved_bits") or 32)
    what = "store to" if f.data.get("access") == "store" else "load from"
    unit = unit_stride_of(arg, spec)
    along = f"the index multiplied by `{unit}` (the unit stride)" if unit else "the contiguous (last) axis"
    message = (
        f"{what} `{base}` walks a column: the `tl.arange` index is multiplied by `{arg}`, an outer dimension's "
        "stride (the launch passes it; never 1 for a row-major tensor), so neighbouring lanes touch different "
        f"rows and each lane's {bits}-bit access lands in its own memory sector (uncoalesced); no value of "
        f"`{arg}` makes it contiguous."
    )
    rewrite = (
        f"give `tl.arange` to {along}: e.g. each program takes a [rows, cols] tile whose inner `tl.arange` runs "
        "along the contiguous axis (transpose the tile in registers if the math needs the other order), or "
        "store the data transposed so this walk is along rows"
    )
    gain = (
        f"lanes along the contiguous axis: up to {max(1, SECTOR_BITS // bits)}x fewer memory sectors on this "
        "line when rows are 32 bytes or more apart"
    )
    data = {**f.data, "rewrite": rewrite, "pattern": "column-walk"}
    return replace(f, message=message, estimated_gain=gain, data=data)


def column_walk_advice(arg: str) -> str:
    """The bracket for a column walk whose stride value is not shown: the finding holds, its size varies."""
    return (
        f"`{arg}` has no visible value: it is an outer dimension's stride, so this holds for every launch; how "
        f"much it costs grows with it; add `# tritonlens: {arg}=<value>` above the kernel to analyze a real launch"
    )

