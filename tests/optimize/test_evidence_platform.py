"""The optimize loop's evidence holds only the rules of the target's platform: an sm_90 run listed Ascend-only
findings (TL118, TL120) in its report's findings_before (found on microsoft/DeepSpeed's LayerNorm, check 3)."""

from __future__ import annotations

import pytest

from tritonlens.server.engine import diagnose
from tritonlens.server.engine.optimize.evidence import collect

SOURCE = '''
import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols < n, other=0.0)
    tl.store(y_ptr + cols, tl.where(cols < n, x * 2.0, 0.0), mask=cols < n)


def run(x):
    y = torch.empty_like(x)
    scale[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024, num_warps=4)
    return y
'''


@pytest.mark.parametrize("target,kept,left_out", [("sm_90", set(), {"TL118", "TL120"}),
                                                 ("ascend910b3", {"TL118", "TL120"}, set())])
def test_findings_follow_the_target(monkeypatch: pytest.MonkeyPatch, target: str, kept: set, left_out: set) -> None:
    monkeypatch.setattr(diagnose, "analyze_document", lambda *a, **k: [])  # levels 3-4 are not under test
    codes = {f.code for f in collect(SOURCE, "k.py", target, runner=None, backend="interpret").findings}
    assert kept <= codes and not (left_out & codes), codes
