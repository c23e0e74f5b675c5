"""Compile errors from any stage as findings on the user's source range, with a plain explanation.

TL300 (NVIDIA) / TL400 (Ascend): the compiler's own message is kept verbatim (first lines) and followed by
what it usually means for a kernel author, from a small table of known messages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..core.findings import Evidence, Finding, Level, Severity, Span
from ..core.rules import Rule, register
from ..source.lines import source_lines

NVIDIA_COMPILE_ERROR = register(
    Rule(
        code="TL300",
        name="nvidia-compile-error",
        title="The kernel does not compile for the NVIDIA target",
        level=Level.IR,
        severity=Severity.ERROR,
        platforms=("cuda",),
        rationale=(
            "Upstream Triton stopped while compiling this kernel for the selected GPU target (front end, "
            "TTIR/TTGIR passes, LLVM, or ptxas). The message is the compiler's own; the diagnostic sits on the "
            "source line the compiler blamed. Nothing else about this kernel can be analyzed until it compiles."
        ),
        references=("https://triton-lang.org/main/programming-guide/chapter-1/introduction.html",),
        lowers_to=Severity.WARNING,
        lowering="when another variant of the kernel compiled, or the failing compile used guessed values",
    )
)

ASCEND_COMPILE_ERROR = register(
    Rule(
        code="TL400",
        name="ascend-compile-error",
        title="The kernel does not compile for the Ascend target",
        level=Level.IR,
        severity=Severity.ERROR,
        platforms=("ascend",),
        rationale=(
            "triton-ascend stopped while compiling this kernel (front end, TTIR, or the lowering to the "
            "ttadapter/linalg dialect that the BiSheng compiler consumes). The message is the compiler's own, "
            "placed on the source line it blamed. Constructs accepted by upstream Triton may be unsupported here."
        ),
        references=("https://gitee.com/ascend/triton-ascend",),
        lowers_to=Severity.WARNING,
        lowering="when another variant of the kernel compiled, or the failing compile used guessed values",
    )
)

# (pattern in the compiler's message, what it usually means)
EXPLANATIONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), text)
    for p, text in (
        (
            r"arange's range must be a power of 2|must be a power of 2",
            "block sizes given to tl.arange must be powers of two",
        ),
        (
            r"shape mismatch|incompatible (shapes|dimensions)",
            "the operands' block shapes do not broadcast together",
        ),
        (r"is not defined|NameError", "a name used in the kernel is not defined in the kernel or its module"),
        (r"constexpr", "a value that must be known at compile time (tl.constexpr) is not"),
        (
            r"out of resource|shared memory",
            "the kernel needs more on-chip memory than the target has: reduce block sizes or stages",
        ),
        (r"dot.*(16|shape|K)|K >= 16|min.*dot", "tl.dot needs each tile dimension to be at least 16"),
        (
            r"unsupported|not supported|not implemented",
            "this construct is not supported by the compiler for this target",
        ),
        (
            r"Mismatched type for \w+ between then block",
            "the branches of the `if` give the variable different types (say a loaded int64 and an int32 "
            "argument); the CPU interpreter runs it, a GPU compile does not: cast one branch with .to(...)",
        ),
        (
            r"incompatible types|type mismatch|cannot (cast|convert)",
            "operands have types the operation cannot combine: add an explicit .to(...)",
        ),
        (r"ptxas", "the PTX assembler rejected the generated code (often a resource limit on the target)"),
        (
            r"takes \d+ positional|unexpected keyword|missing \d+ required|signature does not match",
            "the call's arguments do not match the function's parameters",
        ),
        (
            r"\bUB\b|ub overflow|exceeds? .*buffer",
            "the kernel's tiles do not fit the AI core's unified buffer: reduce block sizes",
        ),
    )
)


# An API the kernel uses that the installed compiler does not have: the cause is the runner's version, not the
# kernel's tiles or resources (checked before the table above, whose patterns could match the API's name).
_MISSING_API = (
    re.compile(r"module '(triton[\w.]*)' has no attribute '(\w+)'"),
    re.compile(r"No module named '(triton[\w.]*)'()"),
    re.compile(r"cannot import name '(\w+)' from '(triton[\w.]*)'"),
)


def missing_api(message: str) -> str | None:
    """The dotted name of a triton API the message says is absent (`triton.language.extra.cann`, `tl.x`)."""
    for pattern in _MISSING_API:
        m = pattern.search(message)
        if m:
            first, second = m.group(1), m.group(2)
            if first.startswith("triton"):
                return f"{first}.{second}" if second else first
            return f"{second}.{first}"
    return None


def explain(message: str) -> str:
    for pattern, text in EXPLANATIONS:
        if pattern.search(message):
            return text
    return ""


def _line_span(source_lines: list[str], line: int | None, col: int | None, fallback: Span) -> Span:
    if not line or line < 1 or line > len(source_lines):
        return fallback
    text = source_lines[line - 1]
    start = len(text) - len(text.lstrip())
    if col is not None and start < col < len(text):
        start = col
    end = len(text.rstrip())
    return Span(line, start, line, max(end, start))


def compile_error_findings(
    errors: Sequence[Any], target_platform: str, source: str, kernel: str, fallback: Span, variant: str
) -> list[Finding]:
    """One finding per distinct (stage, line, message); `errors` are StageError-like (stage, message, line, col)."""
    rule = ASCEND_COMPILE_ERROR if target_platform == "ascend" else NVIDIA_COMPILE_ERROR
    lines = source_lines(source)
    out: list[Finding] = []
    seen: set[tuple[str, int | None, str]] = set()
    for err in errors:
        text = (err.message or "").strip()
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "compile failed")
        key = (err.stage, err.line, first)
        if key in seen:
            continue
        seen.add(key)
        api = missing_api(text)
        installed = "triton-ascend" if target_platform == "ascend" else "triton"
        meaning = (
            f"`{api}` is not in the installed {installed}: the kernel is written for a build that has it; this "
            "says nothing about its tiles or resources"
            if api
            else explain(text)
        )
        message = f"{err.stage} failed ({variant}): {first}"
        if meaning:
            message += f" — {meaning}"
        cause = {"cause": "missing_api", "missing_api": api} if api else {}
        out.append(
            rule.finding(
                message,
                _line_span(lines, err.line, err.col, fallback),
                kernel=kernel,
                evidence=(
                    Evidence(kind="ir", summary=f"{err.stage} error", stage=err.stage, excerpt=text[:2000]),
                ),
                data={"stage": err.stage, "variant": variant, **cause},  # outcome.py lowers a runner cause
            )
        )
    return out
