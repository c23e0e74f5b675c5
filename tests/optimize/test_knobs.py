"""Config knobs are found in the text, and a block size moves together with the grid that depends on it."""

from __future__ import annotations

import ast
import textwrap

from tritonlens.analysis.kernels import parse_module
from tritonlens.server.engine.optimize.config_search import moves
from tritonlens.server.engine.optimize.knobs import apply_edits, find_knobs

SOURCE = textwrap.dedent(
    """
    import triton
    import triton.language as tl

    @triton.jit
    def a_kernel(x, y, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

    @triton.jit
    def b_kernel(x, y, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        for i in range(3):
            tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

    def launch(x, y, n):
        grid = (triton.cdiv(n, 256),)
        a_kernel[grid](x, y, n, BLOCK=256)
        b_kernel[grid](y, x, n, BLOCK=256, num_warps=2)

    def launch_local(x, y, n):
        BLOCK = 64
        a_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK)
    """
)


def knobs():
    module = parse_module(SOURCE)
    params = {k.name: [(p.name, p.is_constexpr) for p in k.params] for k in module.kernels}
    return find_knobs(SOURCE, params)


def test_shared_grid_literal_merges_the_two_launches():
    by_label = {k.label: k for k in knobs()}
    shared = by_label["a_kernel.BLOCK + b_kernel.BLOCK"]
    assert shared.value == 256 and len(shared.locs) == 3  # grid literal + both launches
    moved = apply_edits(SOURCE, shared.edits(1024, SOURCE))
    assert "triton.cdiv(n, 1024)" in moved and moved.count("BLOCK=1024") == 2
    ast.parse(moved)


def test_local_constant_moves_once_and_options_are_inserted_or_replaced():
    ks = knobs()
    local = next(k for k in ks if k.kind == "block" and k.value == 64)
    assert "BLOCK = 128" in apply_edits(SOURCE, local.edits(128, SOURCE))
    warps = [k for k in ks if k.kind == "num_warps"]
    assert sorted(k.value for k in warps) == [2, 4]
    # a_kernel omits num_warps at both its launch sites: one knob inserting it at both, so the sites agree
    inserted = next(k for k in warps if not k.locs)
    assert inserted.label == "a_kernel.num_warps" and len(inserted.inserts) == 2
    assert apply_edits(SOURCE, inserted.edits(8, SOURCE)).count(", num_warps=8)") == 2
    stages = {k.label: k.has_loop for k in ks if k.kind == "num_stages"}
    assert stages["b_kernel.num_stages"] and not stages["a_kernel.num_stages"]


def test_moves_step_from_the_current_values():
    labels = [m.label for m in moves(knobs())]
    assert "a_kernel.BLOCK + b_kernel.BLOCK: 256 -> 512" in labels
    assert "b_kernel.num_warps: 2 -> 4" in labels and "b_kernel.num_warps: 2 -> 1" in labels
    assert "b_kernel.num_stages: 3 -> 4" in labels
    assert not any(
        label.startswith("a_kernel.num_stages") for label in labels
    )  # no loop: stages mean nothing


def test_dot_loops_get_whole_tile_shapes_first():
    from pathlib import Path

    source = (Path(__file__).resolve().parents[2] / "bench" / "matmul" / "batched_matmul.py").read_text()
    module = parse_module(source)
    params = {k.name: [(p.name, p.is_constexpr) for p in k.params] for k in module.kernels}
    found = find_knobs(source, params)
    tiles = {k.label: k.grid_axis for k in found if k.kind == "block"}
    assert tiles == {"bmm_kernel.BLOCK_M": 1, "bmm_kernel.BLOCK_N": 2, "bmm_kernel.BLOCK_K": None}
    labels = [m.label for m in moves(found)]
    # the tile (both grid-sized blocks, the loop's K block, warps, stages) moves at once, before any single step
    assert labels[0] == ("bmm_kernel.BLOCK_M: 32 -> 128, bmm_kernel.BLOCK_N: 32 -> 128, bmm_kernel.BLOCK_K: 32 -> 64, "
                         "bmm_kernel.num_warps: 4 -> 8")
    assert labels.index("bmm_kernel.BLOCK_M: 32 -> 64") > 2
    moved = apply_edits(source, [e for k, v in moves(found)[0].changes for e in k.edits(v, source)])
    assert "triton.cdiv(m, 128), triton.cdiv(n, 128)" in moved and "BLOCK_M=128, BLOCK_N=128, BLOCK_K=64" in moved
    # the key blocks flash attention uses on Hopper come last: 128 rows x 128 along the loop, 8 warps, 3 stages
    assert ("bmm_kernel.BLOCK_M: 32 -> 128, bmm_kernel.BLOCK_N: 32 -> 128, bmm_kernel.BLOCK_K: 32 -> 128, "
            "bmm_kernel.num_warps: 4 -> 8") in labels
    # no dot loop, or an Ascend target: single steps only
    assert not any(", " in m.label for m in moves(knobs()) if "BLOCK" in m.label and "num_warps" not in m.label)
    assert all(m.label.count("BLOCK") <= 1 for m in moves(found, "ascend"))


