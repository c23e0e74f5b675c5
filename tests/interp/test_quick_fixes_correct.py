"""Every deterministic quick fix keeps the kernel correct: the fixed file gives the same output as the original,
both run by Triton's interpreter (TRITON_INTERPRET=1) in the upstream-Triton runner environment on small
shapes. The fixes: hoisting a loop-invariant load (TL106), multiplying by the reciprocal (TL135), num_warps at
a literal launch site (TL126; the interpreter ignores num_warps, so this checks the edit is a valid launch)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tritonlens.analysis.core.findings import Finding
from tritonlens.analysis.triage import triage

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".envs" / "cuda" / "bin" / "python"
EXAMPLE = ROOT / "examples" / "naive_softmax.py"

pytestmark = pytest.mark.skipif(not PYTHON.exists(), reason="cuda runner env (.envs/cuda) not installed")

RUN = """
import importlib.util, json, sys, torch
torch.manual_seed(0)
x = torch.randn(6, 100)
t = torch.tensor([1.7])
out = []
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location("m" + str(len(out)), path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    out.append(m.softmax(x, t))
# the example's own formula (its normalizer ignores the temperature): what the original must compute
m = x.max(dim=1, keepdim=True).values
ref = torch.exp((x - m) / 1.7) / torch.exp(x - m).sum(dim=1, keepdim=True)
print(json.dumps({"vs_original": [float((o - out[0]).abs().max()) for o in out],
                  "vs_torch": [float((o - ref).abs().max()) for o in out]}))
"""


def apply(text: str, f: Finding) -> str:
    assert f.fix is not None
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int) -> int:
        return starts[line - 1] + col if line <= len(lines) else starts[-1]

    out = text
    for e in sorted(f.fix.edits, key=lambda e: (e.span.line, e.span.col), reverse=True):
        out = out[: offset(e.span.line, e.span.col)] + e.new_text + out[offset(e.span.end_line, e.span.end_col) :]
    return out


@pytest.mark.parametrize("code", ["TL106", "TL135", "TL126"])
def test_fix_keeps_the_kernel_correct_and_removes_its_finding(code: str, tmp_path: Path) -> None:
    text = EXAMPLE.read_text()
    f = next(f for f in triage(text).findings if f.code == code)
    fixed = apply(text, f)
    assert fixed != text
    assert not [g for g in triage(fixed).findings if g.code == code]  # the finding goes
    (tmp_path / "original.py").write_text(text)
    (tmp_path / "fixed.py").write_text(fixed)
    proc = subprocess.run(
        [str(PYTHON), "-c", RUN, str(tmp_path / "original.py"), str(tmp_path / "fixed.py")],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["vs_torch"][0] < 1e-5  # the original is right, so the comparison means something
    assert result["vs_original"][1] < 1e-6 and result["vs_torch"][1] < 1e-5


def test_hoist_is_not_offered_where_it_would_change_the_program() -> None:
    text = EXAMPLE.read_text().replace(
        "        temperature = tl.load(temperature_ptr)\n",
        "        y = temperature if start > 0 else 1.0\n        temperature = tl.load(temperature_ptr)\n",
    )
    f = next(f for f in triage(text).findings if f.code == "TL106")
    assert f.fix is None  # `temperature` is read before the load in the loop: the first iteration would differ
