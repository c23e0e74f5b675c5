"""A kernel the profile never saw launched at the timing shape (a fallback for other sizes) is not rewritten: no
rewrite of it can be faster there, and its candidates spent blind set 7's budgets failing correctness."""

from __future__ import annotations

from typing import Any

from tritonlens.analysis.rewrite.model import Candidate, RecipeContext, Verdict
from tritonlens.server.engine.optimize.evidence import Evidence
from tritonlens.server.engine.optimize.loop import OptimizeResult, _propose

SOURCE = '''
import triton
import triton.language as tl


@triton.jit
def fast_path(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


@triton.jit
def fallback(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 2.0)
'''


class AskedFor:
    name = "recorder"

    def __init__(self) -> None:
        self.kernels: list[str] = []

    def propose(self, ctx: RecipeContext, feedback: list[Verdict]) -> list[Candidate]:
        self.kernels.append(ctx.kernel)
        return []


def _asked(profile: dict[str, Any] | None) -> tuple[list[str], list[str]]:
    proposer = AskedFor()
    out = OptimizeResult("task.py", SOURCE, SOURCE, "cuda", "sm_90")
    _propose(SOURCE, "task.py", "sm_90", Evidence(profile=profile), [proposer], {}, set(), out)
    return proposer.kernels, out.notes


def test_only_the_kernels_the_profile_saw_are_rewritten() -> None:
    kernels, notes = _asked({"timing_meaningful": True, "launches": [{"kernel": "fast_path", "grid": [1, 1, 1]}]})
    assert kernels == ["fast_path"]
    assert notes == ["fallback: not launched at the timing shape (the profile), so not rewritten"]


def test_without_a_timed_profile_every_kernel_is_rewritten() -> None:
    assert _asked(None)[0] == ["fast_path", "fallback"]
    interpreted = {"timing_meaningful": False, "launches": [{"kernel": "fast_path"}]}
    assert _asked(interpreted)[0] == ["fast_path", "fallback"]
    assert _asked({"timing_meaningful": True, "launches": []})[0] == ["fast_path", "fallback"]
