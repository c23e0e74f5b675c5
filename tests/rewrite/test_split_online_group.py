"""Decode attention (one query per program, a long loop over the keys) is split over the keys: flash decoding. The
loop keeps a running max with two sums relative to it (the denominator and the P@V accumulator); each slice stores
its three, and the last slice to arrive folds them with the loop's own step under one new maximum. Rewritten, then
run against torch under the interpreter at sizes no block divides."""

from __future__ import annotations

from recipe_helpers import check_rewrites_correct, rewrite, task

DECODE = task('''
    TEST_SHAPES = [{"BH": 3, "L": 300, "D": 16}, {"BH": 2, "L": 45, "D": 32}]
    BH, L, D = 3, 300, 16

    @triton.jit
    def decode(q_ptr, k_ptr, v_ptr, o_ptr, n_keys, scale, D: tl.constexpr, BK: tl.constexpr):
        row = tl.program_id(0)
        dims = tl.arange(0, D)
        q = tl.load(q_ptr + row * D + dims) * scale
        top = float("-inf")
        den = 0.0
        out = tl.zeros([D], dtype=tl.float32)
        for start in range(0, n_keys, BK):
            keys = start + tl.arange(0, BK)
            ok = keys < n_keys
            k = tl.load(k_ptr + (row * n_keys + keys[:, None]) * D + dims[None, :], mask=ok[:, None], other=0.0)
            s = tl.where(ok, tl.sum(k * q[None, :], axis=1), float("-inf"))
            new_top = tl.maximum(top, tl.max(s, axis=0))
            shrink = tl.exp(top - new_top)
            p = tl.exp(s - new_top)
            den = den * shrink + tl.sum(p, axis=0)
            v = tl.load(v_ptr + (row * n_keys + keys[:, None]) * D + dims[None, :], mask=ok[:, None], other=0.0)
            out = out * shrink + tl.sum(p[:, None] * v, axis=0)
            top = new_top
        tl.store(o_ptr + row * D + dims, out / den)

    class Model(nn.Module):
        def forward(self, q, k, v):
            s = torch.einsum("bd,bld->bl", q, k) / q.shape[-1] ** 0.5
            return torch.einsum("bl,bld->bd", torch.softmax(s, dim=-1), v)

    class ModelNew(nn.Module):
        def forward(self, q, k, v):
            o = torch.empty_like(q)
            decode[(q.shape[0],)](q, k, v, o, k.shape[1], q.shape[-1] ** -0.5, D=q.shape[-1], BK=32)
            return o

    def get_inputs():
        return [torch.randn(BH, D), torch.randn(BH, L, D), torch.randn(BH, L, D)]
''')


def test_the_keys_are_split_and_the_group_folds_under_one_maximum() -> None:
    [split] = rewrite("schedule-reduction-split", DECODE, "decode")
    src = split.source
    assert "for start in range(start_first, tl.minimum(start_first + start_slice, n_keys), BK):" in src
    fold = src[src.index("busy_slices = "):src.index("    if finishes:\n")]
    assert fold.count("new_top = tl.maximum(top, top_slice)") == 1  # one new maximum for both sums
    assert "den = den * shrink + den_slice * tl.exp(top_slice - new_top)" in fold
    assert "out = out * shrink + out_slice * tl.exp(top_slice - new_top)" in fold
    assert fold.index("den = den * shrink") < fold.index("top = new_top")
    assert "tl.store(o_ptr + row * D + dims, out / den)" in src.split("if finishes:\n")[-1]


def test_flash_decoding_stays_correct(tmp_path) -> None:
    check_rewrites_correct({"decode": ("schedule-reduction-split", DECODE, "decode")}, tmp_path)
