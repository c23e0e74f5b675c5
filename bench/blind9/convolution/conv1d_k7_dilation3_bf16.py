"""conv1d with dilation: torch.nn.functional.conv1d(x, W, dilation=3, padding=9) for x (N, C, L) bf16,
W (Cout, Cin, 7), no bias; output (N, Cout, L) (same length).
Known problems:
- fixed block sizes (64 Cout x 128 L x 64 Cin), no autotune
- weight tile loaded with stride 7 along Cin (uncoalesced); no pre-packed weight layout
- input tile reloaded from global/L2 for each of the 7 taps instead of being reused from shared memory
- per-element boundary masks on every input load for the padding
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 16
C = 256
L = 4096
COUT = 256
KSIZE = 7
DILATION = 3
PADDING = 9


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(COUT, C, KSIZE, dtype=torch.bfloat16) * (1.0 / (C * KSIZE) ** 0.5))

    def forward(self, x):
        return torch.nn.functional.conv1d(x, self.weight, dilation=DILATION, padding=PADDING)


@triton.jit
def _conv1d_dil_kernel(
    x_ptr, w_ptr, y_ptr,
    CI, CO, LIN, LOUT,
    sxn, sxc, swo, swi, syn, syc,
    KS: tl.constexpr, DIL: tl.constexpr, PAD: tl.constexpr,
    BLOCK_CO: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_CI: tl.constexpr,
    DOT_FP32: tl.constexpr,
):
    pid_l = tl.program_id(0)
    pid_co = tl.program_id(1)
    n = tl.program_id(2)
    offs_co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    offs_ci = tl.arange(0, BLOCK_CI)
    mask_co = offs_co < CO
    mask_l = offs_l < LOUT
    x_base = x_ptr + n * sxn
    acc = tl.zeros((BLOCK_CO, BLOCK_L), dtype=tl.float32)
    for k in tl.static_range(KS):
        pos = offs_l + k * DIL - PAD
        mask_pos = (pos >= 0) & (pos < LIN) & mask_l
        for c0 in range(0, CI, BLOCK_CI):
            ci = c0 + offs_ci
            mask_ci = ci < CI
            w = tl.load(w_ptr + offs_co[:, None] * swo + ci[None, :] * swi + k,
                        mask=mask_co[:, None] & mask_ci[None, :], other=0.0)
            xv = tl.load(x_base + ci[:, None] * sxc + pos[None, :],
                         mask=mask_ci[:, None] & mask_pos[None, :], other=0.0)
            if DOT_FP32:
                acc += tl.dot(w.to(tl.float32), xv.to(tl.float32))
            else:
                acc += tl.dot(w, xv)
    tl.store(y_ptr + n * syn + offs_co[:, None] * syc + offs_l[None, :],
             acc.to(y_ptr.dtype.element_ty), mask=mask_co[:, None] & mask_l[None, :])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(COUT, C, KSIZE, dtype=torch.bfloat16) * (1.0 / (C * KSIZE) ** 0.5))

    def forward(self, x):
        x = x.contiguous()
        w = self.weight.contiguous()
        n, ci, lin = x.shape
        co, _, ks = w.shape
        lout = lin + 2 * PADDING - DILATION * (ks - 1)
        y = torch.empty((n, co, lout), device=x.device, dtype=x.dtype)
        BLOCK_CO, BLOCK_L, BLOCK_CI = 64, 128, 64
        grid = (triton.cdiv(lout, BLOCK_L), triton.cdiv(co, BLOCK_CO), n)
        _conv1d_dil_kernel[grid](
            x, w, y,
            ci, co, lin, lout,
            x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
            KS=ks, DIL=DILATION, PAD=PADDING,
            BLOCK_CO=BLOCK_CO, BLOCK_L=BLOCK_L, BLOCK_CI=BLOCK_CI,
            DOT_FP32=(x.device.type == "cpu"),
            num_warps=4, num_stages=3,
        )
        return y


def get_inputs():
    return [torch.randn(N, C, L, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N": 2, "C": 32, "L": 100, "COUT": 48},
    {"N": 1, "C": 80, "L": 150, "COUT": 72},
    {"N": 3, "C": 24, "L": 37, "COUT": 20},
]
