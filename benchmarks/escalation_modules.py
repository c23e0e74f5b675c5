"""How many modules one escalation passes through, and how many times it parses the buffer (a measurement for
issue 8, not a test; the parse count is pinned by tests/pipeline/test_one_parse.py).

One escalation = the steps a save runs for one kernel of one document version. Two modes, both reported:

  server       (the default) as the language server runs it: the version's level-1 result already exists (the
               keystroke's analysis, server/lsp/analysis.py `analyze_text`, run before tracing starts; the
               escalation feature returns early without it), then, traced, the calls the server makes:
               `CompileService.changed_kernels` (launchable kernels, the recompile digest of each),
               `CompileService.analyze` (the digest, pyproject overrides, analyze_kernel: specialization,
               compile-cache key, compile, compiler analysis) and the next publish's merge with the stored level-1
               findings (`visible_findings`: `apply_and_merge`). The LSP feature glue around these calls
               (escalation_lsp, compile_lsp, documents, lsp_server) is not counted, in either checkout.
  standalone   the measurement as first published (labels `before`/`after`): level-1 triage of the version
               traced too, then the kernels worth compiling, the recompile digest, analyze_kernel and `merge`
               with the kernel's level-1 findings. A CLI `check --level ir` runs this shape.

The runner answers with a committed compile (tests/fixtures), computing the local runner's cache key, so no
worker or compiler runs and only this process's code is counted. A warm-up escalation of another copy of the file
(another path) runs first, so module bodies and first-use imports are not what is measured.

How it counts:
  modules   distinct `tritonlens.*` modules with at least one function call during the escalation
            (sys.setprofile 'call' events; module bodies excluded: a first escalation of another copy of the
            file, under another path, imports everything and fills no cache the measured one could hit)
  parses    parses of the buffer text: calls of `analysis.source_chunks.parse_chunked` with the text (the kernel
            model's parse) plus `ast.parse` of the whole text from anywhere else; in server mode the keystroke's
            parse is not counted (it happened before the escalation)

Runs on any checkout with the same public names (main before and after issue 8):

    .venv/bin/python benchmarks/escalation_modules.py [--mode server|standalone|both] [--label after2]
        [--out benchmarks/results/escalation_modules.json]

Each row of the JSON names its mode; rows without one (labels before/after) are standalone.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


class _Runner:
    def __init__(self, kernel: str, result: dict[str, Any]) -> None:
        self.kernel, self.result = kernel, result

    def compile(self, req: Any, *, cancel: Any = None, timeout_s: Any = None, function_sources: Any = None) -> Any:
        from tritonlens.ascend_runner.cache import compile_key
        from tritonlens.ascend_runner.protocol import CompileResult

        compile_key(req, "fixture", function_sources)
        return CompileResult(ok=True, target=req.target, compiler="fixture", **self.result)

    def close(self) -> None:
        pass


def _cases() -> list[dict[str, Any]]:
    cuda = ROOT / "tests" / "fixtures" / "cuda" / "rmsnorm_rows_naive"
    meta = json.loads((cuda / "meta.json").read_text())
    resources = {
        "ptxas_log": (cuda / "ptxas_v").read_text(),
        "res_usage": (cuda / "res_usage").read_text(),
        "shared": meta["metadata"]["shared"],
    }
    stages = {s: (cuda / s).read_text() for s in ("ttir", "ttgir", "llir", "ptx", "sass") if (cuda / s).exists()}
    ascend = ROOT / "tests" / "fixtures" / "ascend"
    gather = json.loads((ascend / "gather.json").read_text())
    req = gather["request"]
    return [
        {
            "name": "cuda rmsnorm_rows_naive (sm_90)",
            "source": (ROOT / meta["corpus"]).read_text(),
            "file": Path(meta["corpus"]).name,
            "kernel": meta["kernel"],
            "target": "sm_90",
            "result": {"stages": stages, "metadata": meta["metadata"], "resources": resources},
        },
        {
            "name": f"ascend gather ({req['target']})",
            "source": (ROOT / req["path"]).read_text(),
            "file": Path(req["path"]).name,
            "kernel": req["kernel"],
            "target": req["target"],
            "result": {
                "stages": {s: (ascend / f"gather.{s}").read_text() for s in ("ttir", "ttadapter")},
                "metadata": gather["metadata"],
                "resources": gather["resources"],
            },
        },
    ]


def _engine() -> Any:
    """The levels 3-4 engine's public names, on this checkout or on one from before server/engine/diagnose."""
    try:
        from tritonlens.server.engine import diagnose
    except ImportError:  # a checkout from before the levels 3-4 engine left server/pipeline.py
        from tritonlens.server import compile_inputs, pipeline  # type: ignore[attr-defined]

        pipeline.compile_inputs_digest = compile_inputs.compile_inputs_digest
        return pipeline
    return diagnose


