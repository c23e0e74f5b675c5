"""A quick timing of config search's compiled moves before the gate sees any of them.

The gate verifies one candidate at a time: a reference at every test shape, the candidate in a fresh confined
process, five interleaved timings (11-47 s each on the device host with several tasks sharing it). Config search
compiles a dozen or more moves per round, and the task's budget ran out while the gate was still walking them in
a fixed order. Like Triton's autotuner (and Helion's), every move is first run once at the timing shape and timed
(one `run` job each, in the runner's persistent workers: no sandbox start, no reference, no correctness), and only
the moves that ran more than 2% faster than the current text reach the gate, fastest first. The gate still
decides: a screened time is never shown as a result.

Only a text the evidence profiled is screened (a move runs the current text's own code with other launch values):
an LLM's text is never profiled (evidence.collect), so a move of it never runs outside the gate's sandbox. Nor is a
text verified by replay (the loop profiles KernelBench modules only) or one on a backend whose timings mean
nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ....ascend_runner.protocol import HarnessSpec, RunRequest, TimingSpec

if TYPE_CHECKING:  # the runner client is imported where a runner is made, not by the engine
    from ....ascend_runner.client import Runner

# a move screened within 2% of the current text, or slower, stays out: the gate needs > 1.03x, and on blind set 7
# (H100) the screen and the gate agreed within 0.9% on average for the moves the gate accepted
KEEP_ABOVE = 1.02
WARMUP_MS, REP_MS = 10.0, 40.0  # one short series per text: enough to rank moves, not to claim a speedup


@dataclass(frozen=True)
class Screened:
    ms: float | None  # the model's median time at the timing shape, or None when it did not run
    error: str = ""

    def ratio(self, current_ms: float) -> float | None:
        return current_ms / self.ms if self.ms else None


def screenable(profile: dict[str, Any] | None) -> bool:
    """Whether moves of the profiled text may be screened: the evidence profiled it (a KernelBench module, not an
    LLM's text) on a device whose timings mean something."""
    return bool(profile and profile.get("timing_meaningful") and profile.get("ok", True))


@dataclass
class ConfigScreen:
    runner: Runner
    backend: str = "cuda"
    workers: int = 2  # texts run at once (their timings queue on the device lock)
    timeout_s: float = 120.0
    cancel: threading.Event | None = None
    device_wait_s: float = 0.0  # waits for other jobs' timings, summed over every screen (the loop excuses them)

    def time(self, path: str, sources: Sequence[str]) -> list[Screened]:
        """Each text's ModelNew timed at the module's own sizes (the timing shape), one job per text."""
        with ThreadPoolExecutor(max_workers=max(1, self.workers)) as pool:
            return list(pool.map(lambda s: self._one(path, s), sources))

    def _one(self, path: str, source: str) -> Screened:
        if self.cancel is not None and self.cancel.is_set():
            return Screened(None, "cancelled")
        request = RunRequest(
            harness=HarnessSpec(mode="kernelbench", path=path, source=source), time_launches=False,
            time_reference=False, max_launches=8, timing=TimingSpec(warmup_ms=WARMUP_MS, rep_ms=REP_MS),
            backend=self.backend,
        )
        try:
            reply = self.runner.run(self.backend, request, cancel=self.cancel, timeout_s=self.timeout_s)
        except Exception as exc:  # a runner that broke: this move is not screened, the others still are
            return Screened(None, f"{type(exc).__name__}: {exc}")
        result = reply.get("result") or {}
        wait = result.get("device_wait_s")
        if isinstance(wait, (int, float)) and not isinstance(wait, bool) and wait > 0:
            self.device_wait_s += float(wait)
        if not reply.get("ok") or not result.get("ok", False):
            error = reply.get("error") or {}
            said = error.get("message") if isinstance(error, dict) else error
            return Screened(None, str(said or "; ".join(result.get("errors") or []) or "did not run")[:300])
        ms = _median(result.get("timings", {}).get("model_ms"))
        return Screened(ms, "" if ms else "no timing came back")


def _median(timing: Any) -> float | None:
    if isinstance(timing, dict):  # Backend.time_ms's percentiles
        timing = timing.get("median")
    return float(timing) if isinstance(timing, (int, float)) and not isinstance(timing, bool) and timing > 0 else None
