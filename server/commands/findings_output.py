"""How `check` (both levels) validates rule codes and prints findings: text lines or JSON, exit status."""

from __future__ import annotations

import json
import sys

from ...analysis.core.findings import Finding, Severity
from ...analysis.core.settings import Settings


def check_codes(settings: Settings) -> None:
    """Raise ValueError for a --select/--ignore entry that matches no rule: a typo would silently report nothing."""
    from ...analysis.core.rules import all_rules

    codes = [r.code for r in all_rules()]
    for option, prefixes in (("--select", settings.select), ("--ignore", settings.ignore)):
        unknown = [p for p in prefixes if not any(code.startswith(p) for code in codes)]
        if unknown:
            raise ValueError(
                f"{option} {', '.join(unknown)} matches no rule code (`tritonlens rules` lists them)"
            )


def format_text(path: str, finding: Finding) -> str:
    line = f"{path}:{finding.span.line}:{finding.span.col + 1}: {finding.code} {finding.message}"
    if finding.severity >= Severity.INFO:
        line += f" [{finding.severity.name.lower()}]"  # warnings and errors stay unmarked, as compilers print them
    return line


def at_least(findings: list[Finding], minimum: Severity) -> list[Finding]:
    """Findings at or above `minimum` (Severity numbers as LSP: ERROR=1 is the most severe)."""
    return [f for f in findings if f.severity <= minimum]


def print_findings(
    fmt: str,
    results: dict[str, list[Finding]],
    minimum: Severity = Severity.HINT,
    fail_on: Severity = Severity.WARNING,
) -> int:
    """Print per-file findings at or above `minimum` in the chosen format; exit status 1 if a printed finding is
    at or above `fail_on` (a linter's convention: info and hints alone do not fail a build by default)."""
    before = sum(len(fs) for fs in results.values())
    results = {path: at_least(findings, minimum) for path, findings in results.items()}
    total = sum(len(fs) for fs in results.values())
    if fmt == "json":
        payload = [{"path": p, **f.to_dict()} for p, fs in results.items() for f in fs]
        print(json.dumps(payload, indent=2))
    else:
        for path, findings in results.items():
            for f in findings:
                print(format_text(path, f))
        hidden = f", {before - total} below {minimum.name.lower()} not shown" if before > total else ""
        print(f"{total} finding(s) in {len(results)} file(s){hidden}", file=sys.stderr)
    return 1 if any(at_least(fs, fail_on) for fs in results.values()) else 0
