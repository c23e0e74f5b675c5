"""Helpers for the level-1 triage tests: run triage strictly and locate expected ranges by snippet.

A module of its own (not conftest) so `from triage_helpers import ...` works when pytest collects several
test folders, each with its own conftest, in one run."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tritonlens.analysis.core.findings import Finding, Span
from tritonlens.analysis.triage import triage

DATA = Path(__file__).parent / "data"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(source: str) -> list[Finding]:
    """Findings of a dedented snippet; a failing check raises instead of being logged."""
    return triage(textwrap.dedent(source), "<test>", strict=True).findings


def of(source: str, code: str) -> list[Finding]:
    return [f for f in run(source) if f.code == code]


def locate(source: str, snippet: str, occurrence: int = 1) -> Span:
    """Span of the `occurrence`-th appearance of `snippet` in the dedented source (single line)."""
    text = textwrap.dedent(source)
    seen = 0
    for number, line in enumerate(text.splitlines(), start=1):
        start = line.find(snippet)
        while start != -1:
            seen += 1
            if seen == occurrence:
                return Span(number, start, number, start + len(snippet))
            start = line.find(snippet, start + 1)
    raise AssertionError(f"{snippet!r} (occurrence {occurrence}) not in source")
