"""Sizes of the fuzz suites: a CI profile (the default, well under 3 minutes on 2 cores) and a long one run by
hand with TRITONLENS_FUZZ=long (10,000 cases per test; docs/hardening.md has the last numbers).
TRITONLENS_FUZZ_EXAMPLES=N sizes every fuzz test to N cases (a run fitted to the time at hand);
TRITONLENS_FUZZ_REPORT=FILE merges each suite's counts into that JSON file."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

LONG = os.environ.get("TRITONLENS_FUZZ", "").lower() == "long"
HANG_S = 10.0  # any single step slower than this counts as a hang

settings.register_profile(
    "tritonlens-ci", deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), print_blob=True
)
settings.register_profile(
    "tritonlens-long", deadline=None, suppress_health_check=list(HealthCheck), print_blob=True
)


def examples(ci_examples: int, long_examples: int = 10_000) -> int:
    return int(os.environ.get("TRITONLENS_FUZZ_EXAMPLES") or (long_examples if LONG else ci_examples))


def fuzz_settings(ci_examples: int, long_examples: int = 10_000) -> settings:
    """Settings for one fuzz test: `ci_examples` cases by default, `long_examples` in the long profile."""
    base = settings.get_profile("tritonlens-long" if LONG else "tritonlens-ci")
    return settings(base, max_examples=examples(ci_examples, long_examples))


class Tally:
    """What one suite did: cases run, cases failed, the slowest step (a hang is a step over HANG_S)."""

    def __init__(self, suite: str) -> None:
        self.suite = suite
        self.counts: Counter[str] = Counter()
        self.slowest_s = 0.0
        self.started = time.monotonic()

    def start(self) -> None:
        """The suite's first case runs now (modules are imported long before, at collection)."""
        self.started = time.monotonic()

    def step(self, seconds: float) -> None:
        self.slowest_s = max(self.slowest_s, seconds)

    def save(self, **extra: Any) -> dict[str, Any]:
        """The suite's numbers, merged into TRITONLENS_FUZZ_REPORT's JSON if set; returned either way."""
        data = {
            "profile": "long" if LONG else "ci",
            "counts": dict(sorted(self.counts.items())),
            "slowest_step_s": round(self.slowest_s, 3),
            "hang_limit_s": HANG_S,
            "wall_s": round(time.monotonic() - self.started, 1),
            **extra,
        }
        out = os.environ.get("TRITONLENS_FUZZ_REPORT")
        if out:
            path = Path(out)
            merged = json.loads(path.read_text()) if path.exists() else {}
            merged[self.suite] = data
            path.write_text(json.dumps(merged, indent=1) + "\n")
        return data
