"""Check bench tasks on the CPU: each ModelNew against its Model on the task's smallest TEST_SHAPES entry.

Run under the CUDA runner environment's Python with TRITON_INTERPRET=1 (tests/bench/test_tasks_correct.py does):
    TRITON_INTERPRET=1 .envs/cuda/bin/python tests/bench/check_tasks.py [--all-shapes] bench/a.py bench/b.py ...
Prints one JSON object per task. Reuses the runner worker's size overrides, tolerances and poisoned allocations
(stdlib + torch + triton only, as a worker is), so this checks what `tritonlens bench` verification checks.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import math
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "ascend_runner" / "worker"))

from harness_models import apply_overrides  # noqa: E402
from harness_reference import Float64Reference  # noqa: E402
from harness_verify import compare, poisoned_allocations  # noqa: E402

SEED = 1234


def smallest(shapes: list[dict]) -> dict:
    return min(shapes, key=lambda s: math.prod(v for v in s.values() if isinstance(v, int)))


def form_problems(path: Path, module) -> list[str]:
    """What bench/README.md asks of a task beyond being correct."""
    problems = []
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    if "Known problems:" not in doc:
        problems.append("docstring has no 'Known problems:' list")
    shapes = getattr(module, "TEST_SHAPES", None)
    if not isinstance(shapes, list) or not shapes or not all(isinstance(s, dict) and s for s in shapes):
        problems.append("TEST_SHAPES is not a non-empty list of dicts")
        return problems
    for entry in shapes:
        for name, value in entry.items():
            if not isinstance(getattr(module, name, None), int) or not isinstance(value, int):
                problems.append(f"TEST_SHAPES key {name!r} is not an integer module global")
    return problems


def check(path: Path, which: str = "smallest") -> list[dict]:
    """One result per shape checked: the smallest TEST_SHAPES entry, or every entry (which="all")."""
    spec = importlib.util.spec_from_file_location(f"bench_task_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        return [{"task": str(path), "passed": False, "reason": f"cannot import: {type(exc).__name__}: {exc}"}]
    problems = form_problems(path, module)
    if problems:
        return [{"task": str(path), "passed": False, "reason": "; ".join(problems)}]
    shapes = module.TEST_SHAPES if which == "all" else [smallest(module.TEST_SHAPES)]
    return [check_shape(path, module, shape) for shape in shapes]


def check_shape(path: Path, module, shape: dict) -> dict:
    import torch

    started = time.perf_counter()
    result = {"task": str(path), "shape": shape, "passed": False, "reason": ""}
    try:
        apply_overrides([module], shape)
        torch.manual_seed(SEED)
        init = module.get_init_inputs()
        torch.manual_seed(SEED)
        ref_model = module.Model(*init)
        torch.manual_seed(SEED)
        new_model = module.ModelNew(*init)
        torch.manual_seed(SEED)
        inputs = module.get_inputs()
        with torch.no_grad():
            expected = Float64Reference(torch, ref_model).run(ref_model, inputs)
            with poisoned_allocations():
                got = new_model(*[x.clone() if hasattr(x, "clone") else x for x in inputs])
        # the interpreter's tl.dot multiplies in float32 (numpy): no TF32 here
        outcome = compare(got, expected.native, expected.exact, expected.accumulation)
        result.update(passed=outcome["passed"], reason=outcome["reason"], max_abs=outcome["max_abs"])
    except Exception as exc:  # one broken task must not hide the others
        result["reason"] = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-3)}"
    finally:
        result["seconds"] = round(time.perf_counter() - started, 2)
    return result


def main(argv: list[str]) -> int:
    which = "all" if "--all-shapes" in argv else "smallest"
    results = [r for p in argv if p != "--all-shapes" for r in check(Path(p), which)]
    for r in results:
        print(json.dumps(r), flush=True)
    return 0 if results and all(r["passed"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
