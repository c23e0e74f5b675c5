"""Levels 3-4 for one kernel or a whole document: specialize -> compile via a runner -> analyze.

Used by the CLI (`check --level ir`, `ir`) and the language server. Never raises for user errors (bad
source, missing values, compile errors, a missing runner environment): those come back as findings or as
`KernelAnalysis.error`. Thread-safe (no shared mutable state); honours a `threading.Event` to cancel.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..analysis.compile_errors import compile_error_findings
from ..analysis.findings import Finding, Severity, Span
from ..analysis.front_rules import IMPORT_FAILED, NOT_ANALYZED
from ..analysis.kernels import parse_module
from ..analysis.kernels.dependencies import dependency_sources
from ..analysis.source_alone import source_alone_label
from ..analysis.source_lines import source_lines
from ..analysis.specialization import ASSUMED_DIVISIBLE, Specialization, specializations
from ..analysis.specialization_findings import specialization_findings
from ..analysis.specialization_guess import ASSUMED_TYPICAL
from ..analysis.specialization_infer import DESCRIPTOR_GUESS
from ..analysis.specialization_kernels import KernelTable, kernel_table
from ..analysis.value_dependency import value_dependency, value_dependent_lines
from ..ascend_runner.protocol import ASCEND_TARGETS, CUDA_TARGETS, CompileRequest, StageError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pyproject overrides need 3.11's tomllib
    tomllib = None  # type: ignore[assignment]

MAX_COMPILED_VARIANTS = 4
TARGETS = (*CUDA_TARGETS, *ASCEND_TARGETS)


def platform_of(target: str) -> str:
    """ "cuda" for sm_* targets, "ascend" for Ascend SoCs (the Settings platform of a compile target)."""
    return "ascend" if target in ASCEND_TARGETS or target.startswith("ascend") else "cuda"


@dataclass
class VariantResult:
    """One specialization compiled (or not) and analyzed."""

    specialization: Specialization
    ok: bool
    stages: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, Any] = field(default_factory=dict)
    errors: list[StageError] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    line_maps: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    compiler: str = ""
    cached: bool = False
    elapsed_s: float = 0.0
    analysis_error: str | None = (
        None  # the analyzer failed on this output (a tritonlens bug, reported plainly)
    )


@dataclass
class KernelAnalysis:
    kernel: str
    path: str
    target: str
    span: Span | None = None  # the kernel's name in its `def`
    findings: list[Finding] = field(default_factory=list)
    specializations: list[Specialization] = field(default_factory=list)  # every variant considered
    variants: list[VariantResult] = field(default_factory=list)  # the ones sent to the compiler
    error: str | None = None  # why nothing was analyzed (no runner env, unknown kernel, ...)
    runner_unavailable: bool = False
    cancelled: bool = False
    code_hash: str = ""  # digest of the kernel's and its helpers' text: results stay valid while it holds
    elapsed_s: float = 0.0

    @property
    def primary(self) -> VariantResult | None:
        """The first variant that compiled: its stages and summary feed the code lens and the IR view."""
        return next((v for v in self.variants if v.ok), None)

    @property
    def stages(self) -> dict[str, str]:
        return self.primary.stages if self.primary else {}

    @property
    def line_maps(self) -> dict[str, list[tuple[int, int]]]:
        return self.primary.line_maps if self.primary else {}

    @property
    def summary(self) -> dict[str, Any]:
        primary = self.primary
        out: dict[str, Any] = dict(primary.summary) if primary else {}
        out.update(
            {
                "target": self.target,
                "variants_considered": len(self.specializations),
                "variants_compiled": sum(1 for v in self.variants if v.ok),
            }
        )
        if primary:
            out.update(
                {
                    "variant": primary.specialization.label,
                    "compiler": primary.compiler,
                    "compile_s": round(primary.elapsed_s, 3),
                    "cached": primary.cached,
                }
            )
        if self.error:
            out["error"] = self.error
        return out

    def to_dict(self, with_stages: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kernel": self.kernel,
            "path": self.path,
            "target": self.target,
            "span": None if self.span is None else vars(self.span),
            "findings": [f.to_dict() for f in self.findings],
            "specializations": [s.to_dict() for s in self.specializations],
            "variants": [
                {
                    "label": v.specialization.label,
                    "ok": v.ok,
                    "errors": [vars(e) for e in v.errors],
                    "summary": v.summary,
                    "cached": v.cached,
                    "elapsed_s": v.elapsed_s,
                    "analysis_error": v.analysis_error,
                }
                for v in self.variants
            ],
            "summary": self.summary,
            "error": self.error,
            "runner_unavailable": self.runner_unavailable,
            "cancelled": self.cancelled,
            "code_hash": self.code_hash,
        }
        if with_stages:
            out["stages"] = self.stages
            out["line_maps"] = {k: [list(p) for p in v] for k, v in self.line_maps.items()}
        return out


# ---- pyproject ----------------------------------------------------------------------------------------


def find_pyproject(path: str | Path) -> Path | None:
    """The nearest pyproject.toml at or above the file's folder."""
    try:
        start = Path(path).resolve()
    except (OSError, RuntimeError):
        return None
    for folder in [start, *start.parents] if start.is_dir() else start.parents:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def find_pyproject_overrides(path: str | Path) -> dict[str, Any]:
    """`[tool.tritonlens]` of the nearest pyproject.toml ({} when absent or unreadable).

    Kernel overrides live under its `kernels` key: {"kernels": {"matmul_kernel": {"BLOCK_M": 128, ...}}}.
    """
    pyproject = find_pyproject(path)
    if pyproject is None or tomllib is None:
        return {}
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    table = data.get("tool", {}).get("tritonlens", {})
    return table if isinstance(table, dict) else {}


