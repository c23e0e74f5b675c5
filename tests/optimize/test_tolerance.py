"""The gate's tolerance (ascend_runner/worker/harness_tolerance.py, harness_reference.py, harness_verify.compare),
run under the cuda environment's Python on the CPU.

Correct kernels that used to be rejected must pass: a long fp32 scan summed in another order than PyTorch's
(a running float32 sum, against PyTorch's CPU scan that accumulates in double), a
reference that itself rounds (cuDNN's TF32 convolution, simulated by rounding its inputs to TF32), a TF32 dot the
TTIR asks for. Wrong kernels must still fail: an off-by-one, a 1e-3 relative scale, a NaN. Every record names
the tolerance it used and why."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "ascend_runner" / "worker"
PYTHON = ROOT / ".envs" / "cuda" / "bin" / "python"

pytestmark = [
    pytest.mark.cuda_env,
    pytest.mark.skipif(not PYTHON.exists(), reason="cuda runner env (.envs/cuda) not installed"),
]

# Models shared by the scenarios. `to_tf32` keeps float32's exponent and the top 10 mantissa bits (round to
# nearest), as tensor cores read a float32 operand in TF32 mode.
PRELUDE = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import torch
    from harness_reference import Float64Reference
    from harness_tolerance import DotPrecision, dot_precision
    from harness_verify import compare

    def to_tf32(x):
        if x.dtype != torch.float32:
            return x
        bits = x.view(torch.int32)
        return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)

    class Scan(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum(x, dim=1)

    def sequential_scan(x):  # the first-draft kernel's order: one float32 running sum per row
        import numpy as np
        return torch.from_numpy(np.cumsum(x.numpy(), axis=1, dtype=np.float32))

    class Tf32Conv(torch.nn.Module):  # PyTorch as it runs on the GPU: cuDNN rounds conv inputs to TF32
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv1d(64, 32, 7)

        def forward(self, x):
            w = self.conv.weight
            return torch.nn.functional.conv1d(to_tf32(x), to_tf32(w), self.conv.bias)

    class Mm(torch.nn.Module):
        def forward(self, a, b):
            return a @ b

    def check(model, args, got, dot=None):
        with torch.no_grad():
            ref = Float64Reference(torch, model).run(model, args)
        out = compare(got, ref.native, ref.exact, ref.accumulation, dot or DotPrecision())
        out["reference"] = ref.kind
        out["accumulation"] = ref.accumulation.to_dict()
        return out

    torch.manual_seed(0)
    """
)