def level1(text: str, path: Path) -> list[Any]:
    """The version's level-1 findings as the keystroke's analysis leaves them in the server (`DocState`)."""
    try:
        from tritonlens.server.lsp.analysis import analyze_text
    except ImportError:
        from tritonlens.analysis.triage import triage

        return list(triage(text, str(path)).findings)
    return list(analyze_text(text, str(path), 1).findings)


def _escalate_standalone(path: Path, case: dict[str, Any], text: str, kept: list[Any] | None) -> int:
    from tritonlens.analysis.core.escalation import merge
    from tritonlens.analysis.triage import triage

    engine = _engine()
    kernel = case["kernel"]
    found = triage(text, str(path)).findings
    assert kernel in engine.launchable_kernels(text)
    engine.compile_inputs_digest(text, str(path), kernel)
    analysis = engine.analyze_kernel(text, str(path), kernel, case["target"], _Runner(kernel, case["result"]))
    assert analysis.error is None, analysis.error
    return len(merge([*(f for f in found if f.kernel == kernel), *analysis.findings]))


def _escalate_server(path: Path, case: dict[str, Any], text: str, kept: list[Any] | None) -> int:
    """CompileService.changed_kernels, CompileService.analyze's worker-thread call, then visible_findings'
    merge of every stored layer (server/features/compile.py, server/lsp/core.py), on a version whose level-1
    findings (`kept`) exist."""
    from tritonlens.analysis.core.escalation import apply_and_merge
    from tritonlens.analysis.core.settings import Settings

    assert kept is not None
    engine = _engine()
    kernel, where = case["kernel"], str(path)
    changed = [n for n in engine.launchable_kernels(text) if engine.compile_inputs_digest(text, where, n)]
    assert kernel in changed
    if hasattr(engine, "read_compile_inputs"):  # the digest and the values the compile reads, read once
        read = engine.read_compile_inputs(text, where, kernel)
        overrides, recorded = read.overrides, read.recorded
    else:
        engine.compile_inputs_digest(text, where, kernel)
        overrides, recorded = engine.find_pyproject_overrides(where), None
    analysis = engine.analyze_kernel(
        text, where, kernel, case["target"], _Runner(kernel, case["result"]), overrides=overrides, recorded=recorded
    )
    assert analysis.error is None, analysis.error
    return sum(f.kernel == kernel for f in apply_and_merge(Settings(), [*kept, *analysis.findings]))


MODES: dict[str, Callable[[Path, dict[str, Any], str, list[Any] | None], int]] = {
    "server": _escalate_server,
    "standalone": _escalate_standalone,
}


def _counting_parses(text: str) -> tuple[dict[str, int], Callable[[], None]]:
    from tritonlens.analysis.source import chunks as source_chunks

    counts = {"model_parses": 0, "other_whole_text_ast_parses": 0}
    inside = [0]
    real_chunked, real_parse = source_chunks.parse_chunked, ast.parse

    def chunked(source: str, *args: Any, **kwargs: Any) -> Any:
        counts["model_parses"] += source == text
        inside[0] += 1
        try:
            return real_chunked(source, *args, **kwargs)
        finally:
            inside[0] -= 1

    def parse(source: Any, *args: Any, **kwargs: Any) -> Any:
        if not inside[0] and source == text:
            counts["other_whole_text_ast_parses"] += 1
        return real_parse(source, *args, **kwargs)

    # Every importer of parse_chunked, whatever module the kernel model lives in.
    patched = [m for m in list(sys.modules.values()) if getattr(m, "parse_chunked", None) is real_chunked]
    for module in patched:
        module.parse_chunked = chunked  # type: ignore[attr-defined]
    ast.parse = parse  # type: ignore[assignment]

    def undo() -> None:
        for module in patched:
            module.parse_chunked = real_chunked  # type: ignore[attr-defined]
        ast.parse = real_parse  # type: ignore[assignment]

    return counts, undo


