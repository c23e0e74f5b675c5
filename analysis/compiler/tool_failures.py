"""Compile failures the tool caused, taken off the user's kernel line and listed in one hint.

A TL300/TL400 finding says "this kernel does not compile". When the compile that failed used values the tool
guessed (a pointer's dtype, a constexpr nobody showed), a stand-in for a module the runner lacks, or the
kernel built from the file's source alone because the worker could not import the user's package, the failure
says nothing about the user's code: it is a level 3-4 analysis that did not happen. Such a failure is not shown
as a finding; one TL002 hint per kernel lists what was not analysed and why (as the hint for withheld findings
does), with how to give the real values. Failures with a cause in the code itself stay findings: an API the
installed compiler lacks (`cause == "missing_api"`, attributed in outcome.py) and errors that no value of any
argument can change (a non-constexpr global read in the kernel).

Pure: reads the findings' attributed cause (`data["cause"]`), their assumed values and source-alone label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..core.findings import Finding, Severity, Span
from ..core.front_rules import CANNOT_SPECIALIZE
from .rests_on import LineInputs

COMPILE_FAILURE_CODES = frozenset({"TL300", "TL400"})
# Causes (outcome.py's `data["cause"]`) that lie in the tool or the runner, never in the user's code.
TOOL_CAUSES = frozenset({"stand_in", "guess", "tool", "package_import", "runner"})
# Causes that are the user's code on this compiler: kept as findings whatever the compile used.
CODE_CAUSES = frozenset({"missing_api", "kernel_code"})
# Errors that hold for every value the arguments may take (the code itself is rejected).
_VALUE_INDEPENDENT = re.compile(
    r"Cannot access global variable|unsupported AST node|is not supported in triton|is not defined|"
    r"non-constexpr global|SyntaxError"
)
# What a kernel built from the source alone lacks when the package could not be imported.
_UNBOUND = re.compile(r"has no attribute|is not defined|NameError|StandIn|stand-in")
# A compiler complaint about types: what a guessed element type can cause (fp32 where int32 is loaded).
_TYPE_ERROR = re.compile(
    r"type|dtype|\b(?:fp|bf|int|uint|i|u)(?:8|16|32|64)\b|cast|pointer|signature|Loop-carried", re.IGNORECASE
)
_ALONE = "[analyzed from the file's source alone"
# ...because the worker stood bare packages in for the file's package (source_module.py's warning), not because
# one of the file's own imports names something that does not exist (a real error of the code).
_PACKAGE_STOOD_IN = re.compile(r"\bpackage [\w.]+ could not be imported here \(")


def tool_cause(f: Finding, line_inputs: LineInputs | None = None) -> str | None:
    """Why a compile-failure finding is the tool's, in a few words; None when it is the code's (kept)."""
    if f.code not in COMPILE_FAILURE_CODES:
        return None
    cause = f.data.get("cause")
    if cause in CODE_CAUSES:
        return None
    excerpt = " ".join(e.excerpt or "" for e in f.evidence) or f.message
    if cause in TOOL_CAUSES:
        if cause == "stand_in":
            return f"a stand-in for `{f.data.get('stand_in')}` (not installed in the runner) reached the kernel"
        return f"the failure is attributed to the {str(cause).replace('_', ' ')}, not the kernel"
    if _ALONE in f.message and _PACKAGE_STOOD_IN.search(f.message) and _UNBOUND.search(excerpt):
        return "the worker could not import the file's package, so a name the kernel takes from it was missing"
    rests = _guesses_rested_on(f, excerpt, line_inputs)
    if rests:
        return f"the compile used assumed {', '.join(rests)}, which no launch, config or default shows"
    return None


def _guesses_rested_on(f: Finding, excerpt: str, line_inputs: LineInputs | None) -> list[str]:
    """The guesses the failure may come from: a guessed value read by the blamed line (through the kernel's
    assignments; every guess for an unplaced error, the `def` line or a helper's line), a guessed type only
    for an error about types. An error no value can change (a non-constexpr global) rests on none."""
    guesses = dict(f.data.get("assumed_values") or {})
    if not guesses or _VALUE_INDEPENDENT.search(excerpt):
        return []
    inputs = line_inputs(f.span.line) if line_inputs is not None else None
    typed_error = bool(_TYPE_ERROR.search(excerpt))
    out = []
    for arg, what in guesses.items():
        read = inputs is None or arg in inputs or re.search(rf"\b{re.escape(arg)}\b", excerpt)
        typed = " as " in str(what)  # "x_ptr as *fp32": a guessed pointer element or scalar type
        if read and (typed_error or not typed):
            out.append(str(what))
    return out


def split_tool_failures(
    findings: Sequence[Finding], line_inputs: LineInputs | None = None
) -> tuple[list[Finding], list[tuple[Finding, str]]]:
    """(the findings to show, the compile failures the tool caused with why); `line_inputs` (rests_on.py) says
    which kernel parameters the blamed line reads."""
    kept: list[Finding] = []
    moved: list[tuple[Finding, str]] = []
    for f in findings:
        why = tool_cause(f, line_inputs)
        if why is None:
            kept.append(f)
        else:
            moved.append((f, why))
    return kept, moved


def not_analysed_hint(
    moved: Sequence[tuple[Finding, str]], kernel: str, span: Span, insert_text: str, insert_line: int
) -> list[Finding]:
    """One TL002 hint: levels 3-4 did not analyse `kernel` (or one of its variants), what failed and why it is
    the tool's, and how to give real values."""
    if not moved:
        return []
    reasons = list(dict.fromkeys(why for _, why in moved))
    first = moved[0][0]
    error = first.message.split(" [", 1)[0]
    give = f' or add "{insert_text}" above the kernel' if insert_text else ""
    message = (
        # "may": a failure at an assumed value can still be the code's (a parameter reassigned in a loop fails at
        # any value); given the real values, it shows as a finding
        f"levels 3-4 did not analyse {kernel}: its compile failed, and the failure may come from the tool, not the "
        f"code ({'; '.join(reasons)}): {error[:240]}. Nothing is reported about this compile until real values "
        f"are given: record real launches (`tritonlens record -- pytest ...`){give}"
    )
    data = {
        "not_analysed": [
            {"code": f.code, "line": f.span.line, "why": why, "message": f.message, **_cause(f)}
            for f, why in moved
        ],
        "insert_text": insert_text,
        "insert_line": insert_line,
    }
    return [CANNOT_SPECIALIZE.finding(message, span, kernel=kernel, severity=Severity.HINT, data=data)]


def _cause(f: Finding) -> dict[str, object]:
    return {k: f.data[k] for k in ("cause", "variant", "assumed_values") if k in f.data}
