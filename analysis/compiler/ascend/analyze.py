"""Levels 3-4 for Ascend targets: attribute triton-ascend's stages to source lines and run the TL4xx checks.

Input is a CompileResult from `ascend_runner/worker/compile_ascend.py`: `ttir` and `ttadapter` text (always,
even without CANN) and, with ascendnpu-ir installed, the `hivm` stages: BiSheng's pipeline run on the CPU up to
the external hivmc step (compiler_ascend_hivm.py reads its decisions). `npubin` needs CANN.
"""

from __future__ import annotations

import ast
from typing import Any

from ...core import rules
from ...core.findings import Finding
from ...source.lines import source_lines as split_source_lines
from ...specialize.kernels import KernelTable, kernel_table
from ...specialize.launch import resolve
from ...specialize.scope import find_launches
from ..attribution import Attributor, ParsedStages, attribute, user_files_for
from ..ir.mlir import parse_mlir
from ..ir.mlir_loc import UserFiles
from ..ir.ttadapter import parse_ttadapter
from ..ir.ttadapter_model import AdapterModule
from ..report import CompilerReport
from ..stages import stage
from .confirm import confirm_with_hivm
from .context import AscendContext
from .declare import ASCEND_FAMILY
from .devices import device_for
from .hivm import HivmReport, analyze_hivm
from .ub import ub_estimate


def analyze_ascend(
    stages: dict[str, str],
    metadata: dict[str, Any],
    resources: dict[str, Any],
    target: str,
    source: str,
    kernel: str,
    path: str,
) -> CompilerReport:
    """Analyze one kernel compiled by triton-ascend; malformed or missing stages become notes, never raises."""
    report = CompilerReport()
    metadata = metadata if isinstance(metadata, dict) else {}
    resources = resources if isinstance(resources, dict) else {}
    source = source if isinstance(source, str) else ""
    device = device_for(str(target or ""), metadata)
    if device is None:
        report.notes.append(f"no device data for Ascend target {target!r}; UB and grid checks skipped")
    note = metadata.get("npubin")
    if isinstance(note, str):
        report.notes.append(f"npubin {note}")

    _attribute_ttir(stages, path, kernel, report)
    text = stages.get("ttadapter") if isinstance(stages, dict) else None
    if not isinstance(text, str) or not text.strip():
        report.notes.append("no ttadapter stage: the TL4xx checks need triton-ascend's linalg output")
        return report
    try:
        module = parse_ttadapter(text, path or None)
    except Exception as exc:  # noqa: BLE001 - malformed IR must not take down the server
        report.notes.append(f"could not parse ttadapter: {type(exc).__name__}: {exc}")
        return report
    if not any(op.line is not None for op in module.ops):
        report.notes.append(
            "ttadapter has no source locations for this file (compile with TRITON_DISABLE_LINE_INFO=0)"
        )

    table = kernel_table(source)  # the document's one parse, shared with triage and specialization
    tree = table.tree
    ctx = AscendContext(
        module=module,
        source_lines=split_source_lines(source),
        tree=tree,
        kernel=kernel,
        path=path,
        device=device,
        metadata=metadata,
        resources=resources,
    )
    ctx.ttir_i64_lines = _ttir_i64_lines(stages, path)
    grid, launch_line = _grid(metadata, table, kernel)
    hivm = _hivm(ctx, stages, metadata, report)
    findings: list[Finding] = list(hivm.findings)
    ctx.grid, ctx.launch_line, ctx.ub_decided = grid, launch_line, hivm.ub_decided
    for check in rules.checks(ASCEND_FAMILY, package=__package__):  # every check module of this package
        try:
            findings.extend(check.run(ctx))
        except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
            report.notes.append(f"{check.name} failed: {type(exc).__name__}: {exc}")
    try:
        _attribute_ttadapter(module, report)
        report.summary = _summary(ctx, grid)
        report.summary.update(hivm.summary)
        report.line_maps.update(hivm.line_maps)
    except Exception as exc:  # noqa: BLE001 - keep what was found; say what broke
        report.notes.append(f"Ascend attribution failed: {type(exc).__name__}: {exc}")
    findings = confirm_with_hivm(findings, hivm)
    report.findings = sorted(findings, key=lambda f: (f.span.line, f.code))
    return report


