"""Which tile does the flash schedule's kernel want on this card? Its candidate for each draft, swept over the
launch's literal BLOCK_M, BLOCK_N, num_warps and num_stages, timed against the draft and the draft's own Model
(PyTorch: SDPA or the eager formula) at the benchmark shape.

Issue 22: on an H100 the schedule's candidates for attention drafts that were already online-softmax `tl.dot`
kernels gained 0.99-1.19x and stayed at 0.63-0.79x of torch.compile; config search moved one knob at a time within
its budget (BLOCK_M 64 -> 128 alone was slower). This sweep says whether a joint move (tile and warps and stages)
closes the gap, so that the schedule's default and config search's moves can follow a measurement.

Every variant is checked against the Model first (fp32 comparison, the dtype's tolerance); times are the median of
triton.testing.do_bench_cudagraph of one forward call. Writes JSON to the path given (or $OUT/flash_tile_probe.json)
and prints a table. Needs tritonlens importable (the device scripts put it on PYTHONPATH), torch and triton.

    python3 benchmarks/gpu/flash_tile_probe.py DRAFT.py [DRAFT.py ...] [--out OUT.json] [--dry-run]

--dry-run (no GPU): builds every variant's text and checks it parses; nothing is timed. On the lent device (the
checkout's root; tritonlens from the working tree, as run_bench_h200.sh does):

    mkdir -p /tmp/tlpkg/tritonlens; for d in analysis server ascend_runner; do ln -sfn $PWD/$d /tmp/tlpkg/tritonlens/$d; done
    PYTHONPATH=/tmp/tlpkg python3 benchmarks/gpu/flash_tile_probe.py bench/blind6/attention/causal_attention_hd80_bf16.py \
      --out $OUT/flash_tile_probe.json

Each variant compiles once (a few seconds): 24 per draft.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

SCHEDULE = "schedule-attention-flash"
GRID = {"BLOCK_M": (64, 128), "BLOCK_N": (32, 64, 128), "num_warps": (4, 8), "num_stages": (2, 3)}
TOLERANCE = {"torch.float16": 2e-2, "torch.bfloat16": 3e-2, "torch.float32": 2e-3}


def candidate(source: str, path: str) -> tuple[str, str] | str:
    """(kernel, the flash schedule's first candidate text) for the draft, or why there is none."""
    from tritonlens.analysis.kernels import parse_module
    from tritonlens.analysis.rewrite.model import NotApplicable, RecipeContext
    from tritonlens.analysis.rewrite.registry import all_recipes

    module = parse_module(source)
    recipe = next(r for r in all_recipes() if r.name == SCHEDULE)
    reasons = []
    for kernel in (k.name for k in module.kernels if not k.is_helper):
        out = recipe.propose(RecipeContext(source, path, kernel, module, (), "sm_90", None))
        if isinstance(out, NotApplicable):
            reasons.append(f"{kernel}: {out.reason}")
        elif out:
            return kernel, out[0].source
    return "; ".join(reasons) or "no kernel"


def variants(text: str, kernel: str) -> list[tuple[dict[str, int], str]]:
    """The candidate with each combination of GRID's values written into its launch's literal keywords (a knob the
    launch does not pass as an int literal is left as it is and left out of the sweep)."""
    call = _launch(text, kernel)
    if call is None:
        return []
    literal = {k.arg: k.value for k in call.keywords if k.arg in GRID and isinstance(k.value, ast.Constant)
               and type(k.value.value) is int}
    knobs = [k for k in GRID if k in literal]
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    out = []
    for values in itertools.product(*(GRID[k] for k in knobs)):
        chosen = dict(zip(knobs, values, strict=True))
        edits = sorted(((starts[literal[k].lineno - 1] + literal[k].col_offset,
                         starts[literal[k].end_lineno - 1] + literal[k].end_col_offset, str(v))
                        for k, v in chosen.items()), reverse=True)
        new = text
        for begin, end, value in edits:
            new = new[:begin] + value + new[end:]
        out.append((chosen, new))
    return out


def _launch(text: str, kernel: str) -> ast.Call | None:
    for node in ast.walk(ast.parse(text)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == kernel):
            return node
    return None


def _load(text: str, name: str) -> Any:
    folder = tempfile.mkdtemp(prefix="flash-probe-")
    path = os.path.join(folder, f"{name}.py")
    Path(path).write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _time(module: Any, cls: str, args: list[Any]) -> tuple[float, Any]:
    import torch
    import triton

    model = getattr(module, cls)(*module.get_init_inputs()).cuda()
    with torch.no_grad():
        out = model(*args)
        torch.cuda.synchronize()
        ms = triton.testing.do_bench_cudagraph(lambda: model(*args))
    return ms, out


def probe(path: str, dry_run: bool) -> dict[str, Any]:
    source = Path(path).read_text(encoding="utf-8")
    found = candidate(source, path)
    if isinstance(found, str):
        return {"draft": path, "declined": found}
    kernel, text = found
    sweep = variants(text, kernel)
    row: dict[str, Any] = {"draft": path, "kernel": kernel, "variants": len(sweep)}
    if dry_run:
        for _, t in sweep:
            ast.parse(t)
        row["parsed"] = True
        return row
    import torch

    draft = _load(source, "draft")
    torch.manual_seed(0)
    args = [a.cuda() if isinstance(a, torch.Tensor) else a for a in draft.get_inputs()]
    model_ms, expected = _time(draft, "Model", args)
    draft_ms, _ = _time(draft, "ModelNew", args)
    tol = TOLERANCE.get(str(expected.dtype), 2e-2)
    row.update(model_ms=model_ms, draft_ms=draft_ms, results=[])
    for i, (chosen, t) in enumerate(sweep):
        entry: dict[str, Any] = {"config": chosen}
        try:
            ms, got = _time(_load(t, f"variant{i}"), "ModelNew", args)
            err = (got.float() - expected.float()).abs().max().item()
            entry.update(ms=ms, max_error=err, correct=err <= tol * max(1.0, expected.float().abs().max().item()),
                         vs_draft=draft_ms / ms, vs_model=model_ms / ms)
        except Exception as exc:  # a tile that does not fit shared memory, a compile error
            entry["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        row["results"].append(entry)
    return row


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("drafts", nargs="+")
    ap.add_argument("--out", default=os.path.join(os.environ.get("OUT", "."), "flash_tile_probe.json"))
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)
    rows = [probe(p, args.dry_run) for p in args.drafts]
    if not args.dry_run:
        import torch

        for row in rows:
            row["device"] = torch.cuda.get_device_name()
    Path(args.out).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    for row in rows:
        if "declined" in row:
            print(f"{row['draft']}: declined: {row['declined']}")
            continue
        if args.dry_run:
            print(f"{row['draft']}: {row['variants']} variants parse")
            continue
        print(f"{row['draft']}: draft {row['draft_ms']:.4f} ms, Model {row['model_ms']:.4f} ms")
        ok = sorted((r for r in row["results"] if r.get("correct")), key=lambda r: r["ms"])
        for r in ok[:5]:
            print(f"  {r['config']}: {r['ms']:.4f} ms  {r['vs_draft']:.2f}x draft  {r['vs_model']:.2f}x Model")
        bad = [r for r in row["results"] if not r.get("correct")]
        if bad:
            print(f"  {len(bad)} variant(s) failed or were wrong: {bad[0].get('error') or bad[0].get('max_error')}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
