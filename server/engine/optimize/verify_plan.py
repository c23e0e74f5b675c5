"""What the gate sends the runner for one candidate, computed once (Gate.plan): the typed verify request (with the
replayed launches and their launch-site overrides, replay_overrides.py), or why replay cannot verify the candidate.

The loop asks for a candidate's plan before the candidate takes a verification slot (a refusal is declined for
free) and hands the same plan to `Gate.check`, so the launch-site overrides are worked out once per candidate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ....ascend_runner.protocol import VerifyRequest
from .replay import first_changed_line
from .replay_overrides import candidate_launches


@dataclass(frozen=True)
class VerificationPlan:
    baseline_source: str  # the text the candidate is timed against
    candidate_source: str
    request: VerifyRequest | None  # None when refused
    refusal: str | None = None  # why replay cannot verify the candidate

    def matches(self, baseline_source: str, candidate_source: str) -> bool:
        return self.baseline_source == baseline_source and self.candidate_source == candidate_source


def replay_launches_for(
    launches: list[dict[str, Any]], original: str, baseline_source: str, candidate_source: str
) -> list[dict[str, Any]] | str:
    """The recorded launches, each with the launch-site overrides of the candidate (and of the baseline, where an
    earlier round changed a launch site) that replay applies, or why replay cannot verify the candidate."""
    out, why = candidate_launches(launches, original, candidate_source)
    if why is None and baseline_source != original:
        base, why = candidate_launches(launches, original, baseline_source)
        out = [{**c, "baseline": b["candidate"]} if "candidate" in b else c for c, b in zip(out, base, strict=True)]
    if why is None:
        return out
    line = first_changed_line(original, candidate_source)
    where = f" (line {line})" if line else ""
    return (
        "replay launches each kernel as it was recorded (only a launch site's constexprs, launch options and grid "
        f"can be overridden), so it cannot verify a change outside the kernels' bodies{where}: {why}. Verify it in "
        "KernelBench form (Model/ModelNew) instead"
    )
