"""User settings that shape analysis: which rules, which severities, which target platform.

Shared by the CLI (flags), the language server (workspace/configuration) and pyproject's [tool.tritonlens].
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .findings import Finding, Severity
from .targets import PLATFORM_SETTINGS


@dataclass(frozen=True)
class Settings:
    target: str = "auto"  # "auto" | "cuda" | "ascend" | "both": which platforms' rules apply
    file_platforms: tuple[str, ...] | None = None  # set by for_file() when target is "auto"
    select: tuple[str, ...] = ()  # code prefixes; empty means all
    ignore: tuple[str, ...] = ()  # code prefixes
    severity: dict[str, Severity] = field(default_factory=dict)  # code -> override

    def __post_init__(self) -> None:
        if self.target not in PLATFORM_SETTINGS:
            raise ValueError(f"unknown target {self.target!r}; use one of {', '.join(PLATFORM_SETTINGS)}")

    @property
    def platforms(self) -> tuple[str, ...]:
        if self.target == "auto" and self.file_platforms:
            return self.file_platforms
        return PLATFORM_SETTINGS[self.target]

    def for_file(self, source: str, path: str | None = None) -> Settings:
        """These settings with `auto` decided for one file (its imports, devices and folders)."""
        if self.target != "auto":
            return self
        from .platform import decide

        return replace(self, file_platforms=decide(source, path).platforms)

    def enabled(self, code: str) -> bool:
        if self.select and not any(code.startswith(p) for p in self.select):
            return False
        return not any(code.startswith(p) for p in self.ignore)

    def apply(self, findings: list[Finding]) -> list[Finding]:
        """Filter by selection and platform, then apply severity overrides; keeps order."""
        out: list[Finding] = []
        for f in findings:
            if not self.enabled(f.code):
                continue
            if f.platforms and not set(f.platforms) & set(self.platforms):
                continue
            if f.code in self.severity:
                f = replace(f, severity=self.severity[f.code])
            out.append(f)
        return out

    @classmethod
    def from_mapping(cls, raw: dict[str, Any] | None) -> Settings:
        """Build from a JSON-like mapping (LSP configuration or pyproject table); bad values raise ValueError."""
        raw = raw or {}

        def codes(key: str) -> tuple[str, ...]:
            value = raw.get(key) or ()
            if isinstance(value, str):
                value = [v for v in value.split(",") if v.strip()]
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{key} must be a list of rule codes")
            return tuple(v.strip().upper() for v in value)

        severity_raw = raw.get("severity") or {}
        if not isinstance(severity_raw, dict):
            raise ValueError("severity must map rule codes to error|warning|info|hint")
        return cls(
            target=str(raw.get("target", "auto")),
            select=codes("select"),
            ignore=codes("ignore"),
            severity={str(k).upper(): Severity.parse(str(v)) for k, v in severity_raw.items()},
        )
