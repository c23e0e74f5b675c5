"""Runs KernelBench-form files under the Triton interpreter and compares ModelNew with Model at every TEST_SHAPE.

A standalone script for a runner environment's Python (`.envs/cuda/bin/python`): it never imports tritonlens.
Reads a JSON list of file paths on stdin; prints one JSON object per (file, shape) line on stdout. With
`--serve` it answers one such list per input line, each answer ending with `{"done": true}`, so a test session
pays the torch/triton import once.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import traceback

os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402

TOLERANCE = {torch.float16: 2e-2, torch.bfloat16: 5e-2, torch.float32: 1e-4, torch.float64: 1e-8}


def load(path: str, index: int):
    spec = importlib.util.spec_from_file_location(f"kbcheck_task_{index}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compare(expected, actual) -> float:
    if isinstance(expected, tuple | list):  # several outputs: each is compared
        if not isinstance(actual, tuple | list) or len(actual) != len(expected):
            raise AssertionError(f"{type(actual).__name__} output where {len(expected)} outputs are expected")
        return max((compare(e, a) for e, a in zip(expected, actual, strict=True)), default=0.0)
    expected, actual = torch.as_tensor(expected), torch.as_tensor(actual)
    if expected.shape != actual.shape:
        raise AssertionError(f"shape {tuple(actual.shape)} != expected {tuple(expected.shape)}")
    if torch.isnan(actual).any() and not torch.isnan(expected).any():
        raise AssertionError("NaN in the output")
    tol = TOLERANCE.get(expected.dtype, 1e-4)
    diff = (actual.double() - expected.double()).abs()
    bound = tol + tol * expected.double().abs()
    if (diff > bound).any():
        raise AssertionError(f"max error {diff.max().item():.3g} above tolerance {tol:g}")
    return float(diff.max().item()) if diff.numel() else 0.0


def check(path: str, index: int) -> list[dict]:
    results = []
    try:
        module = load(path, index)
    except Exception as exc:  # noqa: BLE001 - every failure is a result line
        return [{"file": path, "shape": None, "ok": False, "error": f"import: {exc!r}"}]
    for shape in getattr(module, "TEST_SHAPES", [{}]):
        record = {"file": path, "shape": shape, "ok": False}
        try:
            for name, value in shape.items():
                setattr(module, name, value)
            torch.manual_seed(0)
            inputs = module.get_inputs()
            torch.manual_seed(0)
            reference = module.Model(*module.get_init_inputs())
            torch.manual_seed(0)
            candidate = module.ModelNew(*module.get_init_inputs())
            with torch.no_grad():
                expected = reference(*[x.clone() for x in inputs])
                actual = candidate(*[x.clone() for x in inputs])
            record["max_error"] = compare(expected, actual)
            record["ok"] = True
        except Exception as exc:  # noqa: BLE001
            record["error"] = f"{type(exc).__name__}: {exc}"
            record["trace"] = traceback.format_exc(limit=3)[-1500:]
        results.append(record)
    return results


def main() -> int:
    if "--serve" not in sys.argv:
        for index, path in enumerate(json.load(sys.stdin)):
            for record in check(path, index):
                print(json.dumps(record), flush=True)
        return 0
    index = 0
    for line in sys.stdin:
        for path in json.loads(line):
            index += 1
            for record in check(path, index):
                print(json.dumps(record), flush=True)
        print(json.dumps({"done": True}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
