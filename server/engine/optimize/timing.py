"""Is a measured speedup real? Pure arithmetic over interleaved samples (baseline, candidate alternating).

Each repeat r gives one ratio baseline_r / candidate_r. The speedup is the median ratio; its spread is the
half-range of the ratios relative to the median. Run-to-run noise is the half-range of the baseline's own
samples (the same code timed repeatedly). A candidate is faster only when the median gain exceeds both a floor
(`min_gain`) and twice the noise, and every single repeat saw it faster: a gain inside the noise is no gain.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

MIN_GAIN = 0.03  # below 3 % a "speedup" is not worth an edit, however quiet the machine
# Below this median time a KernelBench call's do_bench figure is its Python launch path's more than its kernels'
# (H200: a 21 us kernel read 25 us idle and 76-92 us with every core busy; bench/results/h200-launch-probe/).
LAUNCH_PATH_MS = 0.05
LAUNCH_PATH_NOTE = ("both medians are under 50 us and were timed launch by launch (not replayed from a CUDA graph): "
                    "at this size the Python launch path, not only the kernels, sets the time (the figure may "
                    "understate or hide a kernel's gain)")
# The worker's time_ms "method" for a call replayed from a CUDA graph (ascend_runner/worker/harness_backend.py):
# such a time is the GPU's, with no Python launch path in it.
GRAPH_REPLAY = "cuda graph replay"


def timed_by_graph(timing: dict[str, Any]) -> bool:
    """Whether every sample of an interleaved timing was a CUDA graph replay (older records name no method)."""
    samples = list(timing.get("baseline_quantiles") or []) + list(timing.get("candidate_quantiles") or [])
    return bool(samples) and all(isinstance(q, dict) and q.get("method") == GRAPH_REPLAY for q in samples)


def timing_meaningful(backend: str, target: str) -> bool:
    """Whether the backend's timings say anything about the target: never under `interpret`, and for an Ascend
    target only on an Ascend device (`npu`): a GPU's or the CPU's time is no Ascend time."""
    from ....analysis.core.targets import platform_of

    return backend != "interpret" and (platform_of(target) != "ascend" or backend == "npu")


@dataclass(frozen=True)
class TimingJudgement:
    faster: bool
    speedup: float | None
    spread: float | None  # relative half-range of the per-repeat ratios
    low: float | None
    high: float | None
    noise: float | None  # relative half-range of the baseline's own samples
    baseline_ms: float | None
    candidate_ms: float | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _half_range(values: list[float]) -> float:
    mid = statistics.median(values)
    return (max(values) - min(values)) / (2 * mid) if mid > 0 else float("inf")


def judge(baseline_ms: list[float], candidate_ms: list[float], min_gain: float = MIN_GAIN,
          by_graph: bool = False) -> TimingJudgement:
    """`by_graph`: the samples are CUDA graph replays, so a short time is still the kernels' own."""
    pairs = [(b, c) for b, c in zip(baseline_ms, candidate_ms, strict=False) if b > 0 and c > 0]
    if len(pairs) < 2:
        return TimingJudgement(
            False, None, None, None, None, None, None, None, "fewer than 2 interleaved timing samples"
        )
    ratios = [b / c for b, c in pairs]
    speedup = statistics.median(ratios)
    low, high = min(ratios), max(ratios)
    spread = (high - low) / (2 * speedup)
    noise = _half_range([b for b, _ in pairs])
    base, cand = statistics.median(b for b, _ in pairs), statistics.median(c for _, c in pairs)
    threshold = max(min_gain, 2 * noise)
    summary = f"{speedup:.2f}x ({low:.2f}-{high:.2f} over {len(ratios)} interleaved repeats, noise ±{noise:.1%})"
    if max(base, cand) < LAUNCH_PATH_MS and not by_graph:
        summary += f"; {LAUNCH_PATH_NOTE}"
    if speedup < 1 - threshold:
        reason = f"slower: {summary}"
    elif speedup <= 1 + threshold:
        reason = f"no gain: {summary} is inside run-to-run noise (needs > {1 + threshold:.2f}x)"
    elif low <= 1.0:
        reason = f"not consistently faster: {summary}; at least one repeat was not faster"
    else:
        return TimingJudgement(True, speedup, spread, low, high, noise, base, cand, f"faster: {summary}")
    return TimingJudgement(False, speedup, spread, low, high, noise, base, cand, reason)
