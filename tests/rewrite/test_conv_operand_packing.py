"""A convolution written with tl.dot per tap (static tap loops around a loop over channel blocks) reads PyTorch's
(C_out, C_in, KH, KW) weights as a gather along both tile axes, and its pipeliner sees two iterations per tap.
schedule-operand-relayout packs the operand once per call from the strides and extents the kernel's own address
and bounds show, then offers the nest as one loop over the packed operand; schedule-loop-nest-flatten runs the nest
as one loop where no operand needs packing. Each is rewritten, then run against torch under the interpreter at
sizes no block divides; what cannot be read declines."""

from __future__ import annotations

from recipe_helpers import check_rewrites_correct, declined, rewrite, task

# NCHW input, pixels on the tile's rows, channels in blocks, 3x3 taps unrolled, a bias epilogue
CONV_TAPS = task('''
    TEST_SHAPES = [{"N": 2, "CI": 5, "CO": 7, "H": 6, "W": 9}, {"N": 1, "CI": 37, "CO": 20, "H": 5, "W": 7}]
    N, CI, CO, H, W = 2, 5, 7, 6, 9

    @triton.jit
    def conv_taps(x_ptr, w_ptr, b_ptr, y_ptr, nb, cin, cout, hh, ww,
                  BM: tl.constexpr, BN: tl.constexpr, BC: tl.constexpr):
        pix = tl.program_id(0) * BM + tl.arange(0, BM)
        outs = tl.program_id(1) * BN + tl.arange(0, BN)
        pix_ok = pix < nb * hh * ww
        out_ok = outs < cout
        img = pix // (hh * ww)
        oy = (pix // ww) % hh
        ox = pix % ww
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ky in tl.static_range(3):
            for kx in tl.static_range(3):
                iy = oy + ky - 1
                ix = ox + kx - 1
                inside = pix_ok & (iy >= 0) & (iy < hh) & (ix >= 0) & (ix < ww)
                for c in range(0, cin, BC):
                    chans = c + tl.arange(0, BC)
                    ch_ok = chans < cin
                    a = tl.load(x_ptr + ((img[:, None] * cin + chans[None, :]) * hh + iy[:, None]) * ww
                                + ix[:, None], mask=inside[:, None] & ch_ok[None, :], other=0.0)
                    b = tl.load(w_ptr + outs[None, :] * (cin * 9) + chans[:, None] * 9 + ky * 3 + kx,
                                mask=ch_ok[:, None] & out_ok[None, :], other=0.0)
                    acc = tl.dot(a, b, acc, input_precision="ieee")
        acc += tl.load(b_ptr + outs, mask=out_ok, other=0.0)[None, :]
        # NCHW output: pixel index -> (image, y, x)
        dst = (img[:, None] * cout + outs[None, :]) * (hh * ww) + (oy * ww + ox)[:, None]
        tl.store(y_ptr + dst, acc, mask=pix_ok[:, None] & out_ok[None, :])

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(CI, CO, 3, padding=1)

        def forward(self, x):
            return self.conv(x)

    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(CI, CO, 3, padding=1)

        def forward(self, x):
            n, cin, hh, ww = x.shape
            weight, bias = self.conv.weight, self.conv.bias
            cout = weight.shape[0]
            y = torch.empty((n, cout, hh, ww), device=x.device, dtype=x.dtype)
            grid = (triton.cdiv(n * hh * ww, 16), triton.cdiv(cout, 16))
            conv_taps[grid](x, weight, bias, y, n, cin, cout, hh, ww, BM=16, BN=16, BC=16)
            return y

    def get_inputs():
        return [torch.randn(N, CI, H, W)]
''')

# the same convolution over weights the wrapper already lays out as (3, 3, C_in, C_out): nothing to pack
CONV_PREPACKED = CONV_TAPS.replace(
    "b = tl.load(w_ptr + outs[None, :] * (cin * 9) + chans[:, None] * 9 + ky * 3 + kx,",
    "b = tl.load(w_ptr + (ky * 3 + kx) * (cin * cout) + chans[:, None] * cout + outs[None, :],").replace(
    "conv_taps[grid](x, weight, bias, y,", "conv_taps[grid](x, weight.permute(2, 3, 1, 0).contiguous(), bias, y,")
assert CONV_PREPACKED.count("permute(2, 3, 1, 0)") == 1 and "(ky * 3 + kx) * (cin * cout)" in CONV_PREPACKED

