"""`tritonlens check --level ir --target sm_90|ascend910b3 FILE...`: triage plus levels 3-4 for every kernel.

Prints the findings the language server would show (triage and compiler-grounded), in the same text/JSON
formats as `check`; exit 1 when findings remain, 2 when the runner environment for the target is missing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ...analysis.core.escalation import apply_and_merge
from ...analysis.core.findings import Finding, Severity
from ...analysis.core.settings import Settings
from ...analysis.core.targets import COMPILE_TARGETS, compile_target_for, platform_of
from ..engine.diagnose import (
    KernelAnalysis,
    analyze_document,
    find_pyproject_overrides,
)
from ..engine.record.launch_store import project_relative
from ..source_files import read_python_source

SETUP_HINT = (
    "set up the runner environments with `scripts/bootstrap` (NVIDIA targets: .envs/cuda) or "
    "`scripts/bootstrap --all` (also Ascend: .envs/ascend), or point TRITONLENS_CUDA_PYTHON / "
    "TRITONLENS_ASCEND_PYTHON at an interpreter that has triton / triton-ascend"
)


def _triage(source: str, path: str) -> list[Finding]:
    try:
        from ...analysis.triage import triage
    except ImportError:
        return []
    return list(triage(source, path).findings)


def make_runner(config: dict[str, Any] | None) -> Any:
    from ...ascend_runner.client import get_runner

    return get_runner(config or None)


def report_unavailable(command: str, target: str, analysis: KernelAnalysis) -> None:
    print(
        f"tritonlens {command}: no runner environment for target {target}: {analysis.error}", file=sys.stderr
    )
    print(f"tritonlens {command}: {SETUP_HINT}", file=sys.stderr)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[str, int, int, str]] = set()
    out: list[Finding] = []
    for f in sorted(findings, key=lambda f: (f.span.line, f.span.col, f.code)):
        key = (f.code, f.span.line, f.span.col, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def analyze_files_ir(args: argparse.Namespace, files: list[Path]) -> int:
    from .findings_output import check_codes, print_findings  # noqa: I001
    from ...analysis.ignores import Ignores
    from ..ignores.project import project_ignores

    requested = args.target
    if requested not in (*COMPILE_TARGETS, "auto"):
        print(
            f"tritonlens check: --level ir needs a compile target: --target {' | '.join(COMPILE_TARGETS)} | auto"
            f" (got {requested!r})",
            file=sys.stderr,
        )
        return 2
    try:
        settings = Settings.from_mapping(
            {
                "target": "auto" if requested == "auto" else platform_of(requested),
                "select": args.select,
                "ignore": args.ignore,
            }
        )
        check_codes(settings)
    except ValueError as exc:
        print(f"tritonlens check: {exc}", file=sys.stderr)
        return 2
    project = find_pyproject_overrides(files[0]) if files else {}
    runner_config = project.get("runner") if isinstance(project.get("runner"), dict) else None
    try:
        runner = make_runner(runner_config)
    except (NotImplementedError, ValueError) as exc:
        print(f"tritonlens check: cannot start a runner: {exc}", file=sys.stderr)
        return 2
    results: dict[str, list[Finding]] = {}
    notes: set[str] = set()
    unreadable = False
    try:
        for path in files:
            try:
                source = read_python_source(path)
            except (OSError, UnicodeDecodeError) as exc:
                # as in triage: report the unreadable file, analyze the rest, exit 2
                print(f"tritonlens check: cannot read {path}: {exc}", file=sys.stderr)
                unreadable = True
                continue
            overrides = find_pyproject_overrides(path)
            try:
                ignores = Ignores.of(source, project_ignores(str(path)))
            except ValueError as exc:
                print(f"tritonlens check: pyproject.toml: {exc}", file=sys.stderr)
                return 2
            file_settings = settings.for_file(source, project_relative(str(path)))
            target = requested if requested != "auto" else compile_target_for(file_settings.platforms)
            findings = _triage(source, str(path))
            for analysis in analyze_document(source, str(path), target, runner, overrides=overrides):
                if analysis.runner_unavailable:
                    report_unavailable("check", target, analysis)
                    return 2
                if analysis.error:
                    print(
                        f"tritonlens check: {path}: {analysis.kernel} not analyzed: {analysis.error}",
                        file=sys.stderr,
                    )
                for variant in analysis.variants:
                    note = variant.metadata.get("npubin")
                    if isinstance(note, str) and note.startswith("not built") and note not in notes:
                        notes.add(note)  # say once that the NPU binary stage was skipped, never pretend
                        print(f"tritonlens check: note: npubin {note}", file=sys.stderr)
                    if variant.analysis_error:
                        print(
                            f"tritonlens check: {path}: {analysis.kernel}: {variant.analysis_error}",
                            file=sys.stderr,
                        )
                findings.extend(analysis.findings)
            # Same merge as the language server: a confirmed triage symptom folds into the compiler finding.
            results[str(path)] = apply_and_merge(file_settings, ignores.apply(_dedupe(findings)))
    finally:
        runner.close()
    status = print_findings(
        args.format,
        results,
        Severity.parse(getattr(args, "min_severity", "hint")),
        Severity.parse(getattr(args, "fail_on", "warning")),
    )
    return 2 if unreadable else status
