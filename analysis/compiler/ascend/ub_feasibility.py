"""Does a configuration fit the Ascend Unified Buffer? Decided by BiSheng's PlanMemory, not by a formula.

For config search: compile each candidate (block sizes as constexprs) for an Ascend target, then call
`ub_feasibility(result)` on the compile result. `feasible` is
- False when bishengir-compile reported `ub overflow, requires N bits while M bits available!` (after its own
  retries without code motion and without multibuffer): prune the configuration;
- True when PlanMemory placed every UB buffer (the pipeline then ran on to hivmc, or built a binary);
- None when the compiler did not decide (no hivm stage: ascendnpu-ir missing, timeout, another failure):
  the caller keeps the candidate or falls back to its own estimate, and should say so.
Pure: reads the result's `stages` and `metadata` (a CompileResult, its dict form, or any object with them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..ir import hivm as H
from ..ir.mlir_loc import UserFiles


@dataclass(frozen=True)
class UbVerdict:
    feasible: bool | None
    used_bits: int | None  # PlanMemory's layout (feasible) or the compiler's requirement (overflow)
    available_bits: int | None  # the target's UB as the compiler states it
    source: str  # "bishengir" when the compiler decided, else "undecided"
    reason: str

    @property
    def headroom_bits(self) -> int | None:
        if self.used_bits is None or self.available_bits is None:
            return None
        return self.available_bits - self.used_bits


def _field(result: Any, name: str) -> dict[str, Any]:
    value = result.get(name) if isinstance(result, Mapping) else getattr(result, name, None)
    return value if isinstance(value, dict) else {}


def ub_feasibility(result: Any) -> UbVerdict:
    """The compiler's UB verdict for one compiled configuration (see the module docstring)."""
    stages, metadata = _field(result, "stages"), _field(result, "metadata")
    info = metadata.get("hivm") if isinstance(metadata.get("hivm"), dict) else {}
    status = info.get("status")
    log = H.parse_log(stages.get("hivm.log", "") if isinstance(stages.get("hivm.log"), str) else "")
    if log.overflow is not None:
        o = log.overflow
        return UbVerdict(
            False,
            o.required_bits,
            o.available_bits,
            "bishengir",
            f"ub overflow: requires {o.required_bits} bits while {o.available_bits} bits available"
            + (f" (after retrying: {'; '.join(log.retries)})" if log.retries else ""),
        )
    if status not in ("hivmc-missing", "binary"):
        why = info.get("message") or (f"hivm stage {status}" if status else "no hivm stage in this result")
        return UbVerdict(None, None, None, "undecided", f"the compiler did not decide: {why}")
    plans = [p for p in H.ub_plans(stages.get("hivm.plan-memory", ""), UserFiles([])) if not p.failed]
    capacity = H.ub_capacity_bits(stages.get("hivm", ""))
    used = max((p.used_bytes * 8 for p in plans), default=0)
    return UbVerdict(
        True,
        used,
        capacity,
        "bishengir",
        f"PlanMemory placed every UB buffer: {used} of {capacity or '?'} bits",
    )
