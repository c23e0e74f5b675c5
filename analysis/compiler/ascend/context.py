"""What every TL4xx check reads: the analysis `AscendContext` (the parsed ttadapter, the kernel's AST and source
lines, the device, metadata, resources, grid and the compiler's UB verdict) with the finding and evidence builders
the checks share."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from ...core.findings import Evidence, Finding, Severity, Span
from ...core.rules import Rule
from ..ir.ttadapter_model import AdapterModule
from .devices import AscendDevice

STAGE = "ttadapter"
VECTOR_ALIGN_BYTES = 32
CUBE_ALIGN_BYTES = 512


@dataclass
class AscendContext:
    module: AdapterModule
    source_lines: list[str]
    tree: ast.Module | None
    kernel: str
    path: str
    device: AscendDevice | None
    metadata: dict[str, Any]
    resources: dict[str, Any]
    constants: dict[str, Any] = field(default_factory=dict)
    ttir_i64_lines: set[int] | None = None  # source lines whose ttir already computes on i64 tiles
    grid: tuple[int, ...] | None = None  # the launch grid (metadata, or a literal launch site)
    launch_line: int | None = None  # the launch site's line, where a grid finding goes
    ub_decided: bool = False  # bishengir's PlanMemory layout or overflow error decided the UB question

    def kernel_def(self) -> ast.FunctionDef | None:
        if self.tree is None:
            return None
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef) and node.name == self.kernel:
                return node
        return None

    def kernel_line(self) -> int:
        node = self.kernel_def()
        return node.lineno if node is not None else 1

    def span(self, line: int) -> Span:
        text = self.source_lines[line - 1] if 0 < line <= len(self.source_lines) else ""
        start = len(text) - len(text.lstrip())
        return Span(line, start, line, len(text.rstrip()))

    def snippet(self, line: int) -> str:
        text = self.source_lines[line - 1].strip() if 0 < line <= len(self.source_lines) else ""
        return text if len(text) <= 80 else text[:77] + "..."

    def finding(
        self,
        rule: Rule,
        line: int,
        message: str,
        evidence: list[Evidence],
        gain: str | None,
        data: dict[str, Any],
        severity: Severity | None = None,
    ) -> Finding:
        return rule.finding(
            message,
            self.span(line),
            kernel=self.kernel,
            severity=severity,
            platforms=("ascend",),
            evidence=evidence,
            gain=gain,
            data=data,
        )

    def ir_evidence(self, summary: str, ir_lines: list[int], limit: int = 8) -> Evidence:
        return Evidence(
            kind="ir",
            summary=summary,
            stage=STAGE,
            excerpt=self.module.excerpt(ir_lines, limit),
            ir_lines=tuple(sorted(set(ir_lines))),
        )


def kib(n: int) -> str:
    return f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} B"
