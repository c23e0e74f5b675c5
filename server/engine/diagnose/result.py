"""What one level 3-4 analysis returns: each compiled variant, and the kernel's merged result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ....analysis.core.findings import Finding, Span
from ....analysis.specialize.variant import Specialization
from ....ascend_runner.protocol import StageError


@dataclass
class VariantResult:
    """One specialization compiled (or not) and analyzed."""

    specialization: Specialization
    ok: bool
    stages: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, Any] = field(default_factory=dict)
    errors: list[StageError] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    line_maps: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    compiler: str = ""
    cached: bool = False
    elapsed_s: float = 0.0
    analysis_error: str | None = (
        None  # the analyzer failed on this output (a tritonlens bug, reported plainly)
    )


@dataclass
class KernelAnalysis:
    kernel: str
    path: str
    target: str
    span: Span | None = None  # the kernel's name in its `def`
    findings: list[Finding] = field(default_factory=list)
    specializations: list[Specialization] = field(default_factory=list)  # every variant considered
    variants: list[VariantResult] = field(default_factory=list)  # the ones sent to the compiler
    error: str | None = None  # why nothing was analyzed (no runner env, unknown kernel, ...)
    runner_unavailable: bool = False
    cancelled: bool = False
    code_hash: str = ""  # digest of the kernel's and its helpers' text: results stay valid while it holds
    elapsed_s: float = 0.0

    @property
    def primary(self) -> VariantResult | None:
        """The first variant that compiled: its stages and summary feed the code lens and the IR view."""
        return next((v for v in self.variants if v.ok), None)

    @property
    def stages(self) -> dict[str, str]:
        return self.primary.stages if self.primary else {}

    @property
    def line_maps(self) -> dict[str, list[tuple[int, int]]]:
        return self.primary.line_maps if self.primary else {}

    @property
    def summary(self) -> dict[str, Any]:
        primary = self.primary
        out: dict[str, Any] = dict(primary.summary) if primary else {}
        out.update(
            {
                "target": self.target,
                "variants_considered": len(self.specializations),
                "variants_compiled": sum(1 for v in self.variants if v.ok),
            }
        )
        if primary:
            out.update(
                {
                    "variant": primary.specialization.label,
                    "compiler": primary.compiler,
                    "compile_s": round(primary.elapsed_s, 3),
                    "cached": primary.cached,
                }
            )
        if self.error:
            out["error"] = self.error
        return out

    def to_dict(self, with_stages: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kernel": self.kernel,
            "path": self.path,
            "target": self.target,
            "span": None if self.span is None else vars(self.span),
            "findings": [f.to_dict() for f in self.findings],
            "specializations": [s.to_dict() for s in self.specializations],
            "variants": [
                {
                    "label": v.specialization.label,
                    "ok": v.ok,
                    "errors": [vars(e) for e in v.errors],
                    "summary": v.summary,
                    "cached": v.cached,
                    "elapsed_s": v.elapsed_s,
                    "analysis_error": v.analysis_error,
                }
                for v in self.variants
            ],
            "summary": self.summary,
            "error": self.error,
            "runner_unavailable": self.runner_unavailable,
            "cancelled": self.cancelled,
            "code_hash": self.code_hash,
        }
        if with_stages:
            out["stages"] = self.stages
            out["line_maps"] = {k: [list(p) for p in v] for k, v in self.line_maps.items()}
        return out
