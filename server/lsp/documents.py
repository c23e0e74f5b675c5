"""Per-document analysis state of the language server, tagged with the document version it came from.

Triage (level 1) findings are replaced on every analyzed version. Findings from later levels (profile, IR,
compiler) are stored per kernel with a hash of that kernel's source: they survive edits elsewhere in the file
(shifted with the kernel) and are dropped once the kernel's own text changes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ...analysis.core.findings import Evidence, Finding, Fix, Level, Span, TextEdit
from ...analysis.core.front_rules import SYNTAX_ERROR
from ...analysis.ignores import Ignores
from ...analysis.source.lines import source_lines


class KernelLike(Protocol):
    """What the server needs from `analysis.kernels` kernel records."""

    name: str
    span: Span
    name_span: Span


@dataclass(frozen=True)
class Analysis:
    """One triage run: the version it was computed from and its unfiltered findings."""

    version: int
    findings: tuple[Finding, ...]
    kernels: tuple[Any, ...]  # KernelLike records from ModuleInfo
    syntax_error: bool
    kernel_hashes: dict[str, str] = field(default_factory=dict)
    platforms: tuple[str, ...] = ("cuda", "ascend")  # what the file is written for (analysis.platform)
    ignores: Ignores = field(default_factory=Ignores)  # its ignore comments and the pyproject's ignores for it
    _by_name: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def kernel_named(self, name: str) -> Any:
        """The kernel record called `name` (the first one), or None: O(1) after the first call."""
        if not self._by_name and self.kernels:
            by_name: dict[str, Any] = {}
            for kernel in self.kernels:
                by_name.setdefault(kernel.name, kernel)
            self._by_name.update(by_name)
        return self._by_name.get(name)


@dataclass
class KernelLayer:
    """Findings of one level for one kernel, valid while the kernel's source hash is unchanged."""

    level: Level
    kernel: str
    source_hash: str
    anchor_line: int  # kernel's first line when computed; findings shift with it
    version: int
    findings: tuple[Finding, ...]


@dataclass
class DocState:
    uri: str
    path: str
    version: int
    text: str = ""
    analysis: Analysis | None = None
    layers: dict[tuple[str, Level], KernelLayer] = field(default_factory=dict)
    generation: int = 0  # bumps whenever `findings()` may answer differently (caches compare it)

    @property
    def current(self) -> bool:
        """True when the stored analysis matches the latest known version."""
        return self.analysis is not None and self.analysis.version == self.version

    def set_analysis(self, analysis: Analysis, text: str) -> bool:
        """Store a triage result if it is for the latest version; stale results are dropped (returns False)."""
        if analysis.version != self.version:
            return False
        self.text = text
        self.analysis = analysis
        self.generation += 1
        if not analysis.syntax_error:
            # A kernel whose text changed (or vanished) invalidates what later levels said about it.
            self.layers = {
                key: layer
                for key, layer in self.layers.items()
                if analysis.kernel_hashes.get(layer.kernel) == layer.source_hash
            }
        return True

    def add_layer(self, version: int, kernel: str, level: Level, findings: list[Finding]) -> bool:
        """Attach later-level findings for `kernel` computed from `version`; refused if the doc moved on."""
        if self.analysis is None or version != self.version or self.analysis.version != version:
            return False
        source_hash = self.analysis.kernel_hashes.get(kernel)
        start = kernel_start(self.analysis, kernel)
        if source_hash is None or start is None:
            return False
        self.layers[(kernel, level)] = KernelLayer(
            level, kernel, source_hash, start, version, tuple(findings)
        )
        self.generation += 1
        return True

    def findings(self) -> list[Finding]:
        """Unfiltered findings of every level for the current analysis, later-level spans moved with kernels."""
        if self.analysis is None:
            return []
        out = list(self.analysis.findings)
        if self.analysis.syntax_error:
            return out
        for layer in self.layers.values():
            start = kernel_start(self.analysis, layer.kernel)
            if start is None:
                continue
            delta = start - layer.anchor_line
            out.extend(shift_finding(f, delta) for f in layer.findings)
        return out


def kernel_start(analysis: Analysis, name: str) -> int | None:
    for k in analysis.kernels:
        if k.name == name:
            return int(k.span.line)
    return None


def kernel_hashes(text: str, kernels: tuple[Any, ...]) -> dict[str, str]:
    """Hash of each kernel's own lines, so moving a kernel does not count as changing it."""
    lines = source_lines(text)
    out: dict[str, str] = {}
    for k in kernels:
        body = "\n".join(lines[k.span.line - 1 : k.span.end_line])
        out[k.name] = hashlib.sha1(body.encode("utf-8", "surrogatepass")).hexdigest()
    return out


def _shift_span(span: Span, delta: int) -> Span:
    return Span(span.line + delta, span.col, span.end_line + delta, span.end_col)


def shift_finding(f: Finding, delta: int) -> Finding:
    if delta == 0:
        return f
    fix = None
    if f.fix is not None:
        fix = Fix(f.fix.title, tuple(TextEdit(_shift_span(e.span, delta), e.new_text) for e in f.fix.edits))
    return replace(f, span=_shift_span(f.span, delta), fix=fix)


def finding_key(f: Finding) -> str:
    """Identifies a finding across requests (code actions resolve against the doc's current findings)."""
    digest = hashlib.sha1(f.message.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    s = f.span
    return f"{f.code}:{s.line}:{s.col}:{s.end_line}:{s.end_col}:{digest}"


def syntax_error_finding(error: Any) -> Finding:
    """TL001 at the parser's error position; accepts a SyntaxError or an object with line/col attributes."""
    line = getattr(error, "line", None) or getattr(error, "lineno", None) or 1
    col = getattr(error, "col", None)
    if col is None:
        offset = getattr(error, "offset", None) or 1
        col = max(int(offset) - 1, 0)
    message = getattr(error, "message", None) or getattr(error, "msg", None) or str(error)
    line = int(line) if isinstance(line, int) else 1
    return SYNTAX_ERROR.finding(
        f"syntax error: {message}",
        Span(line, int(col), line, int(col) + 1),
        evidence=(Evidence(kind="ast", summary="the Python parser stopped here"),),
    )
