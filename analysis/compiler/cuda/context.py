"""What every NVIDIA check reads and writes: the analysis `Context` (stages, attribution, limits, resources, the
findings so far) and the lookups several checks share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...core.findings import Evidence, Finding, Span
from ...core.rules import Rule
from ..attribution import LineStats, ParsedStages, stage_lines
from ..ir.mlir import MlirModule, MlirOp
from ..ir.mlir_loc import UserFiles
from .dataflow import Dataflow
from .limits import SmLimits

DOT_OPS = ("tt.dot", "ttng.warp_group_dot", "ttng.tc_gen5_mma", "tt.dot_scaled")


@dataclass
class Context:
    stages: dict[str, str]
    parsed: ParsedStages
    is_user: UserFiles
    lines: dict[int, LineStats]
    source_lines: list[str]
    kernel: str
    target: str
    limits: SmLimits | None
    num_warps: int
    num_stages: int
    resources: dict[str, Any]
    findings: list[Finding] = field(default_factory=list)
    _flows: dict[int, Dataflow] = field(default_factory=dict)

    def flow(self, module: MlirModule) -> Dataflow:
        """Def-use index of a module, built once per analysis."""
        got = self._flows.get(id(module))
        if got is None:
            func = self.kernel if self.kernel in module.funcs else None
            got = self._flows[id(module)] = Dataflow(module, func)
        return got

    def span(self, line: int) -> Span:
        text = self.source_lines[line - 1] if 0 < line <= len(self.source_lines) else ""
        start = len(text) - len(text.lstrip())
        return Span(line, start, line, len(text.rstrip()))

    def source_text(self, line: int) -> str:
        return self.source_lines[line - 1].strip() if 0 < line <= len(self.source_lines) else ""

    def excerpt(self, stage: str, ir_lines: list[int]) -> Evidence:
        text = self.stages.get(stage, "")
        return Evidence(
            "ir",
            f"{stage} at this line",
            stage,
            stage_lines(text, ir_lines),
            tuple(sorted(set(ir_lines))[:6]),
        )

    def add(
        self,
        rule: Rule,
        line: int,
        message: str,
        evidence: list[Evidence],
        gain: str | None,
        rewrite: str,
        **data: Any,
    ) -> None:
        self.findings.append(
            rule.finding(
                message,
                self.span(line),
                kernel=self.kernel,
                platforms=("cuda",),
                evidence=evidence,
                gain=gain,
                data={"rewrite": rewrite, "target": self.target, **data},
            )
        )

    def line_of(self, op: MlirOp) -> int | None:
        frame = op.loc.user_frame(self.is_user)
        return frame.line if frame else None


def as_int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def ptx_lines(ctx: Context, line: int, prefixes: tuple[str, ...]) -> list[int]:
    """PTX lines of instructions with one of the opcode prefixes, attributed to `line`."""
    ptx = ctx.parsed.ptx
    if ptx is None:
        return []
    out = []
    for ins in ptx.instrs:
        if ins.opcode.startswith(prefixes):
            frame = ins.loc.user_frame(ctx.is_user)
            if frame and frame.line == line:
                out.append(ins.ir_line)
    return out
