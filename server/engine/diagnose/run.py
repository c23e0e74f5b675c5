"""Levels 3-4 for one kernel or a whole document: specialize -> compile via a runner -> analyze.

Orchestration only: the specializations come from analysis.specialization, the findings of a compile from
analysis.compiler, how variants combine and what depends on guessed values from analysis.variant_findings,
failed compiles from analysis.compile_outcome. Never raises for user errors (bad source, missing values,
compile errors, a missing runner environment): those come back as findings or as `KernelAnalysis.error`.
Thread-safe (no shared mutable state but a bounded, locked report cache); honours a `threading.Event` to cancel.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ....analysis.compiler.outcome import failure_findings, load_findings, worker_error
from ....analysis.compiler.rests_on import line_inputs
from ....analysis.compiler.tool_failures import not_analysed_hint, split_tool_failures
from ....analysis.compiler.variants import Withheld, merge_variant_findings, variant_guesses, withheld_hint
from ....analysis.core.findings import Finding, Span
from ....analysis.core.targets import compile_target_problem, platform_of
from ....analysis.specialize.callees import imported_helpers
from ....analysis.specialize.choose import specializations
from ....analysis.specialize.findings import pragma_text, specialization_findings
from ....analysis.specialize.kernels import KernelTable, kernel_table
from ....analysis.specialize.retry import MAX_RETRIES, retry_guess
from ....analysis.specialize.variant import Specialization
from ....analysis.specialize.workspace_launches import ForeignLaunch
from ....ascend_runner.protocol import CompileRequest
from .compile import (
    analyze_output,
    code_hash,
    compile_variant,
    dependency_sources_of,
    environment_problem,
    runner_unavailable,
)
from .inputs import (
    callers_of,
    kernel_overrides,
    launchable_kernels,
    module_reader,
    same_file,
    stored_launches,
)
from .result import KernelAnalysis, VariantResult
from .workspace_index import launches_elsewhere

if TYPE_CHECKING:  # the runner client is imported where a runner is made, not by the engine
    from ....ascend_runner.client import Runner

MAX_COMPILED_VARIANTS = 4


def analyze_kernel(
    source: str,
    path: str,
    kernel: str,
    target: str,
    runner: Runner,
    *,
    overrides: Mapping[str, Any] | None = None,
    recorded: Sequence[Mapping[str, Any]] | None = None,
    cancel: threading.Event | None = None,
    max_variants: int = MAX_COMPILED_VARIANTS,
    timeout_s: float | None = None,
    parsed: KernelTable | None = None,
    foreign: Sequence[ForeignLaunch] | None = None,
) -> KernelAnalysis:
    """Specialize `kernel`, compile up to `max_variants` variants for `target`, analyze the output.

    `overrides` is `[tool.tritonlens]` (or its `kernels` table); `recorded` are launches a runner recorded;
    `foreign` the kernel's launches in other files of the workspace (read from the workspace index when None).
    """
    started = time.perf_counter()
    result = KernelAnalysis(kernel=kernel, path=path, target=target)
    problem = compile_target_problem(target)
    if problem:
        result.error = problem
        return result
    parsed = parsed or kernel_table(source)
    if parsed.error:
        result.error = parsed.error
        return result
    info = parsed.kernels.get(kernel)
    if info is None:
        result.error = f"no @triton.jit function named {kernel!r} in {path}"
        return result
    callers = callers_of(parsed, kernel)
    if callers and f"{kernel}[" not in source:
        # compiled alone, a helper gets made-up argument types and fails with a misleading frontend error
        result.error = f"{kernel} is a @triton.jit helper, compiled inline into {', '.join(callers)}; analyze one of those"
        return result
    result.span = info.name_span
    sources = dependency_sources_of(source, kernel)
    result.code_hash = code_hash(sources, source)
    table = kernel_overrides(overrides, kernel)
    if recorded is None:  # launches `tritonlens record` stored for this kernel's current text come first
        recorded = stored_launches(path, source, kernel)
    recorded = [r for r in recorded or () if same_file(r.get("file"), path)]
    try:
        imported = imported_helpers(parsed.tree, module_reader(path)) if path else None
        if foreign is None:  # a wrapper in another file that launches the kernel: its values before any guess
            foreign = launches_elsewhere(path, source, kernel).launches
        specs = specializations(
            parsed, kernel, overrides=table, recorded=recorded, imported=imported, foreign=foreign
        )
    except Exception as exc:  # a specialization bug must come back as a message, not a crash
        result.error = f"specialization failed: {type(exc).__name__}: {exc}"
        return result
    result.specializations = specs
    result.findings.extend(_with_record_command(specialization_findings(parsed, kernel, specs, overrides=table), path))
    platform = platform_of(target)
    to_compile = [s for s in specs if s.complete][:max_variants]
    unavailable = environment_problem(runner, target) if to_compile else None
    if unavailable:
        result.runner_unavailable = True
        result.error = unavailable
        return result
    for spec in to_compile:
        if cancel is not None and cancel.is_set():
            result.cancelled = True
            break
        where = (source, path, kernel, target)
        try:
            variant = _compiled(runner, spec, where, sources, cancel, timeout_s)
            if not variant.ok and variant_guesses(spec):
                variant = _retry_guesses(variant, runner, where, sources, cancel, timeout_s)
        except Exception as exc:
            if runner_unavailable(exc):
                result.runner_unavailable = True
                result.error = str(exc)
            else:
                result.error = f"the runner failed: {type(exc).__name__}: {exc}"
            break
        result.variants.append(variant)
        if variant.ok:
            analyze_output(variant, target, source, kernel, path)
        elif cancel is not None and cancel.is_set():
            result.cancelled = True
            break
    failed = [v for v in result.variants if not v.ok]
    stopped_by = worker_error(result.variants)
    if stopped_by and (len(failed) == len(result.variants) or result.error is None):
        result.error = stopped_by
    jit_nodes = [k.node for name, k in parsed.kernels.items() if name != kernel]
    inputs_of_line = line_inputs(info.node, jit_nodes)
    failures, tool_caused = split_tool_failures(
        failure_findings(result.variants, platform, source, kernel, result.span or Span(1, 0, 1, 0)), inputs_of_line
    )
    result.findings.extend(failures)
    stopped = None if result.runner_unavailable or result.cancelled else result.error
    result.findings.extend(load_findings(result.variants, source, kernel, stopped, result.span))
    withheld: list[Withheld] = []
    result.findings.extend(merge_variant_findings(result.variants, inputs_of_line, withheld))
    names = list(dict.fromkeys(a for w in withheld for a in w.rests_on))
    pointers = {a for v in result.variants for a, t in v.specialization.signature.items() if t.startswith("*")}
    values = {a: c for v in reversed(result.variants) for a, c in v.specialization.constants.items()}
    text = pragma_text(info, names, pointers, values)
    result.findings.extend(withheld_hint(withheld, kernel, result.span or info.name_span, text, info.first_line))
    if tool_caused:  # a failed compile of guessed values, stand-ins or a package the worker could not import
        guessed = list(dict.fromkeys(a for f, _ in tool_caused for a in f.data.get("assumed_values") or {}))
        hint_text = pragma_text(info, guessed, pointers, values) if guessed else ""
        hint_span = result.span or info.name_span
        result.findings.extend(not_analysed_hint(tool_caused, kernel, hint_span, hint_text, info.first_line))
    result.findings = [_with_kernel(f, kernel) for f in result.findings]
    result.elapsed_s = time.perf_counter() - started
    return result


def _compiled(
    runner: Runner,
    spec: Specialization,
    where: tuple[str, str, str, str],
    sources: Mapping[str, str] | None,
    cancel: threading.Event | None,
    timeout_s: float | None,
) -> VariantResult:
    source, path, kernel, target = where
    req = CompileRequest(
        source=source,
        path=path,
        kernel=kernel,
        signature=dict(spec.signature),
        constants=dict(spec.constants),
        divisibility=list(spec.divisibility),
        target=target,
        options=dict(spec.options),
    )
    compiled = compile_variant(runner, req, sources, cancel, timeout_s)
    return VariantResult(
        specialization=spec,
        ok=bool(compiled.ok),
        stages=dict(compiled.stages or {}),
        metadata=dict(compiled.metadata or {}),
        resources=dict(compiled.resources or {}),
        errors=list(compiled.errors or []),
        compiler=compiled.compiler,
        cached=compiled.cached,
        elapsed_s=compiled.elapsed_s,
    )


def _retry_guesses(
    first: VariantResult,
    runner: Runner,
    where: tuple[str, str, str, str],
    sources: Mapping[str, str] | None,
    cancel: threading.Event | None,
    timeout_s: float | None,
) -> VariantResult:
    """The front end rejected a guessed specialization: compile the next most likely guess the error points
    to (analysis.specialization_retry, at most MAX_RETRIES times). The variant that compiled names the guesses
    it used and those that failed; when none compiles, the first failure stands (the kernel as guessed), with the
    last retry's errors in its metadata."""
    failed: list[dict[str, str]] = []
    variant = first
    for _ in range(MAX_RETRIES):
        error = next((e for e in variant.errors if e.stage == "frontend"), None)
        if error is None or (cancel is not None and cancel.is_set()):
            break
        nxt = retry_guess(variant.specialization, where[0], error.message, error.line)
        if nxt is None:
            break
        failed.append({"variant": variant.specialization.label, "error": error.message.splitlines()[0][:300]})
        variant = _compiled(runner, nxt, where, sources, cancel, timeout_s)
        if variant.ok:
            variant.metadata["failed_guesses"] = failed
            return variant
    if variant is not first:  # what the last retry hit (an API this Triton lacks, past the guesses) is kept
        first.metadata["retried_errors"] = [e.message.splitlines()[0][:300] for e in variant.errors]
    return first