# the same convolution reading the weight through stride parameters, launched with the strides of a weight whose
# shape the file shows: the launch passes 45 and 9, never 1
CONV_STRIDE_ARGS = CONV_TAPS.replace(
    "def conv_taps(x_ptr, w_ptr, b_ptr, y_ptr, nb, cin, cout, hh, ww,",
    "def conv_taps(x_ptr, w_ptr, b_ptr, y_ptr, nb, cin, cout, hh, ww, swo, swi,").replace(
    "b = tl.load(w_ptr + outs[None, :] * (cin * 9) + chans[:, None] * 9 + ky * 3 + kx,",
    "b = tl.load(w_ptr + outs[None, :] * swo + chans[:, None] * swi + ky * 3 + kx,").replace(
    "self.conv = nn.Conv2d(CI, CO, 3, padding=1)",
    "self.weight = nn.Parameter(torch.randn(CO, CI, 3, 3))\n        self.bias = nn.Parameter(torch.randn(CO))").replace(
    "return self.conv(x)", "return torch.nn.functional.conv2d(x, self.weight, self.bias, padding=1)").replace(
    "weight, bias = self.conv.weight, self.conv.bias", "weight = self.weight\n        bias = self.bias").replace(
    "conv_taps[grid](x, weight, bias, y, n, cin, cout, hh, ww,",
    "conv_taps[grid](x, weight, bias, y, n, cin, cout, hh, ww, weight.stride(0), weight.stride(1),")
assert CONV_STRIDE_ARGS.count("weight.stride(1)") == 1 and "* swi +" in CONV_STRIDE_ARGS

# a grouped convolution: each program's group `g = pid % groups` picks a block of PyTorch's (C_out, C_in/groups,
# 3, 3) weights; output channels within the group on the tile's columns
GROUPED_TAPS = task('''
    TEST_SHAPES = [{"N": 2, "CI": 6, "CO": 9, "G": 3, "H": 5, "W": 7}, {"N": 1, "CI": 40, "CO": 36, "G": 2, "H": 4, "W": 6}]
    N, CI, CO, G, H, W = 2, 6, 9, 3, 5, 7

    @triton.jit
    def grouped_taps(x_ptr, w_ptr, y_ptr, pixels, hh, ww, cin, cpg, copg, groups,
                     BM: tl.constexpr, BN: tl.constexpr, BC: tl.constexpr):
        pix = tl.program_id(0) * BM + tl.arange(0, BM)
        g = tl.program_id(1) % groups
        outs = (tl.program_id(1) // groups) * BN + tl.arange(0, BN)
        pix_ok = pix < pixels
        out_ok = outs < copg
        img = pix // (hh * ww)
        oy = (pix // ww) % hh
        ox = pix % ww
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ky in tl.static_range(3):
            for kx in tl.static_range(3):
                iy = oy + ky - 1
                ix = ox + kx - 1
                inside = pix_ok & (iy >= 0) & (iy < hh) & (ix >= 0) & (ix < ww)
                for c in range(0, cpg, BC):
                    chans = c + tl.arange(0, BC)
                    ch_ok = chans < cpg
                    a = tl.load(x_ptr + ((img[:, None] * cin + g * cpg + chans[None, :]) * hh + iy[:, None]) * ww
                                + ix[:, None], mask=inside[:, None] & ch_ok[None, :], other=0.0)
                    b = tl.load(w_ptr + (g * copg + outs[None, :]) * (cpg * 9) + chans[:, None] * 9 + ky * 3 + kx,
                                mask=ch_ok[:, None] & out_ok[None, :], other=0.0)
                    acc = tl.dot(a, b, acc, input_precision="ieee")
        dst = (img[:, None] * (groups * copg) + g * copg + outs[None, :]) * (hh * ww) + (oy * ww + ox)[:, None]
        tl.store(y_ptr + dst, acc, mask=pix_ok[:, None] & out_ok[None, :])

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(CI, CO, 3, padding=1, groups=G, bias=False)

        def forward(self, x):
            return self.conv(x)

    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(CI, CO, 3, padding=1, groups=G, bias=False)

        def forward(self, x):
            n, cin, hh, ww = x.shape
            weight = self.conv.weight
            cout, cpg = weight.shape[0], weight.shape[1]
            copg = cout // G
            y = torch.empty((n, cout, hh, ww), device=x.device, dtype=x.dtype)
            grid = (triton.cdiv(n * hh * ww, 16), triton.cdiv(copg, 16) * G)
            grouped_taps[grid](x, weight, y, n * hh * ww, hh, ww, cin, cpg, copg, G, BM=16, BN=16, BC=16)
            return y

    def get_inputs():
        return [torch.randn(N, CI, H, W)]
''')

