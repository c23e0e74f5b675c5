"""How the findings of a kernel's compiled variants combine, and how guessed values label them.

Pure policy over findings and specializations (no compiler, no runner): the diagnose engine
(server/engine/diagnose) compiles the variants and calls `merge_variant_findings`; the CLI and the language
server show what it returns. A finding that holds only for some values of an argument nobody showed drops to
INFO and names the pragma that gives the real value; a finding from a compile of guessed values names the
guesses and is at most a warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from .findings import Finding, Severity
from .source_alone import source_alone_label
from .specialization_guess import ASSUMED_TYPICAL
from .specialization_infer import DESCRIPTOR_GUESS
from .specialization_retry import RETRIED
from .specialization_variant import ASSUMED_DIVISIBLE, Specialization
from .value_dependency import value_dependency, value_dependent_lines


class CompiledVariant(Protocol):
    """What the policy reads of one compiled specialization (server.engine.diagnose.VariantResult)."""

    specialization: Specialization
    ok: bool
    findings: list[Finding]
    metadata: dict[str, Any]


def merge_variant_findings(variants: Sequence[CompiledVariant]) -> list[Finding]:
    """The first variant's findings, plus those only other variants show (tagged with the variant).

    Each finding records the specialization it was compiled with; one that names an argument whose
    value or type was guessed says so, since a real launch may specialize differently. A finding caused
    by an argument whose value is not visible (`data["culprit"]`) holds only for some launches: it drops
    to INFO and says which pragma gives the real value."""
    out: list[Finding] = []
    seen: set[tuple[str, int, int]] = set()
    for n, variant in enumerate(v for v in variants if v.ok):
        spec = variant.specialization
        guessed_lines = value_dependent_lines(variant.findings, spec)
        for f in variant.findings:
            key = (f.code, f.span.line, f.span.col)
            if key in seen:
                continue
            seen.add(key)
            message = f.message
            severity = f.severity
            data = {**f.data, "variant": spec.label, "specialization": spec.to_dict()}
            depends = value_dependency(f, spec, guessed_lines)
            if depends:
                arg, advice = depends
                message += f" [{advice}]"
                severity = max(severity, Severity.INFO)
                data["depends_on_unknown_value"] = arg
            assumed = {
                a: why for a, why in assumptions_in(f.message, spec).items() if not depends or a != depends[0]
            }
            if assumed:
                message += " [assumed: " + "; ".join(f"{a} {why}" for a, why in assumed.items()) + "]"
                data["assumptions"] = assumed
            alone = source_alone_label(variant.metadata)
            if alone:  # the kernel was built from the file's source alone: an assumption, never an error
                message += alone
                severity = max(severity, Severity.WARNING)
                data["source_alone"] = variant.metadata["source_alone"]
            guesses = {a: g for a, g in variant_guesses(spec).items() if a not in assumed}
            if guesses:
                # a compile of guessed values: the finding names them and never passes for an error
                message += guess_label(guesses)
                severity = max(severity, Severity.WARNING)
                data["assumed_values"] = guesses
            for failed in variant.metadata.get("failed_guesses") or []:
                message += f" [an earlier guess ({failed['variant']}) did not compile: {failed['error']}]"
            if n > 0:
                message += f" [{spec.label}]"
            out.append(replace(f, message=message, severity=severity, data=data))
    return out


_GUESSES = (
    (ASSUMED_DIVISIBLE, "has no known value: compiled as a multiple of 16 (what most launches get)"),
    ("element type assumed", "is taken as fp32 (no launch shows its dtype)"),
    ("assumed i32", "is taken as i32 (nothing shows its type)"),
    ("assumed contiguous", "is taken as 1 (tensor assumed contiguous)"),
)


def variant_guesses(spec: Specialization) -> dict[str, str]:
    """Argument -> what was guessed, for every value or type of `spec` that no launch, pragma or source showed
    (typical constexpr values, pointer dtypes, scalar types); ASSUMED_DIVISIBLE ints are labeled per finding."""
    out: dict[str, str] = {}
    for arg, why in spec.provenance.items():
        if why == ASSUMED_TYPICAL:
            out[arg] = f"{arg}={spec.constants.get(arg)!r}"
        elif RETRIED in why or "element type assumed" in why or why.startswith("assumed i32"):
            out[arg] = f"{arg} as {spec.signature.get(arg)}"  # a retry's guess when the first did not compile
        elif DESCRIPTOR_GUESS in why:
            out[arg] = f"{arg} as {spec.signature.get(arg)}"
    return out


def guess_label(guesses: Mapping[str, str]) -> str:
    return (
        " [compiled with assumed "
        + ", ".join(guesses.values())
        + " (nothing shows them); record real launches with `tritonlens record -- <test or script>`]"
    )


def assumptions_in(message: str, spec: Specialization) -> dict[str, str]:
    """Arguments named in `message` (as `name`) whose specialization was a guess, with what was guessed."""
    out: dict[str, str] = {}
    for arg, provenance in spec.provenance.items():
        if f"`{arg}`" not in message:
            continue
        why = next((text for marker, text in _GUESSES if marker in provenance), None)
        if why and RETRIED in provenance:
            why = f"is taken as {spec.signature.get(arg)} (the first guess did not compile)"
        if why:
            out[arg] = why
    return out
