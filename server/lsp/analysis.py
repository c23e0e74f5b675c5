"""Level-1 analysis as the language server runs it: triage plus what the server keeps (kernels, hashes).

Runs in worker threads; pure functions of (text, path).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ...analysis.core.findings import Finding
from ..features.workspace_index import IndexedFile, IndexedKernel
from ..ignores.project import file_ignores
from .collector import collector_paused
from .documents import Analysis, kernel_hashes, syntax_error_finding

log = logging.getLogger(__name__)


def _triage(text: str, path: str, between: Callable[[], None] | None = None) -> tuple[list[Finding], object]:
    # Imported on first use: the server starts (and answers) even while analysis modules load.
    from ...analysis.triage import triage

    result = triage(text, path, between=between)
    return list(result.findings), result.module


def analyze_text(text: str, path: str, version: int, between: Callable[[], None] | None = None) -> Analysis:
    """Triage one document version; a crash in a rule is logged and yields no findings, never an exception.
    `between` runs before each function's checks (the workspace index pauses there while the editor waits)."""
    try:
        findings, module = _triage(text, path, between)
    except Exception:
        log.exception("triage failed on %s (version %s)", path, version)
        return Analysis(version=version, findings=(), kernels=(), syntax_error=False)
    syntax_error = getattr(module, "syntax_error", None)
    if syntax_error is not None and not any(f.code == "TL001" for f in findings):
        findings.insert(0, syntax_error_finding(syntax_error))
    kernels = tuple(getattr(module, "kernels", ()) or ())
    return Analysis(
        version=version,
        findings=tuple(findings),
        kernels=kernels,
        syntax_error=syntax_error is not None,
        kernel_hashes=kernel_hashes(text, kernels),
        platforms=_platforms(text, path),
        ignores=file_ignores(text, path),
    )


def _platforms(text: str, path: str) -> tuple[str, ...]:
    from ...analysis.core.platform import decide
    from ..engine.record.launch_store import project_relative

    return decide(text, project_relative(path)).platforms


def analyze_text_quickly(text: str, path: str, version: int) -> Analysis:
    """`analyze_text` with the cyclic GC paused (collector.py: the server keeps it paused until the publish)."""
    wall, cpu = time.perf_counter(), time.thread_time()
    try:
        with collector_paused():
            return analyze_text(text, path, version)
    finally:
        log.debug(
            "triage of %s: %.0f ms wall, %.0f ms cpu",
            path,
            (time.perf_counter() - wall) * 1000,
            (time.thread_time() - cpu) * 1000,
        )


def index_file(text: str, path: str, between: Callable[[], None] | None = None) -> IndexedFile:
    """What the workspace index keeps for a file on disk."""
    analysis = analyze_text(text, path, 0, between)
    kernels = tuple(
        IndexedKernel(k.name, int(k.name_span.line), int(k.span.line), int(k.span.end_line))
        for k in analysis.kernels
    )
    findings = tuple(analysis.ignores.apply(analysis.findings))  # closed files honour ignores as open ones do
    return IndexedFile(path=path, kernels=kernels, findings=findings, platforms=analysis.platforms)