def measure(case: dict[str, Any], folder: Path, mode: str) -> dict[str, Any]:
    escalate = MODES[mode]
    warm = folder / "warm"
    warm.mkdir(parents=True, exist_ok=True)
    warm_text = case["source"] + "\n# warm-up copy\n"
    escalate(warm / case["file"], case, warm_text, level1(warm_text, warm / case["file"]))
    traced = folder / "traced"
    traced.mkdir(parents=True, exist_ok=True)
    path = traced / case["file"]
    path.write_text(case["source"])
    kept = level1(case["source"], path) if mode == "server" else None  # the keystroke's, not traced
    modules: set[str] = set()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_name != "<module>":
            name = frame.f_globals.get("__name__", "")
            if name.startswith("tritonlens."):
                modules.add(name)

    counts, undo = _counting_parses(case["source"])
    sys.setprofile(profile)
    try:
        findings = escalate(path, case, case["source"], kept)
    finally:
        sys.setprofile(None)
        undo()
    groups: dict[str, int] = {}
    for name in modules:
        parts = name.split(".")
        group = ".".join(parts[1:3]) if len(parts) > 3 else parts[1]  # analysis.triage, analysis.kernels, server
        groups[group] = groups.get(group, 0) + 1
    return {
        "case": case["name"],
        "mode": mode,
        "modules": len(modules),
        "groups": dict(sorted(groups.items())),
        "module_names": sorted(modules),
        **counts,
        "findings": findings,
    }


WHAT = {
    "modules": "distinct tritonlens.* modules with a function call during one escalation of one kernel "
    "(sys.setprofile; module bodies excluded; a warm-up escalation of another copy runs first)",
    "server": "the language server's escalation: level-1 result of the version already exists (computed "
    "before tracing, as the keystroke does); changed_kernels, analyze (digest, pyproject, analyze_kernel), "
    "apply_and_merge with the stored level-1 findings; LSP feature glue not counted",
    "standalone": "level-1 triage of the version traced too, then launchable_kernels, the digest, "
    "analyze_kernel, merge (the first published measurement; rows without a mode are this one)",
    "parses": "model_parses: parse_chunked calls with the buffer; other_whole_text_ast_parses: ast.parse of "
    "the whole buffer elsewhere (server mode: the keystroke's parse is not counted)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", default="current")
    parser.add_argument(
        "--mode", choices=[*MODES, "both"], default="server", help="server (default): level 1 already done"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "escalation_modules.json")
    parser.add_argument("--rows-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    import tempfile

    if args.rows_only:  # one mode in this process: memoised parses and triage caches stay per mode
        with tempfile.TemporaryDirectory() as tmp:
            rows = [measure(case, Path(tmp) / str(i), args.mode) for i, case in enumerate(_cases())]
        print(json.dumps(rows))
        return
    modes = list(MODES) if args.mode == "both" else [args.mode]
    rows = []
    for mode in modes:
        child = [sys.executable, __file__, "--mode", mode, "--rows-only"]
        rows += json.loads(subprocess.run(child, check=True, capture_output=True, text=True).stdout)
    for row in rows:
        print(
            f"{args.label:>8}  {row['mode']:<10}  {row['case']:<36} modules {row['modules']:>3}  "
            f"buffer parses: model {row['model_parses']}, other ast.parse {row['other_whole_text_ast_parses']}"
        )
        print(f"{'':>8}  by folder: {row['groups']}")
    data = json.loads(args.out.read_text()) if args.out.exists() else {}
    data["what"] = WHAT
    data[args.label] = rows
    args.out.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
