"""TL402 on an integer compare that only exists inside a library call's lowering (tl.rand): live triton-ascend."""

from __future__ import annotations

from pathlib import Path

import pytest
from ascend_cases import KERNELS, ROOT, run_worker

from tritonlens.analysis.compiler.dispatch import analyze

pytestmark = pytest.mark.ascend_env


def test_compare_inside_tl_rand_is_not_blamed_on_the_source(ascend_python: Path) -> None:
    path = KERNELS / "dropout_kernel.py"
    source = path.read_text()
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "p": "fp32", "seed": "i32"}
    req = {
        "source": source,
        "path": str(path.relative_to(ROOT)),
        "kernel": "dropout_kernel",
        "signature": signature,
        "constants": {"BLOCK": 256},
        "divisibility": ["x_ptr", "out_ptr"],
        "target": "ascend910b3",
        "options": {},
    }
    result = run_worker(ascend_python, req)
    assert result["ok"], result["errors"]
    report = analyze(
        result["stages"],
        result["metadata"],
        result["resources"],
        req["target"],
        source,
        req["kernel"],
        req["path"],
    )
    lines = source.splitlines()
    rand_line = next(i for i, t in enumerate(lines, 1) if "tl.rand(" in t)
    mask_line = next(i for i, t in enumerate(lines, 1) if "x = tl.load" in t)
    by_line = {f.span.line: f for f in report.findings if f.code == "TL402"}
    assert rand_line in by_line  # the compiler evidence is real: cmpi on i32 tiles from tl.rand's lowering
    rand = by_line[rand_line].message
    assert "library call" in rand and "offs.to(tl.float32)" not in rand
    if mask_line in by_line:  # a compare the author wrote keeps the fp32 rewrite
        assert "offs.to(tl.float32)" in by_line[mask_line].message
