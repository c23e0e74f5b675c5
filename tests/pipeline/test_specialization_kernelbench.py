"""KernelBench form: launches inside ModelNew.forward take the dtypes and shapes of get_inputs(); a name
rebound from itself (`x = x.contiguous()`) still resolves to what it was before."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tritonlens.analysis.compiler.variants import variant_guesses
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


def test_launches_in_helpers_of_forward_see_get_inputs_through_every_level() -> None:
    # forward -> outer -> wrapper -> the function that launches: each level's parameters come from the one above;
    # a cast with .to(dtype) keeps the factory's shape (the constexpr is a dimension of the cast tensor)
    source = src("""
def launch(x, idx):
    b, d = x.shape
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(idx.numel(), 256),)](x, idx, out, idx.numel(), HEAD_DIM=d, BLOCK=256)
    return out


def wrapper(a, i):
    return launch(a.contiguous(), i)


def outer(a, i):
    return wrapper(a, i)


class ModelNew(nn.Module):
    def forward(self, x, idx):
        return outer(x, idx)


N, D = 512, 96


def get_inputs():
    return [torch.randn(N, D).to(torch.float16), torch.randint(0, N * D, (N,), dtype=torch.int32)]
""")
    spec = only(source)
    assert spec.signature["x_ptr"] == "*fp16" and spec.signature["idx_ptr"] == "*i32"
    assert spec.constants["HEAD_DIM"] == 96
    assert "passed as a" in spec.provenance["x_ptr"] and "passed as x" in spec.provenance["x_ptr"]


def test_a_recursive_wrapper_is_not_followed_forever() -> None:
    source = src("""
def launch(x, idx, depth=0):
    if depth:
        return launch(x, idx, depth - 1)
    out = torch.empty_like(x)
    scale_kernel[(1,)](x, idx, out, idx.numel(), HEAD_DIM=x.shape[1], BLOCK=256)
    return out


if __name__ == "__main__":
    launch(torch.randn(8, 32, dtype=torch.bfloat16), torch.zeros(8, dtype=torch.int64))
""")
    spec = only(source)
    assert spec.signature["x_ptr"] == "*bf16" and spec.constants["HEAD_DIM"] == 32


def test_a_constexpr_computed_from_input_sizes_through_helpers_is_a_value() -> None:
    # BLOCK from next_power_of_2 of a product of unpacked dims, then a min/max/floordiv of it, two calls below
    # forward: every step is a fact of the inputs, none a guess
    source = src("""
def launch(x, idx):
    n, c, h, w = x.shape
    width = triton.next_power_of_2(h * w)
    rows = max(1, min(64, 2048 // triton.next_power_of_2(width)))
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(n * c, rows),)](x, idx, out, idx.numel(), HEAD_DIM=width, BLOCK=rows)
    return out


def wrapper(x, idx):
    x = x.contiguous()
    return launch(x, idx)


class ModelNew(nn.Module):
    def forward(self, x, idx):
        return wrapper(x, idx)


BATCH, CHANNELS, HEIGHT, WIDTH = 2, 3, 20, 30


def get_inputs():
    x = torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH, dtype=torch.float32)
    return [x, torch.zeros(BATCH, dtype=torch.int64)]
""")
    spec = only(source)
    assert spec.constants["HEAD_DIM"] == 1024 and spec.constants["BLOCK"] == 2  # 600 -> 1024; 2048 // 1024
    assert not spec.missing


def test_a_helper_call_at_the_launch_over_input_dims_is_a_value() -> None:
    source = src("""
class ModelNew(nn.Module):
    def forward(self, x, idx):
        out = torch.empty_like(x)
        scale_kernel[(x.shape[0],)](x, idx, out, x.shape[1], HEAD_DIM=triton.next_power_of_2(x.shape[1]),
                                    BLOCK=max(16, min(x.shape[0], 64)))
        return out


def get_inputs():
    return [torch.randn(37, 300), torch.zeros(37, dtype=torch.int32)]
""")
    spec = only(source)
    assert spec.constants["HEAD_DIM"] == 512 and spec.constants["BLOCK"] == 37
    assert "next_power_of_2() of known values" in spec.provenance["HEAD_DIM"]


def test_parameters_of_the_module_keep_their_dtype_when_scaled_by_a_math_scalar() -> None:
    source = src("""