def run(body: str) -> dict[str, Any]:
    proc = subprocess.run(
        [str(PYTHON), "-c", PRELUDE + textwrap.dedent(body), str(WORKER)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


SCAN = """
x = torch.randn(8, 65536)
model = Scan()
with torch.no_grad():
    good = sequential_scan(x)
exclusive = torch.cat([torch.zeros(8, 1), good[:, :-1]], dim=1)
nan = good.clone(); nan[3, 777] = float("nan")
old_ref = torch.cumsum(x, dim=1)
old_fixed = bool(((good.double() - old_ref.double()).abs() <= 1e-4 + 1e-4 * old_ref.double().abs()).all())
print(json.dumps({
    "good": check(model, [x], good), "exclusive": check(model, [x], exclusive),
    "scaled": check(model, [x], good * (1 + 1e-3)), "nan": check(model, [x], nan),
    "old_fixed_tolerance_passed": old_fixed,
}))
"""


def test_long_fp32_scan_in_another_order_passes_and_wrong_scans_fail():
    out = run(SCAN)
    assert out["old_fixed_tolerance_passed"] is False  # the case the fixed 1e-4 table falsely rejected
    good = out["good"]
    assert good["passed"], good["reason"]
    assert good["accumulation"] == {"k": 65536, "op": "aten.cumsum"}
    assert good["reference"] == "float64"
    basis = good["tolerance"]["basis"]
    assert "K=65536 (aten.cumsum)" in basis and "float32" in basis and "max|ref|" in basis
    for wrong, words in (("exclusive", "outside atol"), ("scaled", "outside atol"), ("nan", "NaN")):
        assert not out[wrong]["passed"], wrong
        assert words in out[wrong]["reason"], out[wrong]["reason"]
    assert "K=65536" in out["exclusive"]["reason"]  # the failure says which bound it broke


CONV = """
x = torch.randn(4, 64, 2048)
model = Tf32Conv()
w, bias = model.conv.weight.detach(), model.conv.bias.detach()
with torch.no_grad():  # the kernel: an exact fp32 convolution written as unfold + matmul (another order)
    cols = x.unfold(2, 7, 1)  # (B, C_in, L_out, 7)
    good = torch.einsum("bclk,ock->bol", cols, w) + bias[None, :, None]
    native = model(x)
old_fixed = bool(((good.double() - native.double()).abs() <= 1e-4 + 1e-4 * native.double().abs()).all())
print(json.dumps({
    "good": check(model, [x], good), "old_fixed_tolerance_passed": old_fixed,
    "scaled": check(model, [x], good * (1 + 1e-3)),
    "off_by_one": check(model, [x], torch.roll(good, 1, dims=2)),
}))
"""


def test_reference_that_rounds_to_tf32_no_longer_rejects_an_exact_kernel():
    out = run(CONV)
    assert out["old_fixed_tolerance_passed"] is False  # the reference's own TF32 error broke the old bound
    good = out["good"]
    assert good["passed"], good["reason"]
    assert good["accumulation"] == {"k": 64 * 7, "op": "aten.convolution"}
    assert good["reference_error"] > 1e-4 > good["max_abs"]  # the error was the reference's, not the kernel's
    assert not out["scaled"]["passed"] and not out["off_by_one"]["passed"]


TTIR = (ROOT / "tests" / "fixtures" / "cuda" / "matmul_small_tile" / "ttir").read_text()

DOT = """
ttir = sys.stdin.read()
a, b = torch.randn(256, 1024), torch.randn(1024, 128)
tf32_kernel = to_tf32(a) @ to_tf32(b)  # what a float32 tl.dot computes on tensor cores
evidence = dot_precision([{"kernel": "matmul_kernel", "ttir": ttir, "uses_dot": True}], "cuda")
ieee = dot_precision([{"kernel": "k", "ttir": ttir.replace(", inputPrecision = tf32", ""), "uses_dot": True}], "cuda")
interp = dot_precision([{"kernel": "k", "uses_dot": True}], "interpret")
source = dot_precision([{"kernel": "k", "uses_dot": True}], "cuda")
source_ieee = dot_precision([{"kernel": "k", "uses_dot": True, "dot_ieee_in_source": True}], "cuda")
print(json.dumps({
    "with_evidence": check(Mm(), [a, b], tf32_kernel, evidence),
    "without_evidence": check(Mm(), [a, b], tf32_kernel),
    "wrong_under_tf32": check(Mm(), [a, b], tf32_kernel * (1 + 1e-2), evidence),
    "evidence": [evidence.tf32, evidence.evidence], "ieee": ieee.tf32, "interpret": interp.tf32,
    "source": [source.tf32, source.evidence], "source_ieee": source_ieee.tf32,
}))
"""


def test_tf32_dot_is_judged_with_tf32_epsilon_only_on_evidence():
    proc = subprocess.run(
        [str(PYTHON), "-c", PRELUDE + textwrap.dedent(DOT), str(WORKER)],
        input=TTIR, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["evidence"] == [True, "TTIR of matmul_kernel: tt.dot inputPrecision = tf32"]
    assert out["ieee"] is False and out["interpret"] is False and out["source_ieee"] is False
    assert out["source"][0] is True and "no TTIR" in out["source"][1]
    good = out["with_evidence"]
    assert good["passed"], good["reason"]
    assert "TF32 inputs (TTIR of matmul_kernel" in good["tolerance"]["basis"]
    assert good["accumulation"]["k"] == 1024
    assert not out["without_evidence"]["passed"]  # float32 epsilon: TF32 rounding is far outside it
    assert not out["wrong_under_tf32"]["passed"]


INFINITIES = """
class Masked(torch.nn.Module):  # causal scores: the masked entries are -inf in the reference and the kernel
    def forward(self, s):
        return s.masked_fill(torch.triu(torch.ones_like(s, dtype=torch.bool), 1), float("-inf"))

s = torch.randn(64, 64)
model = Masked()
with torch.no_grad():
    good = model(s)
finite_fill = good.clone(); finite_fill[0, 5] = -65504.0  # a masked entry the kernel filled with a finite value
unmasked = good.clone(); unmasked[3, 2] = float("-inf")  # a kept entry the kernel masked
flipped = good.clone(); flipped[0, 7] = float("inf")
print(json.dumps({"good": check(model, [s], good), "finite_fill": check(model, [s], finite_fill),
                  "unmasked": check(model, [s], unmasked), "flipped": check(model, [s], flipped)}))
"""


def test_equal_infinities_agree_and_any_other_infinity_fails():
    out = run(INFINITIES)
    assert out["good"]["passed"], out["good"]["reason"]  # -inf - -inf is NaN: it used to fail every masked entry
    for wrong in ("finite_fill", "unmasked", "flipped"):
        assert not out[wrong]["passed"], wrong
