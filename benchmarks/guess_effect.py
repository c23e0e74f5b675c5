"""What "no finding rests on a guess" (issue 24 item 2) changes on the held-out IR set: per kernel, the level 3-4
findings shown (and at warning or above), those withheld because they rest on a guessed value (the TL002 hint's
`withheld`), the innermost strides compiled as the launcher's constant 1, and whether the kernel still compiles.

Runs benchmarks/precision/ir_coverage.py of the checkout the interpreter imports tritonlens from (so the same
script measures the product before and after a change: run it with each checkout's venv), wrapping its
analyze_kernel to read each analysis; writes the rows and totals as JSON.

Measured 2026-12-01 on heldout_manifest.csv (52 kernels sampled, corpus materialised with corpus.py into a temporary
cache): /work/main as checked out then (4a73e1b, with the integrator's uncommitted edits) 43 compiled, 180 TL3xx/TL4xx shown, 23 at warning; branch `guesses` 44 compiled,
25 shown, 2 at warning (TL307 on lines that read no guess), 145 withheld as resting on a guess (listed by TL002),
63 innermost strides of 13 kernels compiled as 1 (TL301: 20 -> 2, both withheld).
results/guess_effect_heldout_{before,after}.json.

    .venv/bin/python benchmarks/guess_effect.py --cache DIR --manifest benchmarks/precision/heldout_manifest.csv \
        --out benchmarks/results/guess_effect_heldout_after.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import tritonlens.analysis as analysis

ROOT = Path(analysis.__file__).resolve().parents[1]
LEVELS_34 = ("TL3", "TL4")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", required=True)
    p.add_argument("--manifest", required=True)
    p.add_argument("--mirror", default="/work/.mirror")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    spec = importlib.util.spec_from_file_location("ir_coverage", ROOT / "benchmarks" / "precision" / "ir_coverage.py")
    assert spec and spec.loader
    coverage = importlib.util.module_from_spec(spec)
    sys.modules["ir_coverage"] = coverage
    spec.loader.exec_module(coverage)
    from tritonlens.server.engine import diagnose

    original = diagnose.analyze_kernel  # ir_coverage imports it from there when it runs
    rows: list[dict[str, Any]] = []

    def wrapped(source: str, path: str, kernel: str, target: str, runner: Any, **kw: Any) -> Any:
        a = original(source, path, kernel, target, runner, **kw)
        compiler = [f for f in a.findings if f.code.startswith(LEVELS_34)]
        provenance = a.primary.specialization.provenance if a.primary is not None else {}
        rows.append({
            "path": path.split("/trees/")[-1], "kernel": kernel, "analyzed": a.primary is not None,
            "shown": [f.code for f in compiler],
            "warnings": [f.code for f in compiler if int(f.severity) <= 2],
            "withheld": [w["code"] for f in a.findings if f.code == "TL002" for w in f.data.get("withheld") or []],
            "unit_strides": [k for k, why in provenance.items() if "innermost stride of a contiguous" in why],
        })
        return a

    diagnose.analyze_kernel = wrapped  # type: ignore[assignment]
    raw = Path(tempfile.mkdtemp(prefix="guess-effect-")) / "ir_coverage.json"
    sys.argv = ["ir_coverage.py", "--cache", args.cache, "--mirror", args.mirror, "--manifest", args.manifest,
                "--out", str(raw)]
    coverage.main()
    totals = {key: sum(len(r[key]) for r in rows) for key in ("shown", "warnings", "withheld", "unit_strides")}
    totals.update(kernels=len(rows), analyzed=sum(r["analyzed"] for r in rows), checkout=str(ROOT))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"totals": totals, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(totals))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
