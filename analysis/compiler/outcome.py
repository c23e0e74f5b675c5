"""Findings about a compile that did not go through: the kernel's compile errors on the lines the compiler
blamed (TL3xx/TL4xx front-end errors), imports that failed in the runner (TL004) and an analysis that stopped
for another reason (TL005). Pure: reads the variants' errors and the runner's module warnings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..core.findings import Finding, Severity, Span
from ..core.front_rules import IMPORT_FAILED, NOT_ANALYZED
from ..source.lines import source_lines
from .errors import compile_error_findings
from .failing_statement import guessed_reads
from .variants import guess_label, source_alone_label, variant_guesses


def not_the_kernels_fault(error: Any) -> bool:
    """A worker crash, or a kernel the worker could not load because a module-level statement needs a GPU
    or a device (e.g. `configs=get_autotune_config()` asking the driver for its target): an error of the
    analysis, never a compile-error finding on the user's kernel."""
    return error.stage == "worker" or str(error.message).startswith("no @triton.jit function named")


def worker_error(variants: Sequence[Any]) -> str | None:
    """What stopped the runner (not the kernel's compile error) in the failed variants, one sentence each."""
    messages = [e.message for v in variants if not v.ok for e in v.errors if not_the_kernels_fault(e)]
    return "; ".join(dict.fromkeys(messages)) or None


def failure_findings(
    variants: Sequence[Any], platform: str, source: str, kernel: str, fallback: Span
) -> list[Finding]:
    """Compile errors on the lines the compiler blamed: errors when no variant compiles, warnings for an
    autotune config / launch variant that fails while another compiles. Worker failures are no finding."""
    failed = [v for v in variants if not v.ok]
    if not failed:
        return []
    all_failed = len(failed) == len(variants)
    out: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    for variant in failed:
        errors = [e for e in variant.errors if not not_the_kernels_fault(e)]
        label = variant.specialization.label
        guesses = variant_guesses(variant.specialization)
        for f in compile_error_findings(errors, platform, source, kernel, fallback, label):
            key = (f.message.split(": ", 1)[-1], f.span.line)
            if key in seen:
                continue
            seen.add(key)
            if not all_failed:
                f = replace(f, severity=Severity.WARNING)
            alone = source_alone_label(variant.metadata)
            if alone:
                f = replace(f, message=f.message + alone, severity=max(f.severity, Severity.WARNING))
            if guesses and RESOURCE_FAILURE.search(_error_text(f)):
                f = _resource_at_guesses(f, guesses)  # the guess is the first suspect, not the user's tiles
            elif guesses and guessed_reads(source, kernel, f.span.line, guesses) == set():
                # the blamed statement reads none of the guesses: the kernel fails whatever they are
                f = replace(f, message=f.message + f" (the failing statement reads none of the assumed "
                            f"{', '.join(guesses.values())})", data={**f.data, "assumed_values": guesses,
                                                                        "reads_assumed": False})
            elif guesses:  # the failure may be the guess's, not the kernel's: say so, never a warning
                f = replace(
                    f,
                    message=f.message + guess_label(guesses),
                    severity=max(f.severity, Severity.INFO),
                    data={**f.data, "assumed_values": guesses},
                )
            values_from = getattr(variant.specialization, "values_from", "")
            if values_from:  # the variant's name says where; the data says it for clients
                f = replace(f, data={**f.data, "values_from": values_from})
            f = _tool_cause(f, variant.metadata or {}, source)
            out.append(f)
        if all_failed:
            break  # one variant's errors say it; the others usually repeat them
    return out


# A compile that ran out of on-chip memory: Triton's OutOfResources (shared memory, registers), ptxas's
# resource errors, Ascend's UB overflow. At guessed values it says nothing about the user's block sizes.
RESOURCE_FAILURE = re.compile(
    r"out of resource|ub overflow|uses too much (?:shared|local) data|too many resources|"
    r"register(?:s)? .*exceed|exceeds? .*(?:shared memory|unified buffer)",
    re.IGNORECASE,
)
# Advice that presumes the block sizes are the user's: Triton's own sentence and errors.py's explanation.
_SIZE_ADVICE = re.compile(r"\s*Reducing block sizes or `num_stages` may help\.|\s+— [^—]*reduce block sizes[^—]*$")


def _error_text(f: Finding) -> str:
    return " ".join(e.excerpt or "" for e in f.evidence) or f.message


def _resource_at_guesses(f: Finding, guesses: dict[str, str]) -> Finding:
    """A resource failure of a compile that used guessed values: the guesses first (constexpr values before
    types), no advice to shrink blocks the user may never have chosen, at most INFO, attributed to the guess."""
    ordered = sorted(guesses.values(), key=lambda g: " as " in g)
    failure = _SIZE_ADVICE.sub("", f.message)
    message = (
        f"at the guessed {', '.join(ordered)} (no launch, config or default shows them), {failure} — the tiles "
        "of these assumed values do not fit the target; this says nothing about the block sizes of a real "
        "launch. Record real launches (`tritonlens record -- <test or script>`) or give the values with a "
        "`# tritonlens:` pragma"
    )
    data = {**f.data, "assumed_values": guesses, "cause": "guess", "resource": True}
    return replace(f, message=message, severity=max(f.severity, Severity.INFO), data=data)


