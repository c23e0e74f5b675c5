"""How the findings of a kernel's compiled variants combine, and the assumptions each one rests on.

Pure policy over findings and specializations (no compiler, no runner): the diagnose engine
(server/engine/diagnose) compiles the variants and calls `merge_variant_findings`; the CLI and the language
server show what it returns. Three kinds of assumption are named in a finding:
- a value nobody showed (value dependency): a finding holds only for some launches when it depends on an argument
  value no launch or pragma shows, through the argument it blames (`data["culprit"]`, or the narrow accesses it
  blames, `data["narrow_lines"]`) and, as its rule declares (`Rule.depends_on`), through a narrow access on its
  own line or through the whole compile's budget; it drops to INFO and names the pragma that gives the value;
- a guessed value or type (no launch, pragma, config or default shows it): a level 3-4 finding whose cause rests on
  one is not shown (`Withheld`, summed up by one TL002 hint that names the values to record or pass,
  `withheld_hint`); one whose line depends on none of them holds for every value they may take and says so: a
  guess never raises a warning;
- a compile built from the file's source alone (the runner's worker, `ascend_runner/worker/source_alone.py`,
  falls back to the kernel's own statements when the file cannot be imported as a module of its package): the
  finding names it and is at most a warning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..core import rules
from ..core.findings import Finding, Level, Severity, Span
from ..core.front_rules import CANNOT_SPECIALIZE
from ..core.rules import DependsOn
from ..specialize.cases import cases_note
from ..specialize.guess import ASSUMED_TYPICAL
from ..specialize.infer import DESCRIPTOR_GUESS
from ..specialize.launch import BRANCH_GUESS
from ..specialize.retry import RETRIED
from ..specialize.strides import ASSUMED_UNIT_STRIDE
from ..specialize.variant import ASSUMED_DIVISIBLE, Specialization
from .column_walk import as_column_walk, column_walk_advice, outer_stride
from .rests_on import LineInputs


class CompiledVariant(Protocol):
    """What the policy reads of one compiled specialization (server.engine.diagnose.VariantResult)."""

    specialization: Specialization
    ok: bool
    findings: list[Finding]
    metadata: dict[str, Any]


def merge_variant_findings(
    variants: Sequence[CompiledVariant],
    line_inputs: LineInputs | None = None,
    withheld: list[Withheld] | None = None,
) -> list[Finding]:
    """The first variant's findings, plus those only other variants show (tagged with the variant).

    Each finding records the specialization it was compiled with. A level 3-4 finding whose cause rests on a
    guessed value (a constexpr nobody showed, a guessed pointer or scalar type: `variant_guesses`) is not shown:
    it goes to `withheld` with the values it rests on (`guesses_rested_on`, through `line_inputs`, the kernel
    parameters each source line depends on: rests_on.line_inputs). One that rests on none of the guesses of its
    compile holds whatever they are: it says so and keeps its severity. A
    finding caused by an argument whose value is not visible (`data["culprit"]`) holds only for some launches: it
    drops to INFO and says which pragma gives the real value."""
    out: list[Finding] = []
    seen: set[tuple[str, int, int]] = set()
    for n, variant in enumerate(v for v in variants if v.ok):
        spec = variant.specialization
        guessed_lines = value_dependent_lines(variant.findings, spec)
        for f in variant.findings:
            f = as_column_walk(f, spec)  # an outer dimension's stride: no launch makes it 1
            key = (f.code, f.span.line, f.span.col)
            if key in seen:
                continue
            seen.add(key)
            all_guesses = variant_guesses(spec)
            typed = {a for a in all_guesses if not spec.provenance.get(a, "").startswith(ASSUMED_TYPICAL)}
            rests = guesses_rested_on(f, all_guesses, line_inputs, typed) if f.level >= Level.IR else {}
            if rests:  # its cause is a guess: no real launch is known to have it
                if withheld is not None:
                    withheld.append(Withheld(f, spec.label, rests))
                continue
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
            guesses = {a: g for a, g in all_guesses.items() if a not in assumed}
            if guesses:
                # a compile of guessed values: the finding names them and a guess never raises a warning
                if f.level >= Level.IR:  # it rests on none of them: it holds whatever they are, as shown
                    message += independent_label(guesses)
                else:
                    message += guess_label(guesses)
                    severity = max(severity, Severity.INFO)
                data["assumed_values"] = guesses
            for failed in variant.metadata.get("failed_guesses") or []:
                message += f" [an earlier guess ({failed['variant']}) did not compile: {failed['error']}]"
            values_from = getattr(spec, "values_from", "")
            if values_from:  # the launch values are a wrapper's in another file: say which
                message += f" [values from the launch at {values_from}]"
                data["values_from"] = values_from
            if n > 0 and spec.label != f"launch at {values_from}":
                message += f" [{spec.label}]"
            out.append(replace(f, message=message, severity=severity, data=data))
    return out


@dataclass(frozen=True)
class Withheld:
    """A finding not shown because its cause rests on guessed values: argument -> what was guessed."""

    finding: Finding
    variant: str
    rests_on: dict[str, str]


def guesses_rested_on(
    f: Finding, guesses: Mapping[str, str], line_inputs: LineInputs | None, typed: set[str] | frozenset[str] = frozenset()
) -> dict[str, str]:
    """The guesses of `guesses` (argument -> what was guessed) that finding `f` depends on: the arguments its
    line reads (through the kernel's assignments), the argument it blames, the arguments its message names; every
    guess for a finding about the whole compile or on a line outside the kernel's body (or with no line_inputs).
    A guessed *type* (`typed`: a pointer's element type, a scalar's int width) counts only for a finding that names
    that argument and is not blamed on another (`data["culprit"]`: a stride of 3 makes scalar loads whatever the
    element type; an int64 index or an integer compare is the same for every float the pointer may hold)."""
    if not guesses:
        return {}
    rule = rules.get(f.code)
    inputs = line_inputs(f.span.line) if line_inputs is not None else None
    if inputs is None or (rule is not None and rule.depends_on is DependsOn.COMPILE):
        return dict(guesses)
    culprit = f.data.get("culprit")
    blamed = {a for a in (culprit, *(f.data.get("runtime_multipliers") or ())) if a in guesses}
    if rule is not None and rule.depends_on is DependsOn.LOADS and f.data.get("rests_on_loads", True):
        for line in f.data.get("load_lines") or ():
            read = line_inputs(line) if line_inputs is not None else None
            if read is None:  # a load in a helper: every value of the compile may reach it
                return dict(guesses)
            blamed |= {a for a in guesses if a in read}  # a guessed element type counts: bytes per thread
    named = {a for a in guesses if f"`{a}`" in f.message}

    def rests(a: str) -> bool:
        if a in blamed:
            return True
        if a in typed:  # a type guess: only a finding about that argument's own data (it names it)
            return culprit is None and a in named
        return a in inputs or a in named

    return {a: g for a, g in guesses.items() if rests(a)}


def withheld_hint(
    withheld: Sequence[Withheld], kernel: str, span: Span, insert_text: str, insert_line: int
) -> list[Finding]:
    """One TL002 hint for the level 3-4 findings withheld because they rest on guessed values: which findings,
    which values, and how to give the real ones (record a launch, or the pragma)."""
    if not withheld:
        return []
    rests: dict[str, str] = {}
    for w in withheld:
        rests.update(w.rests_on)
    where: dict[str, list[int]] = {}
    for w in withheld:
        where.setdefault(w.finding.code, []).append(w.finding.span.line)
    listed = ", ".join(f"{code} line{'s' if len(ln) > 1 else ''} {', '.join(map(str, sorted(set(ln))))}"
                       for code, ln in sorted(where.items()))
    message = (
        f"{len(withheld)} level 3-4 finding(s) of {kernel} not shown ({listed}): they rest on assumed "
        f"{', '.join(rests.values())}, which no launch, config or default shows, so no real launch is known to "
        f'have them. Record real launches (`tritonlens record -- pytest ...`) or add "{insert_text}" above the '
        "kernel to see them"
    )
    data = {
        "withheld": [{"code": w.finding.code, "line": w.finding.span.line, "variant": w.variant,
                      "rests_on": sorted(w.rests_on), "message": w.finding.message} for w in withheld],
        "missing": list(rests),
        "insert_text": insert_text,
        "insert_line": insert_line,
    }
    return [CANNOT_SPECIALIZE.finding(message, span, kernel=kernel, severity=Severity.HINT, data=data)]


def independent_label(guesses: Mapping[str, str]) -> str:
    return (
        " [holds for every value of " + ", ".join(guesses) + ": its line does not depend on them (compiled with "
        "assumed " + ", ".join(guesses.values()) + ", nothing shows them; the sizes and types it quotes are the "
        "assumed ones)]"
    )


_GUESSES = (
    (ASSUMED_UNIT_STRIDE, "is taken as 1 (the innermost stride of a contiguous tensor, as real launches pass it)"),
    (ASSUMED_DIVISIBLE, "has no known value: compiled as a multiple of 16 (what most launches get)"),
    ("element type assumed", "is taken as fp32 (no launch shows its dtype)"),
    ("assumed i32", "is taken as i32 (nothing shows its type)"),
    ("assumed contiguous", "is taken as 1 (tensor assumed contiguous)"),
    (BRANCH_GUESS, "is taken from one branch of an `if` whose test nothing shows"),
)


# What infer.py read a guessed element type from ("values loaded from it meet `//` at line 12").
_INFERRED_USE = re.compile(r"inferred: (values loaded[^();]*? at line \d+(?: are used as offsets)?)")


def variant_guesses(spec: Specialization) -> dict[str, str]:
    """Argument -> what was guessed, for every value or type of `spec` that no launch, pragma or source showed
    (typical constexpr values, pointer dtypes, scalar types); ASSUMED_DIVISIBLE ints are labeled per finding."""
    out: dict[str, str] = {}
    for arg, why in spec.provenance.items():
        if why.startswith(ASSUMED_TYPICAL):  # a selector's guess says which cases it chose from
            out[arg] = f"{arg}={spec.constants.get(arg)!r}{cases_note(why)}"
        elif RETRIED in why or "element type assumed" in why or why.startswith("assumed i32"):
            out[arg] = f"{arg} as {spec.signature.get(arg)}"  # a retry's guess when the first did not compile
            inferred = _INFERRED_USE.search(why)
            if inferred and RETRIED not in why:  # the type came from the kernel's use of the values: say which
                out[arg] += f" ({inferred.group(1)})"
        elif DESCRIPTOR_GUESS in why:
            out[arg] = f"{arg} as {spec.signature.get(arg)}"
        elif BRANCH_GUESS in why:  # a value from one branch of an undecided `if`
            shown = spec.constants[arg] if arg in spec.constants else spec.signature.get(arg)
            out[arg] = f"{arg} as {shown!r} (one branch of an `if` nothing decides)"
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


# -- values nobody showed ----------------------------------------------------------------------------


def unknown_value(spec: Specialization, arg: Any) -> bool:
    """An int argument compiled as a multiple of 16, or as the unit stride, only because no launch or pragma shows
    its value."""
    why = spec.provenance.get(arg, "") if isinstance(arg, str) else ""
    return ASSUMED_DIVISIBLE in why or ASSUMED_UNIT_STRIDE in why


def value_dependent_lines(findings: Sequence[Finding], spec: Specialization) -> dict[int, str]:
    """Source line -> argument, for access findings caused by an argument whose value is not visible."""
    return {f.span.line: f.data["culprit"] for f in findings if unknown_value(spec, f.data.get("culprit"))}


def value_dependency(
    f: Finding, spec: Specialization, guessed_lines: Mapping[int, str]
) -> tuple[str, str] | None:
    """(argument, advice) when the finding holds only for some values of an argument nobody showed."""
    arg = f.data.get("culprit")
    pragma = "add `# tritonlens: {}=<value>` above the kernel to analyze a real launch"
    if not unknown_value(spec, arg):
        # consequences of those accesses inherit the dependency: a pipelining finding blamed on the narrow
        # loads, a layout conversion on the same line, the register/shared-memory budget of the compile
        narrow = f.data.get("narrow_lines") or []
        arg = next((guessed_lines[ln] for ln in narrow if ln in guessed_lines), None)
        rule = rules.get(f.code)  # what a rule's findings depend on is declared with the rule
        scope = rule.depends_on if rule is not None else DependsOn.CULPRIT
        if arg is None and scope is DependsOn.LINE:
            arg = guessed_lines.get(f.span.line)
        if arg is None and scope is DependsOn.COMPILE and guessed_lines:
            arg = next(iter(guessed_lines.values()))
            return arg, (
                f"measured on a compile where `{arg}` has no visible value and its accesses are narrow; a "
                f"real launch may need fewer resources: {pragma.format(arg)}"
            )
        if arg is None:
            return None
    pragma = pragma.format(arg)
    if outer_stride(f, spec) == arg:  # never 1: no hedge on a unit stride
        return arg, column_walk_advice(arg)
    if f.data.get("cause") == "stride":
        # The compiler blames the stride of the dimension it took as fastest; the launch's unit stride may
        # be another one (a block pointer with order=(0, 1)): name every unseen stride of the address.
        strides = [a for a in f.data.get("runtime_multipliers") or [arg] if unknown_value(spec, a)]
        if arg not in strides:
            strides.insert(0, arg)
        if len(strides) > 1:
            names = ", ".join(f"`{a}`" for a in strides)
            values = ", ".join(f"{a}=<value>" for a in strides)
            return arg, (
                f"{names} have no visible value: when the contiguous dimension's stride is 1 at launch the "
                f"JIT specializes it to the constant 1 and this is not an issue; add `# tritonlens: {values}` "
                "above the kernel to analyze a real launch"
            )
    if f.data.get("cause") == "stride" or f.data.get("narrow_lines"):
        return arg, (
            f"`{arg}` has no visible value: when it is 1 at launch (a contiguous dimension) the JIT "
            f"specializes it to the constant 1 and this is not an issue; {pragma}"
        )
    return arg, f"`{arg}` has no visible value, so this holds only for some launches; {pragma}"


# -- built from the source alone ---------------------------------------------------------------------


def source_alone_label(metadata: Mapping[str, Any] | None) -> str:
    """ " [analyzed from the file's source alone: ...]" for a compile built that way, else ""."""
    info = (metadata or {}).get("source_alone")
    if not isinstance(info, Mapping):
        return ""
    parts = [
        f"its package could not be imported here ({info.get('reason') or 'a top-level statement failed'})"
    ]
    dropped = [str(d) for d in info.get("dropped_decorators") or []]
    if dropped:
        parts.append(
            "decorators not applied: " + ", ".join(dropped[:4]) + (" ..." if len(dropped) > 4 else "")
        )
    return " [analyzed from the file's source alone: " + "; ".join(parts) + "]"