def kernel_overrides(table: Mapping[str, Any] | None, kernel: str) -> dict[str, Any]:
    """The per-kernel table out of `[tool.tritonlens]` (or of its `kernels` sub-table passed directly)."""
    if not table:
        return {}
    kernels = table.get("kernels", table)
    entry = kernels.get(kernel) if isinstance(kernels, Mapping) else None
    return dict(entry) if isinstance(entry, Mapping) else {}


# ---- helpers ------------------------------------------------------------------------------------------


def _dependency_sources(source: str, kernel: str) -> dict[str, str] | None:
    try:
        return dependency_sources(source, kernel)
    except Exception:  # a cache-key helper must never stop analysis
        return None


def _code_hash(sources: Mapping[str, str] | None, source: str) -> str:
    blob = repr(sorted(sources.items())) if sources else source
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _accepts(func: Any, name: str) -> bool:
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def _runner_unavailable(exc: BaseException) -> bool:
    try:
        from ..ascend_runner.environments import EnvironmentUnavailable
    except ImportError:
        return False
    return isinstance(exc, EnvironmentUnavailable)


def _environment_problem(runner: Any, target: str) -> str | None:
    """Setup advice when the runner has no environment for `target` (local runners only; remote ones say so
    in their compile result)."""
    find = getattr(runner, "environment", None)
    if find is None:
        return None
    try:
        from ..ascend_runner.environments import environment_for_target

        find(environment_for_target(target))
    except Exception as exc:
        if _runner_unavailable(exc):
            return str(exc)
    return None


def _compile(
    runner: Any,
    req: CompileRequest,
    sources: Mapping[str, str] | None,
    cancel: threading.Event | None,
    timeout_s: float | None,
) -> Any:
    kwargs: dict[str, Any] = {"cancel": cancel, "timeout_s": timeout_s}
    if sources is not None and _accepts(runner.compile, "function_sources"):
        kwargs["function_sources"] = dict(sources)
    return runner.compile(req, **kwargs)


