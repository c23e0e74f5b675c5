"""Misreadings found on public kernels (docs/precision.md), each as a small kernel of our own: the rule fires on
the real problem and stays quiet on the intentional pattern that used to be misread."""

from __future__ import annotations

from textwrap import dedent

from triage_helpers import locate, of

HEAD = "import triton\nimport triton.language as tl\n\n"


def k(body: str) -> str:
    return HEAD + dedent(body)


# -- TL107: a reduction vs running prefixes, segmented sums and tile counters --------------------------------

SCALAR_SUM = k("""
    @triton.jit
    def total(x_ptr, out_ptr, n):
        acc = 0.0
        for i in range(n):
            acc += tl.load(x_ptr + i)
        tl.store(out_ptr, acc)
    """)


def test_tl107_fires_on_a_scalar_reduction():
    (f,) = of(SCALAR_SUM, "TL107")
    assert "`acc`" in f.message


def test_tl107_silent_on_a_running_prefix_used_as_an_offset():
    # Grouped GEMM scheduling: the running tile count decides which tile this program owns.
    src = k("""
        @triton.jit
        def grouped(sizes_ptr, out_ptr, G, BLOCK: tl.constexpr):
            tidx = tl.program_id(0)
            done = 0
            for g in range(G):
                m = tl.load(sizes_ptr + g)
                tiles = tl.cdiv(m, BLOCK)
                if tidx - done < tiles:
                    tl.store(out_ptr + tidx, g)
                done += tiles
        """)
    assert not of(src, "TL107")


def test_tl107_silent_on_a_segmented_sum_flushed_per_key():
    src = k("""
        @triton.jit
        def segsum(src_ptr, key_ptr, out_ptr, n):
            key = tl.load(key_ptr)
            acc = 0.0
            for i in range(n):
                new = tl.load(key_ptr + i)
                if new != key:
                    tl.atomic_add(out_ptr + key, acc)
                    key = new
                    acc = 0.0
                acc += tl.load(src_ptr + i)
            tl.atomic_add(out_ptr + key, acc)
        """)
    assert not of(src, "TL107")
    # ... and the atomics are not "the same address in a loop": the address moves with the key and the value
    # was accumulated first.
    assert not of(src, "TL112")


# -- TL112: a hot single-address atomic vs histograms and already-accumulated values ---------------------------

HOT_ATOMIC = k("""
    @triton.jit
    def count(x_ptr, out_ptr, n):
        for i in range(n):
            tl.atomic_add(out_ptr, tl.load(x_ptr + i))
    """)


def test_tl112_fires_when_every_iteration_hits_one_address():
    (f,) = of(HOT_ATOMIC, "TL112")
    assert f.span == locate(HOT_ATOMIC, "tl.atomic_add(out_ptr, tl.load(x_ptr + i))")


def test_tl112_silent_when_the_address_moves_with_the_loop():
    histogram = HOT_ATOMIC.replace(
        "tl.atomic_add(out_ptr, tl.load(x_ptr + i))",
        "idx = tl.load(x_ptr + i)\n        tl.atomic_add(out_ptr + idx, 1)",
    )
    assert not of(histogram, "TL112")
    per_row = HOT_ATOMIC.replace("tl.atomic_add(out_ptr,", "tl.atomic_add(out_ptr + i,")
    assert not of(per_row, "TL112")


# -- TL108: repeated passes vs disjoint ranges, other rows, reused names and integer arguments -----------------

TWO_STAT_PASSES = k("""
    @triton.jit
    def stats(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        row = x_ptr + tl.program_id(0) * n
        m = 0.0
        for start in range(0, n, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            m = tl.maximum(m, tl.max(tl.load(row + cols, mask=cols < n, other=0.0), axis=0))
        s = 0.0
        for start in range(0, n, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            s += tl.sum(tl.load(row + cols, mask=cols < n, other=0.0), axis=0)
        tl.store(y_ptr + tl.program_id(0), s / m)
    """)


def test_tl108_fires_on_two_statistics_passes_over_one_row():
    (f,) = of(TWO_STAT_PASSES, "TL108")
    assert "x_ptr" in f.message and "2 passes" in f.message


