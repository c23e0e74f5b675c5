"""Which level 3-4 findings hold only for some launches: those that depend on an argument value nobody showed.

Pure policy over findings and one specialization. A finding depends on a guessed value through the argument it
blames (`data["culprit"]`, or the narrow accesses it blames, `data["narrow_lines"]`) and, as its rule declares
(`Rule.depends_on`), through a narrow access on its own line or through the whole compile's budget. The level
3-4 engine labels such findings with the pragma that gives the real value and keeps them at most INFO.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import rules
from .findings import Finding
from .rules import DependsOn
from .specialization_variant import ASSUMED_DIVISIBLE, Specialization


def unknown_value(spec: Specialization, arg: Any) -> bool:
    """An int argument compiled as a multiple of 16 only because no launch or pragma shows its value."""
    return isinstance(arg, str) and ASSUMED_DIVISIBLE in spec.provenance.get(arg, "")


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
