"""NVIDIA levels 3-4: attribute every stage to source lines, then explain the compiler's decisions (TL3xx).

Each check reads what the compiler decided from its own output (TTGIR layouts and ops, PTX/SASS instructions,
ptxas resources) and uses the TTIR def-use chains to name the source construct that caused it.
"""

from __future__ import annotations

from typing import Any

from ...core import rules
from ...source.lines import source_lines as split_source_lines
from ..attribution import ParsedStages, attribute, user_files_for
from ..ir.sass import parse_ptxas_verbose, parse_res_usage
from ..report import CompilerReport
from .context import Context, as_int
from .declare import CHECK_FAMILY
from .limits import limits_for, occupancy


def analyze_cuda(
    stages: dict[str, str],
    metadata: dict[str, Any],
    resources: dict[str, Any],
    target: str,
    source: str,
    kernel: str,
    path: str,
) -> CompilerReport:
    stages = {k: v for k, v in stages.items() if isinstance(v, str)}
    parsed = ParsedStages.parse(stages)
    is_user = user_files_for(path, parsed, kernel)
    attrib = attribute(parsed, is_user)
    resources = normalize_resources(resources, metadata, kernel)
    module_attrs = parsed.ttgir.attributes if parsed.ttgir else {}
    num_warps = as_int(metadata.get("num_warps"), as_int(module_attrs.get("ttg.num-warps"), 4))
    ctx = Context(
        stages=stages,
        parsed=parsed,
        is_user=is_user,
        lines=attrib.lines,
        source_lines=split_source_lines(source),
        kernel=kernel,
        target=target,
        limits=limits_for(target),
        num_warps=num_warps,
        num_stages=as_int(metadata.get("num_stages"), 3),
        resources=resources,
    )
    notes: list[str] = []
    if parsed.ttir is None or parsed.ttgir is None:
        notes.append("TTIR/TTGIR missing: compiler-grounded findings need both stages")
    if parsed.ptx is None:
        notes.append("PTX missing: vector widths cannot be measured")
    if not attrib.lines:
        notes.append(
            f"no IR location points into {path or 'the source file'}: was it compiled with line info?"
        )
    for check in rules.checks(CHECK_FAMILY, package=__package__):  # every check module of this package
        try:
            check.run(ctx)
        except (ValueError, KeyError, IndexError, AttributeError, TypeError) as exc:
            # One check tripping over unexpected IR must not hide the others.
            notes.append(f"{check.name} skipped: {type(exc).__name__}: {exc}")
    return CompilerReport(
        findings=sorted(ctx.findings, key=lambda f: (f.span.line, f.code)),
        lines=attrib.lines,
        summary=summarize(ctx),
        line_maps=attrib.line_maps,
        notes=notes,
    )


def normalize_resources(resources: dict[str, Any], metadata: dict[str, Any], kernel: str) -> dict[str, Any]:
    """One shape for resources from the compile worker or from raw ptxas/cuobjdump reports."""
    out = dict(resources)
    for key, parser in (("res_usage", parse_res_usage), ("ptxas_log", parse_ptxas_verbose)):
        text = resources.get(key)
        if isinstance(text, str) and text:
            table = parser(text)
            entry = table.get(kernel) or (next(iter(table.values())) if table else {})
            for k, v in entry.items():
                out.setdefault(k, v)
    if "stack" not in out and "stack_frame" in out:
        out["stack"] = out["stack_frame"]
    out.setdefault("shared", as_int(metadata.get("shared"), 0))
    return out


def summarize(ctx: Context) -> dict[str, Any]:
    res = ctx.resources
    out: dict[str, Any] = {
        "target": ctx.target,
        "num_warps": ctx.num_warps,
        "num_stages": ctx.num_stages,
        "registers": res.get("registers"),
        "spill_stores": res.get("spill_stores"),
        "spill_loads": res.get("spill_loads"),
        "stack": res.get("stack"),
        "shared": res.get("shared"),
    }
    load_bits = [b for st in ctx.lines.values() for b in st.global_load_bits]
    if load_bits:
        out["main_load_bits"] = max(set(load_bits), key=load_bits.count)
        out["min_load_bits"] = min(load_bits)
    dots = {"tcgen05": 0, "wgmma": 0, "mma": 0, "fma_dot": 0}
    for st in ctx.lines.values():
        for cls in dots:
            dots[cls] += st.count("ttgir", cls)
    if any(dots.values()):
        out["dot_lowering"] = (
            next(name for name in ("tcgen05", "wgmma", "mma") if dots[name])
            if any(dots[n] for n in ("tcgen05", "wgmma", "mma"))
            else "fma"
        )
    if ctx.limits and res.get("registers"):
        occ = occupancy(ctx.limits, ctx.num_warps, as_int(res.get("registers"), 0), as_int(res.get("shared"), 0))
        out["occupancy"] = round(occ.fraction, 3)
        out["occupancy_limiter"] = occ.limiter
    return out