import math


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.table = nn.Parameter(torch.randn(n, 8, dtype=torch.bfloat16) / math.sqrt(n))

    def forward(self, idx):
        return gather(self.table, idx, math.ceil(idx.numel() / 4))


def gather(table, idx, blocks):
    out = torch.empty_like(table)
    scale_kernel[(blocks,)](table, idx, out, blocks, HEAD_DIM=table.shape[1], BLOCK=4)
    return out


def get_inputs():
    return [torch.zeros(64, dtype=torch.int32)]
""")
    spec = only(source)
    assert spec.signature["x_ptr"] == "*bf16" and spec.signature["out_ptr"] == "*bf16"
    assert spec.signature["n"] == "i32"  # math.ceil: an int, never a float argument


def test_a_shape_variable_not_visible_leaves_the_rank_unknown() -> None:
    # `torch.randn(w_shape)` where w_shape is a local of __init__: any rank, so no stride of it is taken as 1
    source = HEADER + textwrap.dedent("""
    @triton.jit
    def k(w_ptr, out_ptr, s0, s1, s2, s3, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(w_ptr + offs * s0 + offs * s1 + offs * s2 + offs * s3))


    class ModelNew(nn.Module):
        def __init__(self, c):
            super().__init__()
            w_shape = (c, c, 3, 3)
            self.weight = nn.Parameter(torch.randn(w_shape))

        def forward(self, x):
            w = self.weight
            out = torch.empty_like(x)
            k[(1,)](w, out, w.stride(0), w.stride(1), w.stride(2), w.stride(3), BLOCK=16)
            return out


    def get_inputs():
        return [torch.randn(16)]
    """)
    spec = only(source, "k")
    assert spec.constants.get("s0") != 1  # the outermost stride of a 4-D weight is not 1
    assert spec.signature["w_ptr"] == "*fp32"


def test_a_dtype_taken_from_another_tensor_is_that_tensors_dtype_or_not_visible() -> None:
    source = src("""
class ModelNew(nn.Module):
    def forward(self, x, idx):
        out = torch.empty(x.shape[0], dtype=x.dtype)
        scale_kernel[(1,)](x, idx, out, 8, HEAD_DIM=4, BLOCK=8)
        return out


def get_inputs():
    return [torch.randn(8, 4).to(torch.bfloat16), torch.zeros(8, dtype=torch.int32)]
""")
    assert only(source).signature["out_ptr"] == "*bf16"  # dtype=x.dtype with x bf16, not torch's default
    hidden = HEADER + textwrap.dedent(KERNEL) + textwrap.dedent("""
    def run(x, idx, like):
        out = torch.empty(x.shape[0], dtype=like.dtype)
        scale_kernel[(1,)](x, idx, out, 8, HEAD_DIM=4, BLOCK=8)
    """)
    spec = only(hidden)
    assert "not visible" in spec.provenance["out_ptr"] and "out_ptr" in variant_guesses(spec)  # named, not fp32


def test_a_cast_to_another_tensors_dtype_takes_that_dtype() -> None:
    source = src("""
class ModelNew(nn.Module):
    def forward(self, x, idx):
        like = torch.empty(4, dtype=torch.float16)
        dt = like.dtype
        y = x.to(like)
        out = torch.empty(x.shape[0], dtype=dt)
        scale_kernel[(1,)](y, idx, out, 8, HEAD_DIM=4, BLOCK=8)
        return out


def get_inputs():
    return [torch.randn(8, 4), torch.zeros(8, dtype=torch.int32)]
""")
    spec = only(source)
    assert spec.signature["x_ptr"] == "*fp16" and spec.signature["out_ptr"] == "*fp16"


def test_a_cast_to_a_name_not_in_sight_is_a_named_guess_not_the_factorys_dtype() -> None:
    source = src("""
class ModelNew(nn.Module):
    def __init__(self, dtype=torch.bfloat16):
        super().__init__()
        self.table = nn.Parameter(torch.randn(64, 8).to(dtype))

    def forward(self, idx):
        out = torch.empty(idx.shape[0], dtype=torch.float16)
        scale_kernel[(1,)](self.table, idx, out, 8, HEAD_DIM=8, BLOCK=8)
        return out


def get_inputs():
    return [torch.zeros(8, dtype=torch.int32)]
""")
    spec = only(source)
    assert "x_ptr" in variant_guesses(spec) and "not visible" in spec.provenance["x_ptr"]  # never a silent fp32
