"""Compile results survive a window reload (issue 23): when a document is first analysed, the kernels whose
levels 3-4 analysis is in the on-disk compile cache (keyed by their text) get it back at once, without a compile;
kernels not in the cache wait for the usual trigger (a save, or Analyze kernel)."""

from __future__ import annotations

import inspect
from typing import Any


class CacheOnlyRunner:
    """The runner, with compile answered from its cache only; `missed` tells whether any compile was not cached."""

    def __init__(self, runner: Any) -> None:
        self._runner = runner
        self.missed = False

    def compile(self, req: Any, **kwargs: Any) -> Any:
        result = self._runner.compile(req, cache_only=True, **kwargs)
        if any(getattr(e, "stage", "") == "cache" for e in getattr(result, "errors", [])):
            self.missed = True
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runner, name)


def supports_cache_only(runner: Any) -> bool:
    """Local runners can answer from the cache alone; a remote runner would compile (no restore there)."""
    try:
        return "cache_only" in inspect.signature(runner.compile).parameters
    except (TypeError, ValueError, AttributeError):
        return False
