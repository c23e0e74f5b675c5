"""First-draft kernels written for the dot schedules' tests: one matmul-with-epilogue computation in several styles.

Every TEST_SHAPE is no multiple of any block the schedule picks (16, 32, 64, 128).
"""

from __future__ import annotations

from recipe_helpers import task

SHAPES = """
M, N, K, B = 37, 45, 29, 3
TEST_SHAPES = [{"M": 37, "N": 45, "K": 29}, {"M": 70, "N": 19, "K": 83}]
"""

# one program per output element, a scalar K loop, bias + ReLU, no masks (the grid is exactly M x N)
SCALAR = task('''
@triton.jit
def mm_scalar(x_ptr, w_ptr, bias_ptr, y_ptr, M, N, K):
    row = tl.program_id(0)
    col = tl.program_id(1)
    acc = 0.0
    for k in range(0, K):
        x = tl.load(x_ptr + row * K + k)
        w = tl.load(w_ptr + k * N + col)
        acc += x * w
    bias = tl.load(bias_ptr + col)
    # bias then ReLU, as the reference does
    out = tl.maximum(acc + bias, 0.0)
    tl.store(y_ptr + row * N + col, out)


class Model(nn.Module):
    def forward(self, x, w, bias):
        return torch.relu(x @ w + bias)


class ModelNew(nn.Module):
    def forward(self, x, w, bias):
        m, k = x.shape
        n = w.shape[1]
        y = torch.empty((m, n), dtype=x.dtype)
        mm_scalar[(m, n)](x, w, bias, y, m, n, k)
        return y


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N), torch.randn(N)]
''' + SHAPES)

# rank-1 updates over K on an M x N tile, a scale in the epilogue and a cast at the store
RANK1 = task('''
@triton.jit
def mm_rank1(a_ptr, b_ptr, c_ptr, M, N, K, scale, sam, sak, sbk, sbn, scm, scn,
             BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    offs_m = pm * BM + tl.arange(0, BM)
    offs_n = pn * BN + tl.arange(0, BN)
    mask_m = offs_m < M
    mask_n = offs_n < N
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(K):
        a = tl.load(a_ptr + offs_m * sam + k * sak, mask=mask_m, other=0.0)
        b = tl.load(b_ptr + k * sbk + offs_n * sbn, mask=mask_n, other=0.0)
        acc += a[:, None] * b[None, :]
    acc = acc * scale
    tl.store(c_ptr + offs_m[:, None] * scm + offs_n[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=mask_m[:, None] & mask_n[None, :])


class Model(nn.Module):
    def forward(self, a, b):
        return (a @ b) * 0.5


class ModelNew(nn.Module):
    def forward(self, a, b):
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty((m, n), dtype=a.dtype)
        grid = (triton.cdiv(m, 16), triton.cdiv(n, 16))
        mm_rank1[grid](a, b, c, m, n, k, 0.5, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                       c.stride(0), c.stride(1), BM=16, BN=16)
        return c


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]
''' + SHAPES)

# already blocked tl.dot with pointer increments, a bias row and a sigmoid-gated (SiLU) epilogue
BLOCKED = task('''
@triton.jit
def linear_silu(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sxm, sxk, swk, swn, sym, syn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rm[:, None] * sxm + rk[None, :] * sxk
    w_ptrs = w_ptr + rk[:, None] * swk + rn[None, :] * swn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        x = tl.load(x_ptrs, mask=(rm[:, None] < M) & (rk[None, :] + k0 < K), other=0.0)
        w = tl.load(w_ptrs, mask=(rk[:, None] + k0 < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, w, input_precision="ieee")
        x_ptrs += BLOCK_K * sxk
        w_ptrs += BLOCK_K * swk
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    z = acc + bias[None, :]
    y = z * tl.sigmoid(z)
    tl.store(y_ptr + rm[:, None] * sym + rn[None, :] * syn, y, mask=(rm[:, None] < M) & (rn[None, :] < N))


class Model(nn.Module):
    def forward(self, x, w, b):
        return torch.nn.functional.silu(x @ w + b)


class ModelNew(nn.Module):
    def forward(self, x, w, b):
        m, k = x.shape
        n = w.shape[1]
        y = torch.empty((m, n), dtype=x.dtype)
        grid = (triton.cdiv(m, 32), triton.cdiv(n, 32))
        linear_silu[grid](x, w, b, y, m, n, k, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
                          y.stride(0), y.stride(1), BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, num_warps=4)
        return y


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N), torch.randn(N)]
''' + SHAPES)