# a matmul whose strides are parameters: at run time the K axis may well be contiguous
MATMUL_STRIDES = task('''
    TEST_SHAPES = [{"M": 20, "K": 37, "NN": 19}]
    M, K, NN = 20, 37, 19

    @triton.jit
    def mm(a_ptr, b_ptr, c_ptr, m, n, k, sam, sak, sbk, sbn, BM: tl.constexpr, BN: tl.constexpr,
           BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, k, BK):
            rk = k0 + tl.arange(0, BK)
            a = tl.load(a_ptr + rm[:, None] * sam + rk[None, :] * sak, mask=(rm[:, None] < m) & (rk[None, :] < k),
                        other=0.0)
            b = tl.load(b_ptr + rk[:, None] * sbk + rn[None, :] * sbn, mask=(rk[:, None] < k) & (rn[None, :] < n),
                        other=0.0)
            acc = tl.dot(a, b, acc, input_precision="ieee")
        tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc, mask=(rm[:, None] < m) & (rn[None, :] < n))

    class Model(nn.Module):
        def forward(self, a, b):
            return a @ b

    class ModelNew(nn.Module):
        def forward(self, a, b):
            c = torch.empty((a.shape[0], b.shape[1]), device=a.device, dtype=a.dtype)
            grid = (triton.cdiv(a.shape[0], 16), triton.cdiv(b.shape[1], 16))
            mm[grid](a, b, c, a.shape[0], b.shape[1], a.shape[1], a.stride(0), a.stride(1), b.stride(0),
                     b.stride(1), BM=16, BN=16, BK=16)
            return c

    def get_inputs():
        return [torch.randn(M, K), torch.randn(K, NN)]
''')


def test_the_weight_is_packed_from_the_kernels_own_strides_and_bounds() -> None:
    packed, _ = rewrite("schedule-operand-relayout", CONV_TAPS, "conv_taps")
    src = packed.source
    # loop axes outermost (ky, kx), then channels, then output channels contiguous; the kernel's own names
    assert "b = tl.load(w_ptr + ky * (3 * cin * cout) + kx * (cin * cout) + chans[:, None] * cout + outs[None, :]," \
        in src
    assert "w_packed = torch.as_strided(weight, (3, 3, (cin), (cout),), (3, 1, 9, 9 * (cin),)).contiguous()" in src
    assert "conv_taps[grid](x, w_packed, bias, y," in src
    assert "strides (3, 1, 9, 9*cin) and extents (3, 3, cin, cout)" in packed.rationale
    assert "(strides (3*cin*cout, cin*cout, cout, 1))" in packed.rationale


def test_packing_alone_comes_first_then_the_flat_loop_over_the_packed_operand() -> None:
    packed, both = rewrite("schedule-operand-relayout", CONV_TAPS, "conv_taps")
    assert "w_packed = torch.as_strided" in packed.source and "for flat in range(" not in packed.source
    assert "w_packed = torch.as_strided" in both.source and "for flat in range(0, 3 * 3 * c_steps):" in both.source
    assert both.title == f"{packed.title}, and flatten the loop nest around tl.dot"
    assert both.producer == packed.producer == "schedule-operand-relayout"
    # the flat loop alone is not offered where an operand needs packing
    assert "needs packing" in declined("schedule-loop-nest-flatten", CONV_TAPS, "conv_taps")


def test_the_nest_is_flattened_alone_where_nothing_needs_packing() -> None:
    assert "already contiguous" in declined("schedule-operand-relayout", CONV_PREPACKED, "conv_taps")
    [flat] = rewrite("schedule-loop-nest-flatten", CONV_PREPACKED, "conv_taps")
    assert "for flat in range(0, 3 * 3 * c_steps):" in flat.source
    assert "ky = flat // (3 * c_steps)" in flat.source and "kx = (flat // c_steps) % 3" in flat.source
    assert "c = (flat % c_steps) * BC" in flat.source
    assert "static_range" not in flat.source.split("def conv_taps", 1)[1].split("class Model", 1)[0]


def test_a_dot_added_into_the_accumulator_is_the_same_accumulation() -> None:
    added = CONV_TAPS.replace('acc = tl.dot(a, b, acc, input_precision="ieee")',
                              'acc += tl.dot(a, b, input_precision="ieee")')
    assert added != CONV_TAPS
    packed, both = rewrite("schedule-operand-relayout", added, "conv_taps")
    assert "chans[:, None] * cout + outs[None, :]" in packed.source
    assert "acc += tl.dot(a, b, input_precision=\"ieee\")" in both.source and "for flat in range(" in both.source