class _ReportCache:
    """Analyses of cached compile results, so a warm re-analysis skips re-parsing every stage.

    Keyed by everything the report depends on: the whole buffer (analyzers read launch sites too), path,
    target, the specialization and the compiler. Thread-safe, bounded (LRU)."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._items: OrderedDict[
            str, tuple[list[Finding], dict[str, Any], dict[str, list[tuple[int, int]]]]
        ] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(variant: VariantResult, target: str, source: str, kernel: str, path: str) -> str:
        parts = (source, path, kernel, target, repr(variant.specialization.key()), variant.compiler)
        # The compile cache key also covers imported helper files the buffer text does not show.
        parts += (str(variant.metadata.get("cache_key", "")),)
        return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()

    def get(self, key: str) -> tuple[list[Finding], dict[str, Any], dict[str, list[tuple[int, int]]]] | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def put(
        self, key: str, value: tuple[list[Finding], dict[str, Any], dict[str, list[tuple[int, int]]]]
    ) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


_REPORTS = _ReportCache()


def _analyze_output(variant: VariantResult, target: str, source: str, kernel: str, path: str) -> None:
    key = _ReportCache.key(variant, target, source, kernel, path) if variant.cached else ""
    hit = _REPORTS.get(key) if key else None
    if hit is not None:
        findings, summary, line_maps = hit
        variant.findings, variant.summary, variant.line_maps = list(findings), dict(summary), dict(line_maps)
        return
    try:
        from ..analysis.compiler import analyze
    except ImportError as exc:
        variant.analysis_error = f"compiler-grounded analysis is not installed ({exc})"
        return
    try:
        report = analyze(variant.stages, variant.metadata, variant.resources, target, source, kernel, path)
    except Exception as exc:  # an analyzer bug must not hide the compile result
        variant.analysis_error = f"analysis of the {target} output failed: {type(exc).__name__}: {exc}"
        return
    variant.findings = list(getattr(report, "findings", []) or [])
    variant.summary = dict(getattr(report, "summary", {}) or {})
    maps = getattr(report, "line_maps", {}) or {}
    variant.line_maps = {stage: [(int(a), int(b)) for a, b in pairs] for stage, pairs in maps.items()}
    _REPORTS.put(
        _ReportCache.key(variant, target, source, kernel, path),
        (list(variant.findings), dict(variant.summary), dict(variant.line_maps)),
    )


def _merge_findings(variants: Sequence[VariantResult]) -> list[Finding]:
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
                a: why for a, why in _assumptions(f.message, spec).items() if not depends or a != depends[0]
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
        elif "element type assumed" in why:
            out[arg] = f"{arg} as *fp32"
        elif why.startswith("assumed i32"):
            out[arg] = f"{arg} as i32"
        elif DESCRIPTOR_GUESS in why:
            out[arg] = f"{arg} as {spec.signature.get(arg)}"
    return out


def guess_label(guesses: Mapping[str, str]) -> str:
    return (
        " [compiled with assumed "
        + ", ".join(guesses.values())
        + " (nothing shows them); record real launches with `tritonlens record -- <test or script>`]"
    )


def _assumptions(message: str, spec: Specialization) -> dict[str, str]:
    """Arguments named in `message` (as `name`) whose specialization was a guess, with what was guessed."""
    out: dict[str, str] = {}
    for arg, provenance in spec.provenance.items():
        if f"`{arg}`" not in message:
            continue
        why = next((text for marker, text in _GUESSES if marker in provenance), None)
        if why:
            out[arg] = why
    return out


# ---- entry points -------------------------------------------------------------------------------------


def analyze_kernel(
    source: str,
    path: str,
    kernel: str,
    target: str,
    runner: Any,
    *,
    overrides: Mapping[str, Any] | None = None,
    recorded: Sequence[Mapping[str, Any]] | None = None,
    cancel: threading.Event | None = None,
    max_variants: int = MAX_COMPILED_VARIANTS,
    timeout_s: float | None = None,
    parsed: KernelTable | None = None,
) -> KernelAnalysis:
    """Specialize `kernel`, compile up to `max_variants` variants for `target`, analyze the output.

    `overrides` is `[tool.tritonlens]` (or its `kernels` table); `recorded` are launches a runner recorded.
    """
    started = time.perf_counter()
    result = KernelAnalysis(kernel=kernel, path=path, target=target)
    if target not in TARGETS:
        result.error = f"unknown target {target!r}; use one of {', '.join(TARGETS)}"
        return result
    parsed = parsed or kernel_table(source)
    if parsed.error:
        result.error = parsed.error
        return result
    info = parsed.kernels.get(kernel)
    if info is None:
        result.error = f"no @triton.jit function named {kernel!r} in {path}"
        return result
    callers = _callers(parsed, kernel)
    if callers and f"{kernel}[" not in source:
        # compiled alone, a helper gets made-up argument types and fails with a misleading frontend error
        result.error = f"{kernel} is a @triton.jit helper, compiled inline into {', '.join(callers)}; analyze one of those"
        return result
    result.span = info.name_span
    sources = _dependency_sources(source, kernel)
    result.code_hash = _code_hash(sources, source)
    table = kernel_overrides(overrides, kernel)
    if recorded is None:  # launches `tritonlens record` stored for this kernel's current text come first
        recorded = _stored_launches(path, source, kernel)
    recorded = [r for r in recorded or () if _same_file(r.get("file"), path)]
    try:
        specs = specializations(parsed, kernel, overrides=table, recorded=recorded)
    except Exception as exc:  # a specialization bug must come back as a message, not a crash
        result.error = f"specialization failed: {type(exc).__name__}: {exc}"
        return result
    result.specializations = specs
    result.findings.extend(specialization_findings(parsed, kernel, specs, overrides=table))
    platform = platform_of(target)
    to_compile = [s for s in specs if s.complete][:max_variants]
    unavailable = _environment_problem(runner, target) if to_compile else None
    if unavailable:
        result.runner_unavailable = True
        result.error = unavailable
        return result
    for spec in to_compile:
        if cancel is not None and cancel.is_set():
            result.cancelled = True
            break
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
        try:
            compiled = _compile(runner, req, sources, cancel, timeout_s)
        except Exception as exc:
            if _runner_unavailable(exc):
                result.runner_unavailable = True
                result.error = str(exc)
            else:
                result.error = f"the runner failed: {type(exc).__name__}: {exc}"
            break
        variant = VariantResult(
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
        result.variants.append(variant)
        if variant.ok:
            _analyze_output(variant, target, source, kernel, path)
        elif cancel is not None and cancel.is_set():
            result.cancelled = True
            break
    result.findings.extend(_failure_findings(result, platform, source, kernel))
    result.findings.extend(load_findings(result, source))
    result.findings.extend(_merge_findings(result.variants))
    result.findings = [_with_kernel(f, kernel) for f in result.findings]
    result.elapsed_s = time.perf_counter() - started
    return result


def _failure_findings(result: KernelAnalysis, platform: str, source: str, kernel: str) -> list[Finding]:
    """Compile errors on the lines the compiler blamed: errors when no variant compiles, warnings for an
    autotune config / launch variant that fails while another compiles. Worker failures are no finding."""
    failed = [v for v in result.variants if not v.ok]
    if not failed:
        return []
    all_failed = len(failed) == len(result.variants)
    worker_messages = [e.message for v in failed for e in v.errors if _not_the_kernels_fault(e)]
    if worker_messages and (all_failed or result.error is None):
        result.error = "; ".join(dict.fromkeys(worker_messages))
    out: list[Finding] = []
    seen: set[tuple[str, int]] = set()
    fallback = result.span or Span(1, 0, 1, 0)
    for variant in failed:
        errors = [e for e in variant.errors if not _not_the_kernels_fault(e)]
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
            if guesses:  # the failure may be the guess's, not the kernel's: say so, no error
                f = replace(
                    f,
                    message=f.message + guess_label(guesses),
                    severity=max(f.severity, Severity.WARNING),
                    data={**f.data, "assumed_values": guesses},
                )
            out.append(f)
        if all_failed:
            break  # one variant's errors say it; the others usually repeat them
    return out


def load_findings(result: KernelAnalysis, source: str) -> list[Finding]:
    """TL004 on each import line that failed in the runner; TL005 on the kernel when the analysis stopped for
    a reason that is not the kernel's compile error. Never an empty result after an error."""
    out: list[Finding] = []
    lines = source_lines(source)
    compiled = any(v.ok for v in result.variants)
    seen: set[int] = set()
    for variant in result.variants:
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
            consequence = (
                "the kernel compiled without it"
                if compiled
                else "the kernel could not be compiled without it"
            )
            out.append(
                IMPORT_FAILED.finding(
                    f"{headline}; {consequence}",
                    Span(line, col, line, len(text)),
                    severity=Severity.INFO if compiled else Severity.WARNING,
                    kernel=result.kernel,
                    data={"exception": message},
                )
            )
    if result.error and not result.runner_unavailable and not result.cancelled and not compiled:
        out.append(
            NOT_ANALYZED.finding(
                f"{result.kernel} was not analyzed at levels 3-4: {result.error}",
                result.span or Span(1, 0, 1, 0),
                kernel=result.kernel,
            )
        )
    return out