_UNDEFINED = re.compile(r"NameError\('(\w+) is not defined'\)|name '(\w+)' is not defined")


def _tool_cause(f: Finding, metadata: dict[str, Any], source: str = "") -> Finding:
    """A failure whose cause is the runner, not the kernel (an API the installed compiler lacks, a name bound by a
    triton import that failed in the runner, or a stand-in named in the error): at most INFO, that cause first."""
    if f.data.get("cause") == "missing_api":
        return replace(f, severity=Severity.INFO)
    text = " ".join(e.excerpt or "" for e in f.evidence)
    lines = source_lines(source)
    failed = [
        w for w in metadata.get("module_warnings") or []
        if w.get("import") and not w.get("stand_in") and 0 < int(w.get("line") or 0) <= len(lines)
    ]  # fmt: skip
    triton_imports = [w for w in failed if "triton" in lines[int(w["line"]) - 1]]
    m = _UNDEFINED.search(text)
    name = (m.group(1) or m.group(2)) if m else None
    for w in triton_imports:
        line = lines[int(w["line"]) - 1]
        if name and re.search(rf"\b{name}\b", line) or (not name and "unsupported AST node" in text):
            what = f"`{name}`" if name else "this construct"
            return replace(
                f,
                severity=Severity.INFO,
                message=f"{what} needs `{line.strip()}` (line {w['line']}), an import the installed compiler "
                f"cannot satisfy ({w.get('message', '')}): not a fault of the kernel's tiles or resources. {f.message}",
                data={**f.data, "cause": "missing_api", "missing_api": line.strip()},
            )
    for warning in metadata.get("module_warnings") or []:
        stand_in = warning.get("stand_in")
        if stand_in and _stand_in_named(stand_in, text):
            return replace(
                f,
                severity=Severity.INFO,
                message=f"caused by the stand-in for `{stand_in}` (not installed in the runner): {f.message}",
                data={**f.data, "cause": "stand_in", "stand_in": stand_in},
            )
    return f


def _stand_in_named(stand_in: str, text: str) -> bool:
    """Does a compile error's text name the module a stand-in took the place of (its last dotted part)?"""
    return str(stand_in).rsplit(".", 1)[-1] in text


def _names_stand_in(variants: Sequence[Any], warning: dict[str, Any]) -> bool:
    return any(_stand_in_named(warning["stand_in"], e.message or "") for v in variants for e in v.errors)


def load_findings(
    variants: Sequence[Any], source: str, kernel: str, stopped: str | None, span: Span | None
) -> list[Finding]:
    """TL004 on each import line that failed in the runner; TL005 on the kernel when the analysis stopped
    (`stopped`: why) for a reason that is not the kernel's compile error. Never an empty result after an error."""
    out: list[Finding] = []
    lines = source_lines(source)
    compiled = any(v.ok for v in variants)
    seen: set[int] = set()
    for variant in variants:
        meta = variant.metadata or {}
        for warning in meta.get("module_warnings") or meta.get("skipped_statements") or []:
            line = int(warning.get("line") or 1)
            if not warning.get("import") or line in seen:
                continue
            seen.add(line)
            text = lines[line - 1] if 0 < line <= len(lines) else ""
            col = len(text) - len(text.lstrip())
            message = str(warning.get("message", "")).replace("top-level statement skipped: ", "")
            where = variant.compiler or "runner"
            headline = f"this import failed in the runner environment ({where}): {message}"
            if warning.get("stand_in"):
                headline = (
                    f"`{warning['stand_in']}` is not installed in the runner environment ({where}): a stand-in "
                    "took its place so the file could load"
                )
            # a stand-in the compile error does not name did not stop it (the wrapper's module, not the kernel's)
            unblamed = bool(warning.get("stand_in")) and not compiled and not _names_stand_in(variants, warning)
            consequence = (
                "the kernel compiled without it"
                if compiled
                else "the kernel did not compile, and its error does not name this module"
                if unblamed
                else "the kernel could not be compiled without it"
            )
            out.append(
                IMPORT_FAILED.finding(
                    f"{headline}; {consequence}",
                    Span(line, col, line, len(text)),
                    severity=Severity.INFO if compiled or unblamed else Severity.WARNING,
                    kernel=kernel,
                    data={"exception": message},
                )
            )
    if stopped and not compiled:
        out.append(
            NOT_ANALYZED.finding(
                f"{kernel} was not analyzed at levels 3-4: {stopped}", span or Span(1, 0, 1, 0), kernel=kernel
            )
        )
    return out
