"""Facts about torch.nn layer parameters a wrapper passes to a kernel: `self.conv.weight` has PyTorch's layout
for the layer (ConvNd: (out, in // groups, *k); ConvTransposeNd: (in, out // groups, *k); Linear: (out, in)), the
dtype a cast on the layer gives, and the sizes the constructor gets from get_init_inputs(), read in __init__'s
own scope (a forward local of the same name does not stand in for it)."""

from __future__ import annotations

import textwrap

from tritonlens.analysis.specialize.choose import specializations

KERNEL = """
import torch
import torch.nn as nn
import triton
import triton.language as tl

CI, CO = 8, 12


@triton.jit
def k(x_ptr, w_ptr, s0, s1, s2, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(w_ptr + offs * s0 + s1 + s2))
"""


def _only(body: str) -> object:
    [spec] = specializations(KERNEL + textwrap.dedent(body), "k")
    return spec


def test_a_grouped_half_conv_weight_has_pytorchs_shape_from_the_init_inputs() -> None:
    spec = _only("""
        class ModelNew(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.conv = nn.Conv2d(cin, cout, 3, padding=1, groups=2, bias=False).half()

            def forward(self, x):
                cout = 5  # a forward local of the constructor's name: not the layer's size
                w = self.conv.weight
                k[(1,)](x, w, w.stride(0), w.stride(1), w.stride(2), BLOCK=16)
                return x

        def get_inputs():
            return [torch.randn(16)]

        def get_init_inputs():
            return [CI, CO]
        """)
    assert spec.signature["w_ptr"] == "*fp16"
    # (12, 8 // 2, 3, 3) contiguous: strides 36, 9, 3
    assert (spec.shown["s0"], spec.shown["s1"], spec.shown["s2"]) == (36, 9, 3)


def test_linear_and_transposed_conv_weights() -> None:
    linear = _only("""
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(CI, CO, bias=False)

            def forward(self, x):
                k[(1,)](x, self.proj.weight, self.proj.weight.stride(0), 1, 1, BLOCK=16)
                return x

        def get_inputs():
            return [torch.randn(16)]

        def get_init_inputs():
            return []
        """)
    assert linear.signature["w_ptr"] == "*fp32" and linear.shown["s0"] == 8  # (out, in): stride(0) = in
    cast = _only("""
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(CI, CO, bias=False, dtype=torch.float32).half()  # the cast applies last

            def forward(self, x):
                k[(1,)](x, self.proj.weight, 1, 1, 1, BLOCK=16)
                return x

        def get_inputs():
            return [torch.randn(16)]

        def get_init_inputs():
            return []
        """)
    assert cast.signature["w_ptr"] == "*fp16"
    transposed = _only("""
        class ModelNew(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.up = nn.ConvTranspose1d(cin, cout, kernel_size=4, stride=2, padding=1)

            def forward(self, x):
                w = self.up.weight
                k[(1,)](x, w, w.stride(0), w.stride(1), 2, BLOCK=16)
                return x

        def get_inputs():
            return [torch.randn(16)]

        def get_init_inputs():
            return [CI, CO]
        """)
    assert (transposed.shown["s0"], transposed.shown["s1"]) == (48, 4)  # (in, out, k) = (8, 12, 4)


def test_a_constructor_argument_nothing_gives_stays_unknown() -> None:
    spec = _only("""
        class Wrapper(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.conv = nn.Conv1d(cin, cout, 3)

            def forward(self, x):
                cin = 7
                w = self.conv.weight
                k[(1,)](x, w, w.stride(0), w.stride(1), 1, BLOCK=16)
                return x
        """)
    assert "s0" not in spec.shown and spec.shown.get("s1") == 3  # (cout, cin, 3): only the taps are known


def test_a_convs_dilation_padding_and_kernel_size_entries() -> None:
    source = KERNEL.replace("def k(x_ptr, w_ptr, s0, s1, s2, BLOCK: tl.constexpr):",
                            "def k(x_ptr, w_ptr, s0, s1, s2, BLOCK: tl.constexpr, DIL: tl.constexpr = 1, "
                            "PAD: tl.constexpr = 0, KS: tl.constexpr = 1, STEP: tl.constexpr = 1):") + textwrap.dedent("""
        class ModelNew(nn.Module):
            def __init__(self, cin, cout, dilation):
                super().__init__()
                self.conv = nn.Conv1d(cin, cout, kernel_size=5, dilation=dilation, padding=2 * dilation)

            def forward(self, x):
                k[(1,)](x, self.conv.weight, 1, 1, 1, BLOCK=16, DIL=self.conv.dilation[0],
                        PAD=self.conv.padding[0], KS=self.conv.kernel_size[0], STEP=self.conv.stride[0])
                return x

        def get_inputs():
            return [torch.randn(16)]

        def get_init_inputs():
            return [CI, CO, 3]
        """)
    [spec] = specializations(source, "k")
    assert {n: spec.constants[n] for n in ("DIL", "PAD", "KS", "STEP")} == {"DIL": 3, "PAD": 6, "KS": 5, "STEP": 1}
