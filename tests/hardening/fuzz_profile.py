"""Sizes of the fuzz suites: a CI profile (the default, well under 3 minutes on 2 cores) and a long one run by
hand with TRITONLENS_FUZZ=long: 10,000 sources; 500 LSP sequences, which write over 10,000 frames (see
docs/hardening.md for the last numbers)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

LONG = os.environ.get("TRITONLENS_FUZZ", "").lower() == "long"
HANG_S = 10.0  # any single step slower than this counts as a hang

settings.register_profile(
    "tritonlens-ci", deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), print_blob=True
)
settings.register_profile(
    "tritonlens-long", deadline=None, suppress_health_check=list(HealthCheck), print_blob=True
)


def fuzz_settings(ci_examples: int, long_examples: int = 10_000) -> settings:
    """Settings for one fuzz test: `ci_examples` cases by default, `long_examples` in the long profile."""
    base = settings.get_profile("tritonlens-long" if LONG else "tritonlens-ci")
    return settings(base, max_examples=long_examples if LONG else ci_examples)
