"""Findings about specialization itself: TL002 (no value for a constexpr, or only assumed ones: says exactly
what to add) and TL003 (pragma or pyproject entries that cannot be used)."""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ..core.findings import Finding, Severity, Span
from ..core.front_rules import BAD_OVERRIDE, CANNOT_SPECIALIZE
from ..kernels import ModuleInfo
from .cases import cases_note
from .choose import as_table, assumed_constexprs
from .guess import typical_value
from .kernels import KernelTable, SpecKernel
from .variant import OPTION_NAMES, Specialization

STR_PLACEHOLDER = "'<str>'"  # a Python string literal, as pragma values are


def _placeholder(info: SpecKernel, name: str) -> str:
    """`<bool>` for flags tested with `if`, `'<str>'` for names compared with a string (`ACTIVATION ==
    "leaky_relu"` in the matmul tutorial), `tl.<dtype>` for a dtype (`x.to(name)`, `dtype=name`), `<int>` otherwise
    (block sizes, counts)."""
    for node in ast.walk(info.node):
        if isinstance(node, ast.Call):
            as_dtype = [k.value for k in node.keywords if k.arg == "dtype"]
            if isinstance(node.func, ast.Attribute) and node.func.attr == "to":
                as_dtype += node.args[:1]
            if any(isinstance(x, ast.Name) and x.id == name for x in as_dtype):
                return "tl.<dtype>"
        if isinstance(node, ast.Compare):
            sides = (node.left, *node.comparators)
            named = any(isinstance(x, ast.Name) and x.id == name for x in sides)
            if named and any(isinstance(x, ast.Constant) and isinstance(x.value, str) for x in sides):
                return STR_PLACEHOLDER
        if (
            isinstance(node, (ast.If, ast.IfExp, ast.While))
            and isinstance(node.test, ast.Name)
            and node.test.id == name
        ):
            return "<bool>"
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.Not)
            and isinstance(node.operand, ast.Name)
        ):
            if node.operand.id == name:
                return "<bool>"
    guess = typical_value(info.node, name)  # what the guess reads of its use: `ACT in (...)`, `tl.zeros(s, ACC)`
    if isinstance(guess, str):
        return "tl.<dtype>" if guess.startswith("tl.") else STR_PLACEHOLDER
    return "<int>"


def _kind_placeholder(value: Any) -> str | None:
    """The placeholder of a guessed value's kind (a float guessed from a `: float` launch asks for a float)."""
    if isinstance(value, bool):
        return "<bool>"
    if isinstance(value, float):
        return "<float>"
    if isinstance(value, str):
        return "tl.<dtype>" if value.startswith("tl.") else STR_PLACEHOLDER
    return None


def pragma_text(
    info: SpecKernel, missing: Sequence[str], pointers: Collection[str] = (), values: Mapping[str, Any] | None = None
) -> str:
    """The pragma that gives `missing`; a pointer among them (`pointers`) takes its element type (`x_ptr=*<dtype>`,
    e.g. `*bf16`), not a value; one with a guessed value (`values`) asks for a value of that kind."""
    values = values or {}
    return "# tritonlens: " + ", ".join(
        f"{m}={'*<dtype>' if m in pointers else _kind_placeholder(values.get(m)) or _placeholder(info, m)}"
        for m in missing
    )


def specialization_findings(
    module: KernelTable | ModuleInfo | str,
    kernel: str,
    specs: Sequence[Specialization],
    overrides: Mapping[str, Any] | None = None,
) -> list[Finding]:
    """TL002 when no variant can be compiled (says exactly what to add), TL003 for unusable overrides."""
    parsed = as_table(module)
    info = parsed.kernels.get(kernel)
    if info is None:
        return []
    findings: list[Finding] = []
    span = info.name_span
    guessed = assumed_constexprs(specs[0]) if specs and specs[0].complete else {}
    if guessed and not any(s.complete and not assumed_constexprs(s) for s in specs):
        text = pragma_text(info, list(guessed), values=guessed)
        notes = specs[0].provenance
        values = ", ".join(f"{k}={v!r}{cases_note(notes.get(k, ''))}" for k, v in guessed.items())
        # a value the code shows candidates for (a conditional, the cases a kernel compares) is still not one value
        shown = any(cases_note(notes.get(k, "")) for k in guessed)
        why = "the code shows no single value for them" if shown else "nothing shows them"
        if info.configs_unreadable and not info.configs:
            # `@autotune(configs=CONFIGS)` with CONFIGS imported or computed: they exist, this file cannot read them
            why = ("the @triton.autotune configs are not written in this file as literal triton.Config lists, so "
                   "their values could not be read")
        findings.append(
            CANNOT_SPECIALIZE.finding(
                (
                    f"levels 3-4 compiled {kernel} with assumed values {values} ({why}); findings "
                    f"that rest on them are not shown, the others say so. Record real launches (`tritonlens record -- pytest ...` or "
                    f'`-- python script.py`), or add "{text}" above the kernel'
                ),
                span,
                kernel=kernel,
                data={
                    "missing": list(guessed),
                    "assumed": guessed,
                    "insert_text": text,
                    "insert_line": info.first_line,
                },
            )
        )
    if specs and not any(s.complete for s in specs):
        missing = list(dict.fromkeys(m for s in specs for m in s.missing))
        text = pragma_text(info, missing)
        names = ", ".join(missing)
        table = f"[tool.tritonlens.kernels.{kernel}]"
        findings.append(
            CANNOT_SPECIALIZE.finding(
                (
                    f"cannot specialize {kernel} for IR analysis: no value for {names}; "
                    f'add "{text}" above the kernel (or set {names} under {table} in pyproject.toml)'
                ),
                span,
                severity=Severity.INFO,
                kernel=kernel,
                data={"missing": missing, "insert_text": text, "insert_line": info.first_line},
            )
        )
    for problem in info.pragma.problems:
        findings.append(
            BAD_OVERRIDE.finding(
                f"tritonlens pragma: {problem.message}",
                Span(problem.line, problem.col, problem.line, problem.end_col),
                kernel=kernel,
            )
        )
    known = set(info.param_names) | set(OPTION_NAMES)
    for entry in info.pragma.entries:
        if entry.name not in known:
            start = entry.col
            findings.append(
                BAD_OVERRIDE.finding(
                    f"tritonlens pragma names {entry.name!r}, which is not a parameter of {kernel}",
                    Span(entry.line, start, entry.line, start + len(entry.name)),
                    kernel=kernel,
                )
            )
    for name in overrides or {}:
        if name not in known:
            findings.append(
                BAD_OVERRIDE.finding(
                    (
                        f"pyproject.toml [tool.tritonlens.kernels.{kernel}] sets {name!r}, "
                        f"which is not a parameter of {kernel}"
                    ),
                    span,
                    kernel=kernel,
                )
            )
    return findings
