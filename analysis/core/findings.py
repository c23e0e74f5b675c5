"""The one data model every level reports in: a finding tied to a source range, with its evidence chain.

Lines are 1-based and columns 0-based character offsets (not UTF-8 bytes), as a person counts them; the
language server converts to LSP positions at its boundary.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import IntEnum
from typing import Any


class Severity(IntEnum):
    """Same numbering as LSP's DiagnosticSeverity."""

    ERROR = 1
    WARNING = 2
    INFO = 3
    HINT = 4

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r}; use error, warning, info or hint") from None


class Level(IntEnum):
    """The escalation levels of the method."""

    TRIAGE = 1
    PROFILE = 2
    IR = 3
    COMPILER = 4
    REWRITE = 5


PLATFORMS = ("cuda", "ascend")


@dataclass(frozen=True)
class Span:
    line: int
    col: int
    end_line: int
    end_col: int

    def contains(self, line: int, col: int) -> bool:
        after_start = (line, col) >= (self.line, self.col)
        before_end = (line, col) <= (self.end_line, self.end_col)
        return after_start and before_end


@dataclass(frozen=True)
class TextEdit:
    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A mechanical rewrite that is safe to apply as-is."""

    title: str
    edits: tuple[TextEdit, ...]


@dataclass(frozen=True)
class Evidence:
    """One link of the evidence chain: what was seen, where (AST, an IR stage, a profile) and on which lines."""

    kind: str  # "ast" | "ir" | "profile" | "resource" | "verify"
    summary: str
    stage: str | None = None  # e.g. "ttgir", "sass", "ttadapter", "ncu"
    excerpt: str = ""
    ir_lines: tuple[int, ...] = ()


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    span: Span
    severity: Severity
    level: Level = Level.TRIAGE
    kernel: str | None = None
    platforms: tuple[str, ...] = PLATFORMS
    evidence: tuple[Evidence, ...] = ()
    fix: Fix | None = None
    estimated_gain: str | None = None  # e.g. "up to 2x fewer bytes" ; a range, never a promise
    data: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["severity"] = self.severity.name.lower()
        out["level"] = int(self.level)
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Finding:
        fix = raw.get("fix")
        return cls(
            code=raw["code"],
            message=raw["message"],
            span=Span(**raw["span"]),
            severity=Severity.parse(raw["severity"]) if isinstance(raw["severity"], str) else Severity(raw["severity"]),
            level=Level(raw.get("level", 1)),
            kernel=raw.get("kernel"),
            platforms=tuple(raw.get("platforms", PLATFORMS)),
            evidence=tuple(Evidence(**{**e, "ir_lines": tuple(e.get("ir_lines", ()))}) for e in raw.get("evidence", ())),
            fix=None
            if fix is None
            else Fix(fix["title"], tuple(TextEdit(Span(**e["span"]), e["new_text"]) for e in fix["edits"])),
            estimated_gain=raw.get("estimated_gain"),
            data=dict(raw.get("data", {})),
        )
