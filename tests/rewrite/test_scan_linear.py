"""Linear recurrences `h = a * h + b` (an exponential moving average, discounted returns walked backwards) as
blocked scans: the steps (a, b) composed by tl.associative_scan, one program's scalar or a block of rows carried.
Rewritten, then run against torch under the interpreter at sizes no block divides."""

from __future__ import annotations

from recipe_helpers import check_rewrites_correct, declined, rewrite, task

EMA_ROW = task('''
    TEST_SHAPES = [{"M": 3, "N": 300}, {"M": 2, "N": 77}]
    M, N = 3, 300

    @triton.jit
    def ema(x_ptr, y_ptr, n, stride, alpha):
        row = tl.program_id(0)
        h = 0.0
        for j in range(0, n):
            h = h * (1.0 - alpha) + alpha * tl.load(x_ptr + row * stride + j)
            tl.store(y_ptr + row * stride + j, h)

    class Model(nn.Module):
        def forward(self, x):
            out, h = [], torch.zeros_like(x[:, 0])
            for j in range(x.shape[1]):
                h = h * 0.75 + 0.25 * x[:, j]
                out.append(h)
            return torch.stack(out, dim=1)

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            ema[(x.shape[0],)](x, y, x.shape[1], x.stride(0), 0.25)
            return y

    def get_inputs():
        return [torch.randn(M, N)]
''')

RETURNS_BACKWARDS = task('''
    TEST_SHAPES = [{"M": 37, "N": 70}, {"M": 5, "N": 3}]
    M, N = 37, 70

    @triton.jit
    def returns(r_ptr, g_ptr, n_rows, n, gamma, BR: tl.constexpr):
        rows = tl.program_id(0) * BR + tl.arange(0, BR)
        ok = rows < n_rows
        src = r_ptr + rows * n + (n - 1)
        dst = g_ptr + rows * n + (n - 1)
        g = tl.zeros([BR], dtype=tl.float32)
        for i in range(0, n):
            g = tl.load(src, mask=ok, other=0.0) + gamma * g
            tl.store(dst, g, mask=ok)
            src -= 1
            dst -= 1

    class Model(nn.Module):
        def forward(self, r):
            out, g = [], torch.zeros_like(r[:, 0])
            for i in reversed(range(r.shape[1])):
                g = r[:, i] + 0.9 * g
                out.append(g)
            return torch.stack(out[::-1], dim=1)

    class ModelNew(nn.Module):
        def forward(self, r):
            g = torch.empty_like(r)
            returns[(triton.cdiv(r.shape[0], 16),)](r, g, r.shape[0], r.shape[1], 0.9, BR=16)
            return g

    def get_inputs():
        return [torch.randn(M, N)]
''')


REVERSE_CUMSUM = task('''
    TEST_SHAPES = [{"M": 3, "N": 300}, {"M": 2, "N": 77}]
    M, N = 3, 300

    @triton.jit
    def suffix_sum(x_ptr, y_ptr, n, stride):
        row = tl.program_id(0)
        acc = 0.0
        for i in range(n - 1, -1, -1):
            acc += tl.load(x_ptr + row * stride + i)
            tl.store(y_ptr + row * stride + i, acc)

    class Model(nn.Module):
        def forward(self, x):
            return torch.flip(torch.cumsum(torch.flip(x, [1]), dim=1), [1])

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            suffix_sum[(x.shape[0],)](x, y, x.shape[1], x.stride(0))
            return y

    def get_inputs():
        return [torch.randn(M, N)]
''')


def test_a_loop_that_counts_down_is_scanned_counting_up() -> None:
    (first, *_) = rewrite("schedule-blocked-scan", REVERSE_CUMSUM, "suffix_sum")
    assert "for i_up_block in range(0, (n - 1) - (-1), SCAN_BLOCK):" in first.source
    assert "i = (n - 1) - i_up\n" in first.source and "counts up" in first.rationale


def test_linear_recurrences_scan_their_composed_steps() -> None:
    ema = rewrite("schedule-blocked-scan", EMA_ROW, "ema")
    src = ema[0].source
    assert "def _scan_linear(a1, b1, a2, b2):\n    return a1 * a2, b1 * a2 + b2\n" in src
    assert "h_input = tl.where(j_ok, alpha * tl.load(x_ptr + row * stride + j, mask=j_ok), 0.0)" in src
    assert "h_decay = tl.where(j_ok, 1.0 - alpha, tl.full(h_input.shape, 1.0, tl.float32))" in src
    assert "h_decay_scan, h_input_scan = tl.associative_scan((h_decay, h_input), 0, _scan_linear)" in src
    assert "tl.store(y_ptr + row * stride + j, h_scan, mask=j_ok)" in src
    assert "h = h_decay_all * h + h_input_all" in src and "linear recurrence" in ema[0].rationale
    back = rewrite("schedule-blocked-scan", RETURNS_BACKWARDS, "returns")
    assert "i = i_block + tl.arange(0, SCAN_BLOCK)[:, None]" in back[0].source
    assert "tl.store(dst - i, g_scan, mask=(ok) & i_ok)" in back[0].source  # walked back: offsets subtracted
    quadratic = EMA_ROW.replace("h = h * (1.0 - alpha) +", "h = h * h +")
    assert "a * h + b" in declined("schedule-blocked-scan", quadratic, "ema")


# the same recurrence written as one fused multiply-add (a diagonal linear RNN's step)
EMA_FMA = EMA_ROW.replace("h = h * (1.0 - alpha) + alpha * tl.load(x_ptr + row * stride + j)",
                          "h = tl.fma(1.0 - alpha, h, alpha * tl.load(x_ptr + row * stride + j))")


def test_a_fused_multiply_add_step_is_a_linear_recurrence() -> None:
    assert EMA_FMA != EMA_ROW
    [*fused] = rewrite("schedule-blocked-scan", EMA_FMA, "ema")
    src = fused[0].source
    assert "h_decay = tl.where(j_ok, 1.0 - alpha, tl.full(h_input.shape, 1.0, tl.float32))" in src
    assert "tl.fma" not in src.split("def ema", 1)[1].split("class Model", 1)[0]
    self_term = EMA_FMA.replace("alpha * tl.load(x_ptr + row * stride + j))", "h)")
    assert "a * h + b" in declined("schedule-blocked-scan", self_term, "ema")


def test_stay_correct(tmp_path) -> None:
    check_rewrites_correct({"ema": ("schedule-blocked-scan", EMA_ROW, "ema"),
                            "ema_fma": ("schedule-blocked-scan", EMA_FMA, "ema"),
                            "returns": ("schedule-blocked-scan", RETURNS_BACKWARDS, "returns"),
                            "suffix": ("schedule-blocked-scan", REVERSE_CUMSUM, "suffix_sum")}, tmp_path)