def _not_the_kernels_fault(error: StageError) -> bool:
    """A worker crash, or a kernel the worker could not load because a module-level statement needs a GPU
    or a device (e.g. `configs=get_autotune_config()` asking the driver for its target): an error of the
    analysis, never a compile-error finding on the user's kernel."""
    return error.stage == "worker" or str(error.message).startswith("no @triton.jit function named")


def _stored_launches(path: str, source: str, kernel: str | None) -> list[dict[str, Any]]:
    from .launch_store import recorded_for

    try:
        return recorded_for(path, source, kernel)
    except OSError:  # an unreadable store is no reason to stop the analysis
        return []


def _same_file(recorded_file: Any, path: str) -> bool:
    """A recorded launch belongs to this buffer when it names no file or names this one."""
    if not isinstance(recorded_file, str) or not recorded_file:
        return True
    try:
        return os.path.realpath(recorded_file) == os.path.realpath(path)
    except (OSError, ValueError):
        return recorded_file == path


def _with_kernel(f: Finding, kernel: str) -> Finding:
    return f if f.kernel else replace(f, kernel=kernel)


def launchable_kernels(source: str, parsed: KernelTable | None = None) -> list[str]:
    """Kernels worth compiling on their own: jit functions that are launched here or called by no other
    jit function (helpers are compiled inlined into their callers)."""
    module = parse_module(source)
    parsed = parsed or kernel_table(module)
    # a jit function only referenced by others (a `tl.reduce` combine function) is compiled inside them
    return [k.name for k in module.kernels if not _helper_only(parsed, k.name, source)]


def _callers(parsed: KernelTable, kernel: str) -> list[str]:
    return [n for n, other in parsed.kernels.items() if n != kernel and kernel in _names(other.node)]


def _helper_only(parsed: KernelTable, kernel: str, source: str) -> bool:
    """Compiled only inside other jit functions: referenced by one (a `tl.reduce` combine function), or
    returning a value (a device function: a launched kernel cannot return one), and never launched here."""
    if f"{kernel}[" in source:
        return False
    info = parsed.kernels.get(kernel)
    returns = info is not None and any(
        isinstance(n, ast.Return) and n.value is not None for n in ast.walk(info.node)
    )
    return returns or bool(_callers(parsed, kernel))


def _names(node: Any) -> list[str]:
    import ast

    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]


def analyze_document(
    source: str,
    path: str,
    target: str,
    runner: Any,
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
        recorded = _stored_launches(path, source, None)
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
