"""schedule-conv-implicit-gemm: direct convolutions written as nested loops over C_in and taps (2-D, stride 2,
padding 1) and as one flat K loop split with // and % (1-D, padding 2) become implicit GEMMs and stay correct
under the interpreter at sizes no block divides; depthwise and already-tiled drafts decline with the reason."""

from __future__ import annotations

from pathlib import Path

from recipe_helpers import check_correct, declined, rewrite, task

NAME = "schedule-conv-implicit-gemm"
ROOT = Path(__file__).resolve().parents[2]

NESTED_2D = task('''
@triton.jit
def conv_s2(x_ptr, w_ptr, b_ptr, y_ptr, cin, cout, h, w, ho, wo, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    b = pid // cout
    oc = pid % cout
    p = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    valid = p < ho * wo
    r = p // wo
    c = p % wo
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for ic in range(cin):
        for dy in range(3):
            for dx in range(3):
                iy = r * 2 + dy - 1
                ix = c * 2 + dx - 1
                ok = valid & (iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)
                xv = tl.load(x_ptr + ((b * cin + ic) * h + iy) * w + ix, mask=ok, other=0.0)
                wt = tl.load(w_ptr + ((oc * cin + ic) * 3 + dy) * 3 + dx)
                total += xv * wt
    # bias then ReLU, as the reference does
    res = tl.maximum(total + tl.load(b_ptr + oc), 0.0)
    tl.store(y_ptr + (b * cout + oc) * ho * wo + p, res, mask=valid)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(C_IN, C_OUT, 3, stride=2, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


class ModelNew(Model):
    def forward(self, x):
        x = x.contiguous()
        nb, cin, h, w = x.shape
        cout = self.conv.weight.shape[0]
        ho, wo = (h + 2 - 3) // 2 + 1, (w + 2 - 3) // 2 + 1
        y = torch.empty(nb, cout, ho, wo, dtype=x.dtype, device=x.device)
        grid = (nb * cout, triton.cdiv(ho * wo, 64))
        conv_s2[grid](x, self.conv.weight.contiguous(), self.conv.bias, y, cin, cout, h, w, ho, wo, BLOCK=64)
        return y


B, C_IN, C_OUT, H, W = 2, 5, 7, 9, 11
TEST_SHAPES = [{"B": 2, "C_IN": 5, "C_OUT": 7, "H": 9, "W": 11}, {"B": 3, "C_IN": 3, "C_OUT": 37, "H": 13, "W": 6}]


def get_inputs():
    return [torch.randn(B, C_IN, H, W)]
''')

FLAT_1D = task('''
@triton.jit
def conv1d_flat(x_ptr, w_ptr, y_ptr, C, O, L, LO, KS: tl.constexpr, BLOCK_L: tl.constexpr):
    n = tl.program_id(0) // O
    o = tl.program_id(0) % O
    t = tl.program_id(1) * BLOCK_L + tl.arange(0, BLOCK_L)
    acc = tl.zeros((BLOCK_L,), dtype=tl.float32)
    for k in range(0, C * KS):
        ci = k // KS
        tap = k % KS
        pos = t + tap - 2
        xk = tl.load(x_ptr + (n * C + ci) * L + pos, mask=(t < LO) & (pos >= 0) & (pos < L), other=0.0)
        wk = tl.load(w_ptr + (o * C + ci) * KS + tap)
        acc += xk * wk
    tl.store(y_ptr + (n * O + o) * LO + t, acc, mask=t < LO)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv1d(C_IN, C_OUT, 5, padding=2, bias=False)

    def forward(self, x):
        return self.conv(x)


class ModelNew(Model):
    def forward(self, x):
        x = x.contiguous()
        nb, c, length = x.shape
        o = self.conv.weight.shape[0]
        y = torch.empty(nb, o, length, dtype=x.dtype, device=x.device)
        grid = (nb * o, triton.cdiv(length, 32))
        conv1d_flat[grid](x, self.conv.weight.contiguous(), y, c, o, length, length, KS=5, BLOCK_L=32)
        return y


B, C_IN, C_OUT, L = 2, 3, 5, 37
TEST_SHAPES = [{"B": 2, "C_IN": 3, "C_OUT": 5, "L": 37}, {"B": 1, "C_IN": 9, "C_OUT": 33, "L": 70}]


def get_inputs():
    return [torch.randn(B, C_IN, L)]
''')


def test_both_styles_become_implicit_gemm(tmp_path) -> None:
    sources = {"nested_orig": NESTED_2D, "flat_orig": FLAT_1D}
    for style, (source, kernel) in {"nested": (NESTED_2D, "conv_s2"), "flat": (FLAT_1D, "conv1d_flat")}.items():
        ieee, tf32 = rewrite(NAME, source, kernel)
        assert "tl.dot(" in ieee.source and "GROUP_M" in ieee.source and "num_stages=3" in ieee.source
        assert 'input_precision="ieee"' in ieee.source and 'input_precision="tf32"' in tf32.source
        assert "TF32" in tf32.rationale
        sources[style] = ieee.source
    new = sources["nested"]
    # the draft's im2col index statements, padding masks and epilogue are its own
    assert "iy = r * 2 + dy - 1" in new and "ok = valid & (iy >= 0)" in new
    assert "# bias then ReLU, as the reference does" in new and "res = tl.maximum(total + tl.load(b_ptr + oc, mask=" in new
    check_correct(sources, tmp_path)


def test_bench_convolutions_rewritten_and_correct(tmp_path) -> None:
    sources = {}
    for stem, kernel in (("conv1d", "conv1d_kernel"), ("conv2d", "conv2d_kernel")):
        text = (ROOT / "bench" / "convolution" / f"{stem}.py").read_text(encoding="utf-8")
        sources[stem] = rewrite(NAME, text, kernel)[0].source
    check_correct(sources, tmp_path)


def test_declines_with_reasons() -> None:
    blind = ROOT / "bench" / "blind" / "convolution"
    depthwise = (blind / "depthwise_conv1d.py").read_text(encoding="utf-8")
    assert "depthwise or grouped" in declined(NAME, depthwise, "depthwise_conv1d_kernel")
    tiled = (blind / "conv2d_3x3.py").read_text(encoding="utf-8")
    assert "not perfect" in declined(NAME, tiled, "conv2d_3x3_kernel")
    extra = FLAT_1D.replace("        acc += xk * wk", "        acc += xk * wk\n        acc += xk")
    assert "updated once per step" in declined(NAME, extra, "conv1d_flat")
