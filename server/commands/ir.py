"""`tritonlens ir FILE --kernel K --stage S [--target T]`: one compiler stage, annotated with source lines.

Before the IR lines attributed to a source line it prints a marker such as
`// ---- add.py:23  offs = pid * BLOCK + tl.arange(0, BLOCK)` (`;` for LLVM IR), so the IR reads next to
the code that produced it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

from ...analysis.compiler.ascend.stages import HIVM_DUMPS
from ...analysis.compiler.stages import comment_of, dump_names, only_on, stage_names
from ...analysis.core.targets import (
    DEFAULT_ASCEND_TARGET,
    DEFAULT_CUDA_TARGET,
    compile_target_problem,
    is_ascend_target,
)
from ...analysis.kernels import parse_module
from ...analysis.source.lines import source_lines
from ..engine.diagnose import analyze_kernel, find_pyproject_overrides, launchable_kernels
from ..source_files import read_python_source
from .check_ir import make_runner, report_unavailable


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("ir", help="print one compiler stage of a kernel with source line markers")
    p.add_argument("path", metavar="FILE")
    p.add_argument("--kernel", required=True, help="name of the @triton.jit kernel")
    p.add_argument(
        "--stage",
        required=True,
        choices=[*stage_names(), *dump_names()],
        metavar="STAGE",
        help=f"{' | '.join(stage_names())} | hivm.<pass dump>: {', '.join(HIVM_DUMPS)}",
    )
    p.add_argument(
        "--target", default=None, help="sm_80 | sm_90 | sm_100 | ascend910b3 ... (default by stage)"
    )
    p.add_argument(
        "--variant", type=int, default=1, help="which specialization to show (1 = first that compiles)"
    )
    p.add_argument("--no-markers", action="store_true", help="print the stage text as the compiler wrote it")
    p.set_defaults(func=run)


def is_ascend_stage(stage: str) -> bool:
    return stage in only_on("ascend") or stage in dump_names("ascend")


def default_target(stage: str) -> str:
    return DEFAULT_ASCEND_TARGET if is_ascend_stage(stage) else DEFAULT_CUDA_TARGET


def annotate(
    ir_text: str, line_map: Iterable[tuple[int, int]], source: str, filename: str, comment: str
) -> str:
    """IR text with a marker before each run of IR lines attributed to the same source line.

    line_map holds (source line, IR line) pairs, both 1-based; IR lines mapped to several source lines take
    the first pair's line."""
    by_ir: dict[int, int] = {}
    for src_line, ir_line in line_map:
        by_ir.setdefault(ir_line, src_line)
    src_lines = source_lines(source)
    out: list[str] = []
    current: int | None = None
    for n, text in enumerate(ir_text.splitlines(), start=1):
        src = by_ir.get(n)
        if src is not None and src != current:
            code = src_lines[src - 1].strip() if 0 < src <= len(src_lines) else ""
            out.append(f"{comment} ---- {filename}:{src}  {code}".rstrip())
            current = src
        out.append(text)
    return "\n".join(out) + "\n"


def helper_callers(source: str, name: str) -> list[str] | None:
    """The kernels that inline `name` when it is a jit helper of this file (None when it is not one)."""
    module = parse_module(source)
    if not any(h.name == name for h in module.helpers):
        return None
    return [k.name for k in module.kernels if name in k.helpers]


def run(args: argparse.Namespace) -> int:
    path = Path(args.path)
    try:
        source = read_python_source(path)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"tritonlens ir: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    target = args.target or default_target(args.stage)
    problem = compile_target_problem(target)
    if problem:
        print(f"tritonlens ir: --target: {problem}", file=sys.stderr)
        return 2
    if is_ascend_stage(args.stage) and not is_ascend_target(target):
        print(
            f"tritonlens ir: the {args.stage} stage exists only for Ascend targets (e.g. --target ascend910b3)",
            file=sys.stderr,
        )
        return 2
    if args.stage in only_on("cuda") and is_ascend_target(target):
        print(
            f"tritonlens ir: the {args.stage} stage exists only for NVIDIA targets (e.g. --target sm_90)",
            file=sys.stderr,
        )
        return 2
    callers = helper_callers(source, args.kernel)
    if callers is not None:
        into = ", ".join(callers) or "the kernels that call it"
        print(
            f"tritonlens ir: {args.kernel} is a @triton.jit helper, compiled inline into {into}; "
            "pass one of those to --kernel",
            file=sys.stderr,
        )
        return 2
    if args.kernel not in launchable_kernels(source) and f"def {args.kernel}(" not in source:
        found = ", ".join(launchable_kernels(source)) or "none"
        print(f"tritonlens ir: no kernel {args.kernel!r} in {path} (kernels: {found})", file=sys.stderr)
        return 2
    project = find_pyproject_overrides(path)
    runner_config = project.get("runner") if isinstance(project.get("runner"), dict) else None
    runner = make_runner(runner_config)
    try:
        analysis = analyze_kernel(source, str(path), args.kernel, target, runner, overrides=project)
    finally:
        runner.close()
    if analysis.runner_unavailable:
        report_unavailable("ir", target, analysis)
        return 2
    compiled = [v for v in analysis.variants if v.ok]
    if not compiled:
        for f in analysis.findings:
            print(f"{path}:{f.span.line}:{f.span.col + 1}: {f.code} {f.message}", file=sys.stderr)
        reason = analysis.error or "no specialization compiled"
        print(f"tritonlens ir: {args.kernel} was not compiled for {target}: {reason}", file=sys.stderr)
        return 1
    if not 1 <= args.variant <= len(compiled):
        print(f"tritonlens ir: --variant must be 1..{len(compiled)}", file=sys.stderr)
        return 2
    variant = compiled[args.variant - 1]
    text = variant.stages.get(args.stage)
    if args.stage.startswith("hivm"):
        print(f"tritonlens ir: {hivm_note(variant.metadata)}", file=sys.stderr)
    if text is None:
        note = variant.metadata.get(args.stage) if isinstance(variant.metadata.get(args.stage), str) else ""
        have = ", ".join(variant.stages) or "none"
        print(
            f"tritonlens ir: no {args.stage} stage for {target} (stages: {have}){'; ' + note if note else ''}",
            file=sys.stderr,
        )
        return 2
    print(
        f"tritonlens ir: {args.kernel} [{variant.specialization.label}] {args.stage} for {target}",
        file=sys.stderr,
    )
    line_map = variant.line_maps.get(args.stage)
    if args.no_markers or not line_map:
        if not args.no_markers:
            why = variant.analysis_error or f"no source locations found in {args.stage}"
            print(f"tritonlens ir: printing without markers: {why}", file=sys.stderr)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return 0
    sys.stdout.write(annotate(text, line_map, source, path.name, comment_of(args.stage)))
    return 0


def hivm_note(metadata: dict) -> str:
    """What the hivm stage is and how far BiSheng's pipeline got (said with every hivm stage printed)."""
    info = metadata.get("hivm") if isinstance(metadata.get("hivm"), dict) else {}
    status = info.get("status")
    if status == "hivmc-missing":
        return (
            "hivm: bishengir-compile ran the whole HFusion/HIVM pipeline and stopped at hivmc (CANN, not installed): "
            "no device binary, no timing"
        )
    if status == "failed":
        return "hivm: bishengir-compile stopped inside the pipeline (see --stage hivm.log); no device binary"
    if status == "binary":
        return "hivm: bishengir-compile built a device binary (CANN present)"
    return f"hivm: {info.get('message') or 'bishengir-compile did not run (install ascendnpu-ir: scripts/bootstrap --all)'}"