def test_ascend_moves_flip_multibuffer_and_ub_overflow_prunes():
    from tritonlens.server.engine.optimize.config_search import ConfigSearch, Move

    module = parse_module(SOURCE)
    params = {k.name: [(p.name, p.is_constexpr) for p in k.params] for k in module.kernels}
    knobs = find_knobs(SOURCE, params, platform="ascend")
    assert not any(k.kind in ("num_warps", "num_stages") for k in knobs)
    labels = [m.label for m in moves(knobs)]
    assert "a_kernel.multibuffer: True -> False" in labels
    search = ConfigSearch(None, "ascend910b3", backend="npu")
    move = Move(((knobs[0], 512),))
    base = {"kernels": {"a_kernel": {"errors": []}}}
    over = {"kernels": {"a_kernel": {"errors": [], "ub": {"feasible": False, "reason": "ub overflow: requires 3 bits"}}}}
    undecided = {"kernels": {"a_kernel": {"errors": [], "ub": {"feasible": None, "reason": "no hivm stage"}}}}
    assert search._prune_reason(over, base, move) == "ascend910b3: ub overflow: requires 3 bits"
    assert search._prune_reason(undecided, base, move) is None  # kept; the rationale names the undecided verdict


GROUPED = textwrap.dedent(
    """
    import triton
    import triton.language as tl

    @triton.jit
    def mm_kernel(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP: tl.constexpr):
        pid = tl.program_id(0)
        n_m = tl.cdiv(M, BLOCK_M)
        n_n = tl.cdiv(N, BLOCK_N)
        first = (pid // (GROUP * n_n)) * GROUP
        size = min(n_m - first, GROUP)
        pid_m = first + (pid % (GROUP * n_n)) % size
        pid_n = (pid % (GROUP * n_n)) // size
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
            y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
            acc = tl.dot(x, y, acc)
        tl.store(c + rm[:, None] * N + rn[None, :], acc)

    def mm(a, b, c, M, N, K):
        BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
        grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
        mm_kernel[grid](a, b, c, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP=8, num_warps=8)
    """
)


def test_tuple_assigned_blocks_of_a_grouped_program_order_are_tiles():
    module = parse_module(GROUPED)
    params = {k.name: [(p.name, p.is_constexpr) for p in k.params] for k in module.kernels}
    found = find_knobs(GROUPED, params)
    blocks = {k.label: (k.value, k.grid_axis, k.lane) for k in found if k.kind == "block"}
    # `BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32` element by element; pid_m / pid_n come from the program id
    # through index arithmetic; GROUP sizes no arange: a count, not a tile
    assert blocks == {"mm_kernel.BLOCK_M": (128, 0, True), "mm_kernel.BLOCK_N": (128, 0, True),
                      "mm_kernel.BLOCK_K": (32, None, True), "mm_kernel.GROUP": (8, None, False)}
    labels = [m.label for m in moves(found)]
    assert labels[0] == "mm_kernel.BLOCK_K: 32 -> 64"  # the first tile jump: 128x128x64, 8 warps, 3 stages
    assert "mm_kernel.BLOCK_N: 128 -> 256, mm_kernel.BLOCK_K: 32 -> 64" in labels  # 128x256 for two tile blocks
    group = [i for i, label in enumerate(labels) if label.startswith("mm_kernel.GROUP")]
    assert [labels[i] for i in group] == ["mm_kernel.GROUP: 8 -> 16", "mm_kernel.GROUP: 8 -> 4"]
    assert group[0] == len(labels) - 2  # counts move last
    moved = apply_edits(GROUPED, [e for k, v in moves(found)[1].changes for e in k.edits(v, GROUPED)])
    assert "BLOCK_M, BLOCK_N, BLOCK_K = 128, 256, 64" in moved
    ast.parse(moved)