def test_tl108_silent_when_the_loops_cover_disjoint_column_ranges():
    # Full tiles first, then the masked tail: one pass split in two, as FlagGems' softmax does.
    src = TWO_STAT_PASSES.replace(
        "for start in range(0, n, BLOCK):\n        cols = start + tl.arange(0, BLOCK)\n        s +=",
        "for start in range(n // BLOCK * BLOCK, n, BLOCK):\n        cols = start + tl.arange(0, BLOCK)\n        s +=",
    )
    assert src != TWO_STAT_PASSES
    assert not of(src, "TL108")


def test_tl108_silent_when_a_reused_name_points_elsewhere():
    src = k("""
        @triton.jit
        def concat(a_ptr, b_ptr, y_ptr, na, nb, BLOCK: tl.constexpr):
            m = 0.0
            for j in range(0, na, BLOCK):
                idx = j + tl.arange(0, BLOCK)
                src = a_ptr + idx
                m += tl.sum(tl.load(src, mask=idx < na, other=0.0), axis=0)
            for j in range(0, na, BLOCK):
                idx = j + tl.arange(0, BLOCK)
                src = b_ptr + idx
                m += tl.sum(tl.load(src, mask=idx < nb, other=0.0), axis=0)
            tl.store(y_ptr, m)
        """)
    assert not of(src, "TL108")


def test_tl108_silent_when_only_an_integer_argument_is_shared():
    # `n_a` is a size (it is compared); it is added to both addresses but nothing is read from it.
    src = k("""
        @triton.jit
        def two(a_ptr, b_ptr, y_ptr, n_a, BLOCK: tl.constexpr):
            m = 0.0
            for j in range(0, n_a, BLOCK):
                x = j + tl.arange(0, BLOCK) + n_a
                m += tl.sum(tl.load(a_ptr + x, mask=x < 2 * n_a, other=0.0), axis=0)
            for j in range(0, n_a, BLOCK):
                x = j + tl.arange(0, BLOCK) + n_a
                m += tl.sum(tl.load(b_ptr + x, mask=x < 2 * n_a, other=0.0), axis=0)
            tl.store(y_ptr, m)
        """)
    assert not of(src, "TL108")


# -- TL113: int64 offsets chosen by a constexpr flag ----------------------------------------------------------

WIDE = k("""
    @triton.jit
    def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr, LONG_INDEXING: tl.constexpr):
        pid = tl.program_id(0)
        if LONG_INDEXING:
            offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
        else:
            offs = pid * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
    """)


def test_tl113_silent_under_a_constexpr_long_indexing_guard_but_fires_without_it():
    assert not of(WIDE, "TL113")
    unguarded = k("""
        @triton.jit
        def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
        """)
    assert len(of(unguarded, "TL113")) == 1


# -- TL116: gathers vs pointers returned by helpers, reused names and single elements --------------------------

GATHER = k("""
    @triton.jit
    def gather(src_ptr, idx_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        idx = tl.load(idx_ptr + offs)
        tl.store(out_ptr + offs, tl.load(src_ptr + idx))
    """)


def test_tl116_fires_on_a_gather_through_loaded_indices():
    (f,) = of(GATHER, "TL116")
    assert "idx_ptr + offs" in f.message


def test_tl116_silent_when_a_reused_name_is_an_arange_again():
    src = GATHER.replace(
        "tl.store(out_ptr + offs, tl.load(src_ptr + idx))",
        "tl.store(out_ptr + offs, idx)\n    idx = tl.arange(0, BLOCK)\n    tl.store(out_ptr + offs, tl.load(src_ptr + idx))",
    )
    assert not of(src, "TL116")


def test_tl116_silent_for_a_workspace_pointer_returned_by_a_helper():
    src = k("""
        @triton.jit
        def step(acc_ptr, q):
            tl.store(acc_ptr + tl.arange(0, 16), q)
            return acc_ptr

        @triton.jit
        def attn(q_ptr, ws_ptr, out_ptr):
            offs = tl.arange(0, 16)
            q = tl.load(q_ptr + offs)
            acc_ptr = step(ws_ptr + tl.program_id(0) * 16, q)
            tl.store(out_ptr + offs, tl.load(acc_ptr + offs))
        """)
    assert not of(src, "TL116")


def test_tl116_silent_for_one_element_at_an_argmax():
    src = k("""
        @triton.jit
        def pick(val_ptr, idx_ptr, out_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            best = tl.argmax(tl.load(val_ptr + offs), axis=0)
            tl.store(out_ptr, tl.load(idx_ptr + best))
        """)
    assert not of(src, "TL116")


# -- TL118: the assignment of a reused mask name that reaches the tl.where -------------------------------------


