"""Rules of the front end: the file could not be read as Python, or a kernel could not be specialized."""

from tritonlens.analysis.findings import Level, Severity
from tritonlens.analysis.rules import Rule, register

SYNTAX_ERROR = register(
    Rule(
        code="TL001",
        name="syntax-error",
        title="The file does not parse as Python",
        level=Level.TRIAGE,
        severity=Severity.ERROR,
        platforms=("cuda", "ascend"),
        rationale=(
            "The Python parser stopped here, so no kernel in this file can be analyzed until it parses. "
            "Findings from the last version that parsed are not shown, to avoid pointing at moved lines."
        ),
    )
)
