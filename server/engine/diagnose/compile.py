"""One variant through the runner and the analyzers: the compile call, setup advice when the runner has no
environment for the target, and the compiler-grounded analysis of its output (cached for warm re-analyses)."""

from __future__ import annotations

import hashlib
import inspect
import threading
from collections.abc import Mapping
from typing import Any

from ....analysis.bounded.byte_lru import MIB, ByteLRU, approx_bytes
from ....analysis.findings import Finding
from ....analysis.kernels.dependencies import dependency_sources
from ....ascend_runner.protocol import CompileRequest
from .result import VariantResult


def dependency_sources_of(source: str, kernel: str) -> dict[str, str] | None:
    try:
        return dependency_sources(source, kernel)
    except Exception:  # a cache-key helper must never stop analysis
        return None


def code_hash(sources: Mapping[str, str] | None, source: str) -> str:
    blob = repr(sorted(sources.items())) if sources else source
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _accepts(func: Any, name: str) -> bool:
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def runner_unavailable(exc: BaseException) -> bool:
    try:
        from ....ascend_runner.client import EnvironmentUnavailable
    except ImportError:
        return False
    return isinstance(exc, EnvironmentUnavailable)


def environment_problem(runner: Any, target: str) -> str | None:
    """Setup advice when the runner has no environment for `target` (local runners only; remote ones say so
    in their compile result)."""
    find = getattr(runner, "environment", None)
    if find is None:
        return None
    try:
        from ....ascend_runner.client import environment_for_target

        find(environment_for_target(target))
    except Exception as exc:
        if runner_unavailable(exc):
            return str(exc)
    return None


def compile_variant(
    runner: Any,
    req: CompileRequest,
    sources: Mapping[str, str] | None,
    cancel: threading.Event | None,
    timeout_s: float | None,
) -> Any:
    kwargs: dict[str, Any] = {"cancel": cancel, "timeout_s": timeout_s}
    if sources is not None and _accepts(runner.compile, "function_sources"):
        kwargs["function_sources"] = dict(sources)
    return runner.compile(req, **kwargs)


_Report = tuple[list[Finding], dict[str, Any], dict[str, list[tuple[int, int]]]]


class _ReportCache:
    """Analyses of cached compile results, so a warm re-analysis skips re-parsing every stage.

    Keyed by everything the report depends on: the whole buffer (analyzers read launch sites too), path,
    target, the specialization and the compiler. Thread-safe, bounded (LRU) by entries and by bytes held."""

    def __init__(self, size: int = 64, budget: int = 32 * MIB) -> None:
        self.size = size
        self._items: ByteLRU[str, _Report] = ByteLRU(budget, lambda key, value: approx_bytes(value), size)

    @staticmethod
    def key(variant: VariantResult, target: str, source: str, kernel: str, path: str) -> str:
        parts = (source, path, kernel, target, repr(variant.specialization.key()), variant.compiler)
        # The compile cache key also covers imported helper files the buffer text does not show.
        parts += (str(variant.metadata.get("cache_key", "")),)
        return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()

    def get(self, key: str) -> _Report | None:
        hit: _Report | None = self._items.get(key)
        return hit

    def put(self, key: str, value: _Report) -> None:
        self._items.put(key, value)


_REPORTS = _ReportCache()


def analyze_output(variant: VariantResult, target: str, source: str, kernel: str, path: str) -> None:
    key = _ReportCache.key(variant, target, source, kernel, path) if variant.cached else ""
    hit = _REPORTS.get(key) if key else None
    if hit is not None:
        findings, summary, line_maps = hit
        variant.findings, variant.summary, variant.line_maps = list(findings), dict(summary), dict(line_maps)
        return
    try:
        from ....analysis.compiler import analyze
    except ImportError as exc:
        variant.analysis_error = f"compiler-grounded analysis is not installed ({exc})"
        return
    try:
        report = analyze(variant.stages, variant.metadata, variant.resources, target, source, kernel, path)
    except Exception as exc:  # an analyzer bug must not hide the compile result
        variant.analysis_error = f"analysis of the {target} output failed: {type(exc).__name__}: {exc}"
        return
    variant.findings = list(getattr(report, "findings", []) or [])
    variant.summary = dict(getattr(report, "summary", {}) or {})
    maps = getattr(report, "line_maps", {}) or {}
    variant.line_maps = {stage: [(int(a), int(b)) for a, b in pairs] for stage, pairs in maps.items()}
    _REPORTS.put(
        _ReportCache.key(variant, target, source, kernel, path),
        (list(variant.findings), dict(variant.summary), dict(variant.line_maps)),
    )