def test_tl118_reports_the_mask_assignment_that_reaches_the_where():
    src = k("""
        @triton.jit
        def ln(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            acc = 0.0
            for start in range(0, n, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                mask = cols < n
                acc += tl.sum(tl.where(mask, tl.load(x_ptr + cols, mask=mask, other=0.0), 0.0))
            for start in range(0, n, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                mask = cols <= n - 1
                tl.store(y_ptr + cols, tl.load(x_ptr + cols, mask=mask) / acc, mask=mask)
        """)
    (f,) = of(src, "TL118")
    assert f.span == locate(src, "cols < n")


# -- TL123, TL124, TL101, TL103, TL104/TL105: guards, tile loops, counts, one-lane blocks, serial programs -------


def test_tl123_silent_for_a_print_guarded_by_program_id():
    src = k("""
        @triton.jit
        def dbg(x_ptr):
            if tl.program_id(0) == 0:
                tl.device_print("x", tl.load(x_ptr))
            tl.device_print("y", tl.load(x_ptr))
        """)
    (f,) = of(src, "TL123")
    assert f.span == locate(src, 'tl.device_print("y", tl.load(x_ptr))')


def test_tl124_silent_in_a_tile_loop_with_a_dot_but_fires_in_a_light_loop():
    src = k("""
        @triton.jit
        def mm(a_ptr, b_ptr, c_ptr, M, n_tiles, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            for t in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
                rows = (t * BLOCK + offs) % M
                a = tl.load(a_ptr + rows[:, None] * BLOCK + offs[None, :])
                b = tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :])
                tl.store(c_ptr + rows[:, None] * BLOCK + offs[None, :], tl.dot(a, b))
        """)
    assert not of(src, "TL124")
    light = src.replace("tl.dot(a, b)", "a + b")
    assert len(of(light, "TL124")) == 1


def test_tl101_silent_for_a_count_of_blocks():
    src = k("""
        @triton.jit
        def tiles(x_ptr, M_BLOCKS, N_BLOCKS, BLOCK_M: tl.constexpr):
            for pid in tl.range(tl.program_id(0), M_BLOCKS * N_BLOCKS, tl.num_programs(0)):
                offs = pid * BLOCK_M + tl.arange(0, BLOCK_M)
                tl.store(x_ptr + offs, offs)
        """)
    assert not of(src, "TL101")
    assert len(of(src.replace("M_BLOCKS, N_BLOCKS", "M_BLOCKS, N_BLOCKS, BLOCK_N"), "TL101")) == 0
    assert (
        len(
            of(
                src.replace("offs = pid * BLOCK_M", "offs = pid * BLOCK_N").replace(
                    "M_BLOCKS, N_BLOCKS,", "M_BLOCKS, N_BLOCKS, BLOCK_N,"
                ),
                "TL101",
            )
        )
        == 1
    )


def test_tl103_silent_for_a_one_lane_arange():
    src = k("""
        @triton.jit
        def red(x_ptr, out_ptr, BLOCK: tl.constexpr):
            x = tl.load(x_ptr + tl.arange(0, BLOCK))
            tl.store(out_ptr + tl.arange(0, 1), tl.sum(x, axis=0))
        """)
    assert not of(src, "TL103")


def test_tl104_tl105_silent_for_a_program_that_loops_over_its_elements():
    src = k("""
        @triton.jit
        def scan(cnt_ptr, E: tl.constexpr):
            pid = tl.program_id(0)
            last = 0
            for i in range(1, E + 1):
                last += tl.load(cnt_ptr + i * E + pid)
                tl.store(cnt_ptr + i * E + pid, last)

        def run(cnt, E):
            scan[(E,)](cnt, E)
        """)
    assert not of(src, "TL104") and not of(src, "TL105")


def test_tl109_silent_for_interleaved_fields_but_fires_on_one_strided_field():
    src = k("""
        @triton.jit
        def cdot(x_ptr, out_ptr, BLOCK: tl.constexpr):
            re = 2 * tl.arange(0, BLOCK)
            im = re + 1
            tl.store(out_ptr, tl.sum(tl.load(x_ptr + re) * tl.load(x_ptr + im), axis=0))
        """)
    assert not of(src, "TL109")
    only_real = src.replace("tl.load(x_ptr + re) * tl.load(x_ptr + im)", "tl.load(x_ptr + re)")
    assert len(of(only_real, "TL109")) == 1