# batched A @ B^T: B given as (batch, N, K) and read through its strides; the batch is program axis 2
BATCHED_T = task('''
@triton.jit
def bmm_bt(a_ptr, b_ptr, c_ptr, M, N, K, sab, sam, sak, sbb, sbn, sbk, scb, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    bid = tl.program_id(2)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K):
        a = tl.load(a_ptr + bid * sab + offs_m * sam + k * sak, mask=offs_m < M, other=0.0)
        b = tl.load(b_ptr + bid * sbb + offs_n * sbn + k * sbk, mask=offs_n < N, other=0.0)
        acc += a[:, None] * b[None, :]
    c_ptrs = c_ptr + bid * scb + offs_m[:, None] * scm + offs_n[None, :] * scn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b.transpose(1, 2)


class ModelNew(nn.Module):
    def forward(self, a, b):
        batch, m, k = a.shape
        n = b.shape[1]
        c = torch.empty((batch, m, n), dtype=a.dtype)
        grid = (triton.cdiv(m, 16), triton.cdiv(n, 16), batch)
        bmm_bt[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), a.stride(2), b.stride(0), b.stride(1),
                     b.stride(2), c.stride(0), c.stride(1), c.stride(2), BM=16, BN=16)
        return c


def get_inputs():
    return [torch.randn(B, M, K), torch.randn(B, N, K)]
''' + '''
M, N, K, B = 37, 45, 29, 3
TEST_SHAPES = [{"B": 3, "M": 37, "N": 45, "K": 29}, {"B": 2, "M": 70, "N": 19, "K": 83}]
''')

# x (batch, M, K) against one weight (N, K) every batch shares, read transposed; the batch is program axis 1 and
# only moves x's and y's base pointers (its step is no multiple of their row strides); a scale after the loop
SHARED_W = task('''
@triton.jit
def shared_w(x_ptr, w_ptr, y_ptr, M, N, K, scale, sxb, sxm, sxk, swn, swk, syb, sym, syn,
             TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    tile = tl.program_id(0)
    batch = tl.program_id(1)
    n_tiles = tl.cdiv(N, TN)
    rows = (tile // n_tiles) * TM + tl.arange(0, TM)
    cols = (tile % n_tiles) * TN + tl.arange(0, TN)
    x_base = x_ptr + batch * sxb
    y_base = y_ptr + batch * syb
    acc = tl.zeros((TM, TN), dtype=tl.float32)
    for k0 in range(0, K, TK):
        ks = k0 + tl.arange(0, TK)
        xt = tl.load(x_base + rows[:, None] * sxm + ks[None, :] * sxk,
                     mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        wt = tl.load(w_ptr + cols[None, :] * swn + ks[:, None] * swk,
                     mask=(cols[None, :] < N) & (ks[:, None] < K), other=0.0)
        acc = acc + tl.dot(xt, wt, input_precision="ieee")
    tl.store(y_base + rows[:, None] * sym + cols[None, :] * syn, acc * scale,
             mask=(rows[:, None] < M) & (cols[None, :] < N))


class Model(nn.Module):
    def forward(self, x, w):
        return (x @ w.t()) * 0.25


class ModelNew(nn.Module):
    def forward(self, x, w):
        batch, m, k = x.shape
        n = w.shape[0]
        y = torch.empty((batch, m, n), dtype=x.dtype)
        grid = (triton.cdiv(m, 16) * triton.cdiv(n, 16), batch)
        shared_w[grid](x, w, y, m, n, k, 0.25, x.stride(0), x.stride(1), x.stride(2), w.stride(0), w.stride(1),
                       y.stride(0), y.stride(1), y.stride(2), TM=16, TN=16, TK=16)
        return y


def get_inputs():
    return [torch.randn(B, M, K), torch.randn(N, K)]
''' + '''
M, N, K, B = 37, 45, 29, 3
TEST_SHAPES = [{"B": 3, "M": 37, "N": 45, "K": 29}, {"B": 2, "M": 70, "N": 19, "K": 83}]
''')
