"""What levels 3-4 produce for one compiled kernel: findings, per-line attribution, summary, notes.

Its own module so the dispatcher (compiler.py) and each platform's analysis import it without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.findings import Finding
from .attribution import LineStats


@dataclass
class CompilerReport:
    findings: list[Finding] = field(default_factory=list)  # level IR or COMPILER, spans in the user's file
    lines: dict[int, LineStats] = field(default_factory=dict)  # source line -> what it became, by class
    summary: dict[str, Any] = field(
        default_factory=dict
    )  # registers, spills, shared, num_warps, ... (code lens)
    line_maps: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # stage -> (source, ir) lines
    notes: list[str] = field(default_factory=list)  # what could not be analyzed and why

    def to_dict(self) -> dict[str, Any]:
        return {
            "findings": [f.to_dict() for f in self.findings],
            "lines": {str(k): v.to_dict() for k, v in self.lines.items()},
            "summary": dict(self.summary),
            "line_maps": {k: [list(p) for p in v] for k, v in self.line_maps.items()},
            "notes": list(self.notes),
        }
