"""KernelBench form: launches inside ModelNew.forward take the dtypes and shapes of get_inputs(); a name
rebound from itself (`x = x.contiguous()`) still resolves to what it was before."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tritonlens.analysis.specialize.choose import specializations

HEADER = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n"

KERNEL = """
@triton.jit
def scale_kernel(x_ptr, idx_ptr, out_ptr, n, HEAD_DIM: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs, tl.load(x_ptr + i, mask=offs < n).to(tl.float16) * HEAD_DIM, mask=offs < n)
"""


def src(body: str) -> str:
    return HEADER + textwrap.dedent(KERNEL) + textwrap.dedent(body)


def only(source: str, kernel: str = "scale_kernel"):
    specs = specializations(source, kernel)
    assert len(specs) == 1, [s.label for s in specs]
    return specs[0]


FORWARD = """
class ModelNew(nn.Module):
    def forward(self, x, idx):
        x, idx = x.contiguous(), idx.contiguous()
        b, d = x.shape
        out = torch.empty_like(x)
        scale_kernel[(triton.cdiv(idx.numel(), 256),)](x, idx, out, idx.numel(), HEAD_DIM=d, BLOCK=256)
        return out
"""


def test_forward_takes_the_dtypes_and_shapes_of_get_inputs() -> None:
    source = src(FORWARD + """
N = 512
D = 48


def get_inputs():
    x = torch.randn(N, D, dtype=torch.float16)
    return [x, torch.randint(0, N * D, (N,), dtype=torch.int32)]


def get_init_inputs():
    return []
""")
    spec = only(source)
    assert spec.signature["x_ptr"] == "*fp16"
    assert spec.signature["out_ptr"] == "*fp16"  # empty_like of the input
    assert spec.signature["idx_ptr"] == "*i32"
    assert spec.constants["HEAD_DIM"] == 48  # `b, d = x.shape` of the (N, D) input
    assert "passed as x" in spec.provenance["x_ptr"]
    assert spec.missing == ()


def test_a_list_comprehension_makes_every_input_alike() -> None:
    source = src(FORWARD + """
def get_inputs():
    shape = (64, 16)
    return [torch.randn(shape, dtype=torch.bfloat16) for _ in range(2)]
""")
    spec = only(source)
    assert spec.signature["x_ptr"] == "*bf16" and spec.signature["idx_ptr"] == "*bf16"
    assert spec.constants["HEAD_DIM"] == 16  # `torch.randn(shape)` with shape bound to a tuple


def test_no_get_inputs_or_another_class_keeps_the_guess() -> None:
    plain = src(FORWARD)  # no get_inputs: nothing says what forward receives
    assert "fp16" not in only(plain).signature["x_ptr"]
    other = src(FORWARD.replace("ModelNew", "Helper") + """
def get_inputs():
    return [torch.randn(4, 4, dtype=torch.float16), torch.zeros(4, dtype=torch.int32)]
""")
    assert "fp16" not in only(other).signature["x_ptr"]


def test_self_rebinding_reads_the_earlier_binding() -> None:
    source = src("""
def run(n):
    x = torch.randn(n, dtype=torch.float16)
    x = x.contiguous()
    x = x.view(-1)
    idx = torch.arange(n)
    out = torch.empty(n, dtype=torch.float16)
    scale_kernel[(1,)](x, idx, out, n, HEAD_DIM=2, BLOCK=256)
""")
    spec = only(source)
    assert spec.signature["x_ptr"] == "*fp16"


def test_the_causal_attention_task_compiles_with_its_real_fp16_inputs() -> None:
    path = Path(__file__).resolve().parents[2] / "bench" / "attention" / "causal_attention.py"
    spec = only(path.read_text(), "causal_attention_kernel")
    assert {spec.signature[p] for p in ("q_ptr", "k_ptr", "v_ptr", "o_ptr")} == {"*fp16"}
    assert spec.constants["HEAD_DIM"] == 64 and spec.missing == ()


def test_weights_set_in_init_of_the_class_or_its_base_keep_their_dtype() -> None:
    source = src("""
K = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(K, dtype=torch.float16) / K**0.5)


class ModelNew(Model):
    def forward(self, idx):
        out = torch.empty(idx.numel(), dtype=torch.float16)
        scale_kernel[(1,)](self.table, idx, out, idx.numel(), HEAD_DIM=1, BLOCK=256)
        return out


def get_inputs():
    return [torch.randint(0, K, (100,), dtype=torch.int64)]
""")
    spec = only(source)
    assert spec.signature["x_ptr"] == "*fp16" and spec.signature["idx_ptr"] == "*i64"
    path = Path(__file__).resolve().parents[2] / "bench" / "matmul" / "matmul_bias_relu.py"
    spec = only(path.read_text(), "linear_relu_kernel")
    assert spec.signature["w_ptr"] == "*fp16" and spec.signature["bias_ptr"] == "*fp16"


def test_true_division_of_a_known_size_is_a_float() -> None:
    path = Path(__file__).resolve().parents[2] / "bench" / "loss" / "nll.py"
    spec = only(path.read_text(), "nll_kernel")  # `1.0 / m` with m = logp.shape[0] from get_inputs()
    assert spec.signature["inv_rows"] == "fp32" and spec.signature["target_ptr"] == "*i64"
