"""How many modules one escalation passes through, and how many times it parses the buffer (a measurement for
issue 8, not a test; the parse count is pinned by tests/pipeline/test_one_parse.py).

One escalation = the steps a save runs for one kernel of one document version, in the language server's order:
level-1 triage of the version, the kernels worth compiling, the recompile check (compile_inputs_digest),
analyze_kernel (specialization, compile-cache key, compile, compiler analysis), and merging with level 1. The
runner answers with a committed compile (tests/fixtures), computing the local runner's cache key, so no worker
or compiler runs and only this process's code is counted.

How it counts:
  modules   distinct `tritonlens.*` modules with at least one function call during the escalation
            (sys.setprofile 'call' events; module bodies excluded: a first escalation of another copy of the
            file, under another path, imports everything and fills no cache the measured one could hit)
  parses    parses of the buffer text: calls of `analysis.source_chunks.parse_chunked` with the text (the kernel
            model's parse) plus `ast.parse` of the whole text from anywhere else

Runs on any checkout with the same public names (main before and after issue 8):

    .venv/bin/python benchmarks/escalation_modules.py [--label after] [--out benchmarks/results/escalation_modules.json]
"""

from __future__ import annotations

import argparse
import ast
import json
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


def _escalate(folder: Path, case: dict[str, Any], text: str) -> int:
    from tritonlens.analysis.escalation import merge
    from tritonlens.analysis.triage import triage
    try:
        from tritonlens.server.engine.diagnose import (
            analyze_kernel,
            compile_inputs_digest,
            launchable_kernels,
        )
    except ImportError:  # a checkout from before the levels 3-4 engine left server/pipeline.py
        from tritonlens.server.compile_inputs import compile_inputs_digest  # type: ignore[no-redef]
        from tritonlens.server.pipeline import analyze_kernel, launchable_kernels  # type: ignore[no-redef]

    path = folder / case["file"]
    path.write_text(text)
    kernel = case["kernel"]
    level1 = triage(text, str(path)).findings
    assert kernel in launchable_kernels(text)
    compile_inputs_digest(text, str(path), kernel)
    analysis = analyze_kernel(text, str(path), kernel, case["target"], _Runner(kernel, case["result"]))
    assert analysis.error is None, analysis.error
    return len(merge([*(f for f in level1 if f.kernel == kernel), *analysis.findings]))


def _counting_parses(text: str) -> tuple[dict[str, int], Callable[[], None]]:
    from tritonlens.analysis import source_chunks

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


def measure(case: dict[str, Any], folder: Path) -> dict[str, Any]:
    warm = folder / "warm"
    warm.mkdir(parents=True, exist_ok=True)
    _escalate(warm, case, case["source"] + "\n# warm-up copy\n")
    traced = folder / "traced"
    traced.mkdir(parents=True, exist_ok=True)
    modules: set[str] = set()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_name != "<module>":
            name = frame.f_globals.get("__name__", "")
            if name.startswith("tritonlens."):
                modules.add(name)

    counts, undo = _counting_parses(case["source"])
    sys.setprofile(profile)
    try:
        findings = _escalate(traced, case, case["source"])
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
        "modules": len(modules),
        "groups": dict(sorted(groups.items())),
        "module_names": sorted(modules),
        **counts,
        "findings": findings,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", default="current")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "escalation_modules.json")
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(case, Path(tmp) / str(i)) for i, case in enumerate(_cases())]
    for row in rows:
        print(
            f"{args.label:>8}  {row['case']:<36} modules {row['modules']:>3}  "
            f"buffer parses: model {row['model_parses']}, other ast.parse {row['other_whole_text_ast_parses']}"
        )
        print(f"{'':>8}  by folder: {row['groups']}")
    data = json.loads(args.out.read_text()) if args.out.exists() else {}
    data[args.label] = rows
    args.out.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
