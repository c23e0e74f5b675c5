"""int32-offsets: int64 widening of program ids and aranges removed; loaded indices keep theirs."""

from __future__ import annotations

from recipe_helpers import check_correct, declined, rewrite, task

GATHER = task('''
    T = 8
    D = 100
    TEST_SHAPES = [{"T": 6, "D": 64}, {"T": 5, "D": 37}]


    @triton.jit
    def gather_kernel(ids_ptr, w_ptr, out_ptr, dim, BLOCK: tl.constexpr):
        token = tl.program_id(0).to(tl.int64)
        idx = tl.load(ids_ptr + token).to(tl.int64)
        cols = (tl.arange(0, BLOCK)).to(tl.int64)
        base = tl.cast(token * dim, tl.int64)
        x = tl.load(w_ptr + idx * dim + cols, mask=cols < dim)
        tl.store(out_ptr + base + cols, x, mask=cols < dim)


    class Model(nn.Module):
        def forward(self, ids, w):
            return w[ids]


    class ModelNew(nn.Module):
        def forward(self, ids, w):
            out = torch.empty(ids.shape[0], w.shape[1])
            gather_kernel[(ids.shape[0],)](ids, w, out, w.shape[1], BLOCK=triton.next_power_of_2(w.shape[1]))
            return out


    def get_inputs():
        return [torch.randint(0, 7, (T,)), torch.randn(7, D)]
''')


def test_rewrite_and_correctness(tmp_path) -> None:
    cand = rewrite("int32-offsets", GATHER, "gather_kernel")[0]
    new = cand.source
    assert "token = tl.program_id(0)\n" in new
    assert "cols = (tl.arange(0, BLOCK))\n" in new
    assert "idx = tl.load(ids_ptr + token).to(tl.int64)" in new  # loaded values keep their width
    assert "base = tl.cast(token * dim, tl.int64)" in new  # no program id / arange inside: kept
    assert "Guess" in cand.rationale
    check_correct({"orig": GATHER, "rewritten": new}, tmp_path)


def test_declines_when_only_loaded_values_are_widened() -> None:
    source = GATHER.replace("tl.program_id(0).to(tl.int64)", "tl.program_id(0)").replace(
        "(tl.arange(0, BLOCK)).to(tl.int64)", "tl.arange(0, BLOCK)"
    )
    assert "kept" in declined("int32-offsets", source, "gather_kernel")