def _with_kernel(f: Finding, kernel: str) -> Finding:
    return f if f.kernel else replace(f, kernel=kernel)


def analyze_document(
    source: str,
    path: str,
    target: str,
    runner: Runner,
    *,
    overrides: Mapping[str, Any] | None = None,
    recorded: Sequence[Mapping[str, Any]] | None = None,
    cancel: threading.Event | None = None,
    kernels: Sequence[str] | None = None,
    max_variants: int = MAX_COMPILED_VARIANTS,
    timeout_s: float | None = None,
) -> list[KernelAnalysis]:
    """analyze_kernel for every launchable kernel of the document (or the ones named in `kernels`)."""
    parsed = kernel_table(source)
    if parsed.error:
        return []
    names = list(kernels) if kernels is not None else launchable_kernels(source, parsed)
    if recorded is None:
        recorded = stored_launches(path, source, None)
    out: list[KernelAnalysis] = []
    for name in names:
        if cancel is not None and cancel.is_set():
            break
        out.append(
            analyze_kernel(
                source,
                path,
                name,
                target,
                runner,
                overrides=overrides,
                recorded=recorded,
                cancel=cancel,
                max_variants=max_variants,
                timeout_s=timeout_s,
                parsed=parsed,
            )
        )
    return out


_GENERIC_RECORD = "`tritonlens record -- pytest ...` or `-- python script.py`"


def _with_record_command(findings: list[Any], path: str | None) -> list[Any]:
    """A finding on guessed values names the exact command that records real ones, when a test or script of the
    workspace launches the file (server/engine/record/suggest.py); data["record_command"] holds its argv (the
    editor's "Record launches" action runs it)."""
    from dataclasses import replace

    from ..record.suggest import record_hint

    out, hint = [], None
    for f in findings:
        if _GENERIC_RECORD in f.message and "assumed" in (f.data or {}):
            hint = hint or record_hint(path or "")
            if hint:
                f = replace(f, message=f.message.replace(_GENERIC_RECORD, f"`{hint[1]}`"),
                            data={**f.data, "record_command": hint[0]})
        out.append(f)
    return out
