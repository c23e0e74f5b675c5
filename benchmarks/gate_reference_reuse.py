"""Seconds per verified candidate when the gate's verify jobs reuse the kept reference outputs (CPU, interpret).

    .venv/bin/python benchmarks/gate_reference_reuse.py [TASK.py] [--candidates N] [--json OUT.json]

Runs N candidates of one KernelBench task (the task's own text with a comment changed: correct, nothing to
optimize) through the real gate on a LocalRunner (the cuda environment's interpreter), one after another, and
prints each verify job's wall seconds and whether its reference outputs were computed or kept (sealed, secret checked):
first N jobs with reuse off (the gate sends no digest, as before), then N with it on (the first computes them, the
others reuse them). On a GPU the reference process also
pays torch's CUDA start and a float64 run per case: this measures only what the CPU shows.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("task", nargs="?", default=str(ROOT / "bench" / "scan" / "cumsum.py"))
    p.add_argument("--candidates", type=int, default=5)
    p.add_argument("--json")
    args = p.parse_args()
    from tritonlens.analysis.rewrite.model import Candidate
    from tritonlens.ascend_runner.client import LocalRunner
    from tritonlens.server.engine.optimize.gate import Gate, GateConfig
    from tritonlens.server.engine.optimize.shapes import plan_shapes

    source = Path(args.task).read_text(encoding="utf-8")
    rows = []
    with tempfile.TemporaryDirectory() as cache, LocalRunner({"cache_dir": cache, "workers": 1}) as runner:
        gate = Gate(runner, GateConfig(backend="interpret", compile_check=False), plan_shapes(source), args.task,
                    reference_source=source)
        for i in range(2 * args.candidates):
            reuse = i >= args.candidates
            if not reuse:
                gate._remember_reference = lambda reply: None  # type: ignore[method-assign]  # reuse off
            else:
                gate.__dict__.pop("_remember_reference", None)
            text = source.replace("import torch\n", f"import torch  # candidate {i}\n", 1)
            candidate = Candidate(source=text, origin="recipe", producer=f"same-{i}", kernel="", title=f"{i}",
                                  rationale="")
            started = time.perf_counter()
            verdict = gate.check(source, candidate).verdict
            rows.append({"candidate": i, "reuse": reuse, "seconds": round(time.perf_counter() - started, 2),
                         "reference": str(verdict.details.get("reference_outputs")), "accepted": verdict.accepted})
            print(f"candidate {i}: {rows[-1]['seconds']:.2f} s, reference {rows[-1]['reference'][:8]}, "
                  f"accepted {verdict.accepted}", flush=True)
    kept = [r["seconds"] for r in rows if r["reference"].startswith("kept")]
    computed = [r["seconds"] for r in rows if not r["reuse"]]
    summary = {"task": str(Path(args.task).relative_to(ROOT)) if Path(args.task).is_relative_to(ROOT) else args.task,
               "computed_median_s": round(statistics.median(computed), 2) if computed else None,
               "kept_median_s": round(statistics.median(kept), 2) if kept else None, "rows": rows}
    print(f"median seconds per candidate: reuse off (computed every job) {summary['computed_median_s']}, "
          f"kept {summary['kept_median_s']}")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
