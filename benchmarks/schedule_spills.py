"""Registers and spills of every schedule's kernel against the first draft's, from a real sm_90 compile on the CPU.

    .venv/bin/python benchmarks/schedule_spills.py bench/blind2 [bench/...] [--json OUT.json]

For each task file and each of its launchable kernels, every whole-kernel schedule (analysis/rewrite/schedules/)
is asked for its candidate; the draft and each candidate are compiled for sm_90 through the product's own compile
path (server.engine.diagnose.analyze_document on a local runner: the upstream-Triton environment, ptxas -v), and
the table prints registers / spill-store bytes / shared bytes of both. A candidate that spills where the draft did
not is marked SPILLS: on the GPU it is slower than the draft (measured: the flash schedule's carried pointer tiles,
3,456 B of spill stores, 0.14x). Constexprs no launch shows are the compile's guesses, printed beside each row:
a row is only as representative as those values. No GPU is used; nothing is timed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _facts(source: str, path: str, runner: Any) -> dict[str, dict[str, Any]]:
    from tritonlens.analysis.compiler.variants import variant_guesses
    from tritonlens.server.engine.diagnose import analyze_document
    from tritonlens.server.engine.optimize.gate import compile_facts

    out = {}
    for analysis in analyze_document(source, path, "sm_90", runner):
        facts = compile_facts(analysis)
        facts["guessed"] = sorted(variant_guesses(analysis.primary.specialization).values()) if analysis.primary \
            else []
        out[analysis.kernel] = facts
    return out


def _schedules() -> list[Any]:
    from tritonlens.analysis.rewrite.registry import all_recipes

    return [r for r in all_recipes() if r.name.startswith("schedule-")]


def survey(files: list[Path], runner: Any) -> list[dict[str, Any]]:
    from tritonlens.analysis.kernels import parse_module
    from tritonlens.analysis.rewrite.model import NotApplicable, RecipeContext

    rows = []
    for file in files:
        text = file.read_text(encoding="utf-8")
        try:
            module = parse_module(text)
        except SyntaxError:
            continue
        rel = str(file.relative_to(ROOT)) if file.is_relative_to(ROOT) else str(file)
        before: dict[str, dict[str, Any]] | None = None
        for kernel in [k.name for k in module.kernels if k.launched]:
            for recipe in _schedules():
                result = recipe.propose(RecipeContext(text, rel, kernel, module, (), "sm_90"))
                if isinstance(result, NotApplicable) or not result:
                    continue
                if before is None:
                    before = _facts(text, rel, runner)
                after = _facts(result[0].source, rel, runner)
                b, a = before.get(kernel, {}), after.get(kernel, {})
                spills = int(a.get("spill_stores") or 0) > int(b.get("spill_stores") or 0)
                rows.append({"task": rel, "kernel": kernel, "schedule": recipe.name, "draft": b, "candidate": a,
                             "spills": spills})
                print(_row(rows[-1]), flush=True)
    return rows


def _cell(f: dict[str, Any]) -> str:
    if f.get("error") or f.get("registers") is None:
        return f"not compiled ({str(f.get('error') or f.get('not_compiled') or '?')[:60]})"
    return f"{f['registers']} regs, {f.get('spill_stores') or 0} B spilled, {f.get('shared') or 0} B shared"


def _row(r: dict[str, Any]) -> str:
    guessed = ", ".join(dict.fromkeys(r["draft"].get("guessed", []) + r["candidate"].get("guessed", [])))
    mark = "SPILLS " if r["spills"] else ""
    return (f"{mark}{r['task']} {r['kernel']} {r['schedule']}: draft {_cell(r['draft'])} -> candidate "
            f"{_cell(r['candidate'])}" + (f" [guessed: {guessed}]" if guessed else ""))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("folders", nargs="+")
    p.add_argument("--json")
    args = p.parse_args()
    from tritonlens.ascend_runner.client import LocalRunner

    files = sorted(f for d in args.folders for f in (Path(d).rglob("*.py") if Path(d).is_dir() else [Path(d)]))
    runner = LocalRunner({"workers": 2, "timeout_s": 300})
    try:
        rows = survey([f.resolve() for f in files], runner)
    finally:
        runner.close()
    worse = [r for r in rows if r["spills"]]
    print(f"{len(rows)} schedule candidates over {len(files)} files; {len(worse)} spill where the draft does not")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