def _hivm(
    ctx: AscendContext, stages: dict[str, str], metadata: dict[str, Any], report: CompilerReport
) -> HivmReport:
    try:
        hivm = analyze_hivm(ctx, stages, metadata)
    except Exception as exc:  # noqa: BLE001 - the ttadapter checks still stand on their own
        report.notes.append(f"hivm analysis failed: {type(exc).__name__}: {exc}")
        return HivmReport()
    report.notes.extend(hivm.notes)
    return hivm


def _ttir_i64_lines(stages: dict[str, str], path: str) -> set[int] | None:
    """Source lines whose ttir computes on int64 tiles: there the int64 is the author's, not the adapter's."""
    ttir = stages.get("ttir")
    if not isinstance(ttir, str) or not ttir.strip():
        return None
    try:
        module = parse_mlir(ttir)
    except Exception:  # noqa: BLE001
        return None
    is_user = UserFiles([path] if path else [])
    lines: set[int] = set()
    for op in module.ops:
        if "xi64>" in op.text and "tensor<" in op.text:
            frame = op.loc.user_frame(is_user) if path else (op.loc.frames[0] if op.loc.frames else None)
            if frame is not None:
                lines.add(frame.line)
    return lines


def _attribute_ttir(stages: dict[str, str], path: str, kernel: str, report: CompilerReport) -> None:
    ttir = stages.get("ttir") if isinstance(stages, dict) else None
    if not isinstance(ttir, str) or not ttir.strip():
        return
    try:
        parsed = ParsedStages.parse({"ttir": ttir}, platform="ascend")
        found = attribute(parsed, user_files_for(path, parsed, kernel))
    except Exception as exc:  # noqa: BLE001
        report.notes.append(f"could not attribute ttir: {type(exc).__name__}: {exc}")
        return
    report.lines.update(found.lines)
    report.line_maps.update(found.line_maps)


def _attribute_ttadapter(module: AdapterModule, report: CompilerReport) -> None:
    declared = stage("ascend", "ttadapter")
    assert declared is not None and declared.attribute is not None
    declared.attribute(module, Attributor(UserFiles([]), report.lines, report.line_maps), "ttadapter")
    report.lines = dict(sorted(report.lines.items()))


def _summary(ctx: AscendContext, grid: tuple[int, ...] | None) -> dict[str, Any]:
    module = ctx.module
    peak, _ = ub_estimate(ctx)
    out: dict[str, Any] = {
        "mix_mode": module.mix_mode,
        "parallel_mode": module.parallel_mode,
        "cube_ops": sum(1 for o in module.ops if o.is_cube),
        "vector_ops": sum(1 for o in module.ops if o.is_vector),
        "scalar_loops": len(module.scalar_loops),
        "ub_bytes_estimate": peak,
        "multibuffer": bool(ctx.metadata.get("multibuffer", True)),
    }
    if ctx.device is not None:
        out["soc"] = ctx.device.soc
        out["ub_capacity"] = ctx.device.ub_bytes
        out["ai_cores"] = ctx.device.ai_cores
        out["vector_cores"] = ctx.device.vector_cores
    bits = ctx.resources.get("required_ub_bits")
    if isinstance(bits, int):
        out["ub_bytes"] = bits // 8
    if grid:
        out["grid"] = list(grid)
    return out


def _grid(
    metadata: dict[str, Any], table: KernelTable, kernel: str
) -> tuple[tuple[int, ...] | None, int | None]:
    """The launch grid: from the request (metadata["grid"]) or a literal one at a launch site in the file."""
    given = metadata.get("grid")
    if isinstance(given, int) and given > 0:
        return (given,), None
    if isinstance(given, (list, tuple)) and given and all(isinstance(g, int) and g > 0 for g in given):
        return tuple(given), None
    if table.tree is None:
        return None, None
    try:
        for launch in find_launches(table.calls, kernel):
            if launch.grid is None:
                continue
            elts = launch.grid.elts if isinstance(launch.grid, ast.Tuple) else [launch.grid]
            values: list[int] = []
            for elt in elts:
                fact = resolve(elt, launch.scope)
                value = fact.value if fact.kind == "value" else None
                if isinstance(value, tuple) and len(elts) == 1:
                    values.extend(value)
                elif isinstance(value, int):
                    values.append(value)
                else:
                    values = []
                    break
            if values and all(isinstance(v, int) and v > 0 for v in values):
                return tuple(values), launch.line
    except Exception:  # noqa: BLE001 - grid discovery is best effort
        return None, None
    return None, None