def test_the_compilers_findings_on_the_loads_are_its_evidence() -> None:
    packed, _ = rewrite("schedule-operand-relayout", CONV_TAPS, "conv_taps", codes=("TL301", "TL122"))
    assert packed.evidence == ("TL301",)  # a strided load the compile showed; an unrelated finding is not evidence
    [flat] = rewrite("schedule-loop-nest-flatten", CONV_PREPACKED, "conv_taps", codes=("TL307",))
    assert flat.evidence == ("TL307",)


def test_stride_parameters_the_launch_shows_are_not_one_pack_like_literals() -> None:
    packed, both = rewrite("schedule-operand-relayout", CONV_STRIDE_ARGS, "conv_taps")
    assert "w_packed = torch.as_strided(weight," in packed.source and "conv_taps[grid](x, w_packed," in packed.source
    assert "(`swi` = 9, `swo` = 45)" in packed.rationale  # lanes in the tile's order
    assert "for flat in range(" in both.source
    # the same kernel where the file shows no launch value: the stride may be 1 at run time
    unlaunched = CONV_STRIDE_ARGS.replace("weight.stride(0), weight.stride(1),", "sw0, sw1,").replace(
        "def forward(self, x):\n        n, cin", "def forward(self, x, sw0=None, sw1=None):\n        n, cin")
    assert unlaunched != CONV_STRIDE_ARGS
    assert "may be 1" in declined("schedule-operand-relayout", unlaunched, "conv_taps")


def test_a_grouped_convolutions_group_is_the_outermost_axis_of_the_copy() -> None:
    packed, both = rewrite("schedule-operand-relayout", GROUPED_TAPS, "grouped_taps")
    # groups, taps, channels of the group, output channels of the group (contiguous); the kernel's `g` kept
    assert "extents (groups, 3, 3, cpg, copg)" in packed.rationale
    assert "w_ptr + g * (9 * copg * cpg) + ky * (3 * copg * cpg) + kx * (copg * cpg) + chans[:, None] * copg" \
        in packed.source, packed.source
    assert "w_packed = torch.as_strided(weight, ((G), 3, 3, (cpg), (copg),)" in packed.source
    assert "for flat in range(" in both.source


def test_what_cannot_be_read_declines() -> None:
    assert "may be 1" in declined("schedule-operand-relayout", MATMUL_STRIDES, "mm")
    contiguous = MATMUL_STRIDES.replace("rk[:, None] * sbk + rn[None, :] * sbn", "rk[:, None] * n + rn[None, :]")
    assert contiguous != MATMUL_STRIDES
    assert "already contiguous" in declined("schedule-operand-relayout", contiguous, "mm")
    assert "already one loop" in declined("schedule-loop-nest-flatten", MATMUL_STRIDES, "mm")
    unbounded = CONV_TAPS.replace("mask=ch_ok[:, None] & out_ok[None, :], other=0.0)", "other=0.0)").replace(
        "out_ok = outs < cout", "out_ok = outs >= 0")
    assert unbounded != CONV_TAPS
    assert "extent is unknown" in declined("schedule-operand-relayout", unbounded, "conv_taps")
    # a pointer carried through the channel loop would restart at every flat iteration
    step = '                acc = tl.dot(a, b, acc, input_precision="ieee")'
    carried = CONV_TAPS.replace(step, step + "\n                x_ptr += 0")
    assert carried != CONV_TAPS
    assert "carries x_ptr" in declined("schedule-loop-nest-flatten", carried, "conv_taps")
    leaves = CONV_TAPS.replace(step, step + "\n                if c > cin:\n                    break")
    assert "`break` in the nest" in declined("schedule-loop-nest-flatten", leaves, "conv_taps")


def test_packed_and_flattened_convolutions_stay_correct(tmp_path) -> None:
    check_rewrites_correct({
        "packed": ("schedule-operand-relayout", CONV_TAPS, "conv_taps"),
        "flat": ("schedule-loop-nest-flatten", CONV_PREPACKED, "conv_taps"),
        "strides": ("schedule-operand-relayout", CONV_STRIDE_ARGS, "conv_taps"),
        "grouped": ("schedule-operand-relayout", GROUPED_TAPS, "grouped_taps"),
    }, tmp_path)
