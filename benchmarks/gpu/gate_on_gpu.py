"""The verification gate of issue 21 on a real GPU: an LLM's candidate confined, the reference in its own process.

    python benchmarks/gpu/gate_on_gpu.py OUT.json        (on the GPU machine; tritonlens importable)

Runs three LLM-origin candidates of a small KernelBench softmax through `Gate` on the cuda backend: the honest one
(must verify correct, confined, with the GPU visible inside the sandbox), one that patches `torch.softmax` so a
wrong result would compare equal in a shared process, and one that falls back to PyTorch without launching the
kernel. Prints and saves each verdict's stage, reason and sandbox record. The kernels come from the hostile-candidate
tests (tests/hardening/test_hostile_candidates.py), written for them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tests():
    sys.modules.setdefault("pytest", type(sys)("pytest"))  # the test module's decorators only: stubbed below
    import pytest  # noqa: F401

    stub = sys.modules["pytest"]
    if not hasattr(stub, "mark"):
        class _Mark:
            def __getattr__(self, _name: str):  # pytest.mark.X(...) and @pytest.mark.X
                return lambda *a, **k: (a[0] if a and callable(a[0]) and not k else (lambda f: f))

        stub.mark = _Mark()  # type: ignore[attr-defined]
        stub.fixture = lambda *a, **k: (a[0] if a and callable(a[0]) else (lambda f: f))  # type: ignore[attr-defined]
    spec = importlib.util.spec_from_file_location("hostile", ROOT / "tests/hardening/test_hostile_candidates.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def main(out_path: str) -> int:
    from tritonlens.ascend_runner.client import LocalRunner
    from tritonlens.server.engine.optimize.gate import Gate, GateConfig
    from tritonlens.server.engine.optimize.shapes import plan_shapes

    t = _tests()
    cases = {
        "honest": t.ORIGINAL,
        "torch.softmax patched": t.hostile(
            "torch.softmax = lambda x, dim=-1, **k: torch.zeros_like(x)\n", t.WRONG_AFTER_KERNEL),
        "PyTorch fallback, no kernel": t.hostile(forward="        return torch.softmax(x, dim=-1)\n"),
    }
    rows = []
    with tempfile.TemporaryDirectory() as tmp, LocalRunner({"workers": 1, "warm_up": False, "cache": False}) as runner:
        path = Path(tmp) / "kb_softmax.py"
        path.write_text(t.ORIGINAL)
        backend = os.environ.get("GATE_BACKEND", "cuda")
        cfg = GateConfig(backend=backend, target="sm_90", seeds=(0, 1), compile_check=False, repeats=3, rep_ms=20)
        gate = Gate(runner, cfg, plan_shapes(t.ORIGINAL), str(path), reference_source=t.ORIGINAL)
        for name, source in cases.items():
            started = time.monotonic()
            verdict = gate.check(t.ORIGINAL, t.llm(source, name)).verdict
            checks = verdict.details.get("checks") or []
            row = {
                "case": name, "accepted": verdict.accepted, "stage": verdict.stage, "reason": verdict.reason[:400],
                "checks_passed": sum(1 for c in checks if c.get("passed")), "checks": len(checks),
                "sandbox": verdict.details.get("sandbox"), "seconds": round(time.monotonic() - started, 1),
            }
            rows.append(row)
            print(json.dumps(row, default=str))
    Path(out_path).write_text(json.dumps(rows, indent=1, default=str))
    honest = rows[0]
    ok = honest["checks"] > 0 and honest["checks_passed"] == honest["checks"] and not any(r["accepted"] for r in rows[1:])
    print("gate on GPU:", "as expected" if ok else "NOT as expected")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else "gate_on_gpu.json"))
