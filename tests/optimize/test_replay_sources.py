"""Issue 24 item 3 (replay): a `lambda META:` grid is recomputed from the candidate's values every time a constexpr
changes (a block-size move with the grid text unchanged replayed the old grid: an illegal address on the H200), and
constexprs a launch site does not pass (parameter defaults, literal autotune configs, heuristics) are replayed with
the candidate's values instead of being refused."""

from __future__ import annotations

from tritonlens.server.engine.optimize.replay_overrides import candidate_launches

MATMUL = '''
import triton
import triton.language as tl


@triton.jit
def mm_kernel(a_ptr, c_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(c_ptr + pid, tl.load(a_ptr + pid))


def mm(a, c, M, N):
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),)
    mm_kernel[grid](a, c, M, N, BLOCK_M=32, BLOCK_N=32)
'''


def launch(**constexprs: int) -> dict:
    args = [{"name": "M", "kind": "int", "value": 256}, {"name": "N", "kind": "int", "value": 128}]
    args += [{"name": k, "kind": "constexpr", "value": v} for k, v in constexprs.items()]
    return {"kernel": "mm_kernel", "grid": [32, 1, 1], "options": {"num_warps": 4}, "args": args}


def test_a_meta_lambda_grid_is_recomputed_when_a_block_moves_and_the_grid_text_does_not():
    rec = launch(BLOCK_M=32, BLOCK_N=32)
    moved = MATMUL.replace("BLOCK_M=32, BLOCK_N=32)", "BLOCK_M=64, BLOCK_N=32)")
    (got,), why = candidate_launches([rec], MATMUL, moved)
    assert why is None
    assert got["candidate"]["grid"] == [16, 1, 1]  # cdiv(256, 64) * cdiv(128, 32), not the recorded 32
    assert got["candidate"]["constexprs"] == {"BLOCK_M": 64}
    # only an option moved: the grid stays as recorded
    warps = MATMUL.replace("BLOCK_N=32)", "BLOCK_N=32, num_warps=8)")
    (got,), why = candidate_launches([rec], MATMUL, warps)
    assert why is None and got["candidate"]["grid"] == [32, 1, 1]
    # the original's lambda does not give the recorded grid: replay does not trust its recomputation
    (bad,), _ = [{**rec, "grid": [7, 1, 1]}], None
    _, why = candidate_launches([bad], MATMUL, moved)
    assert why and "recomputed from the recorded launch" in why


AUTOTUNED = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_warps=4),
                          triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=8)], key=["M"])
@triton.jit
def mm_kernel(a_ptr, c_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(c_ptr + pid, tl.load(a_ptr + pid))


def mm(a, c, M, N):
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),)
    mm_kernel[grid](a, c, M, N)
'''


def test_an_autotune_config_moved_in_the_candidate_replays_the_config_the_launch_ran():
    rec = launch(BLOCK_M=32, BLOCK_N=32)
    moved = AUTOTUNED.replace('{"BLOCK_M": 32, "BLOCK_N": 32}, num_warps=4', '{"BLOCK_M": 128, "BLOCK_N": 32}, num_warps=4')
    (got,), why = candidate_launches([rec], AUTOTUNED, moved)
    assert why is None
    assert got["candidate"]["constexprs"] == {"BLOCK_M": 128, "BLOCK_N": 32}
    assert got["candidate"]["grid"] == [8, 1, 1]  # recomputed from the config's BLOCK_M
    # a config added: the launch's own config is still there, unchanged: replayed as recorded
    added = AUTOTUNED.replace("num_warps=8)]", "num_warps=8), triton.Config({'BLOCK_M': 16, 'BLOCK_N': 16})]")
    (got,), why = candidate_launches([rec], AUTOTUNED, added)
    assert why is None and got["candidate"]["grid"] == [32, 1, 1]
    # pruned to one config: the autotuner has no choice left, every launch runs it (grid recomputed)
    pruned = AUTOTUNED.replace('triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_warps=4),\n', "")
    (got,), why = candidate_launches([rec], AUTOTUNED, pruned)
    assert why is None and got["candidate"]["constexprs"] == {"BLOCK_M": 64, "BLOCK_N": 32}
    assert got["candidate"]["options"]["num_warps"] == 8 and got["candidate"]["grid"] == [16, 1, 1]
    # the launch's config dropped from a list that still has a choice: which one the autotuner picks is unknown
    three = AUTOTUNED.replace("num_warps=8)]", "num_warps=8), triton.Config({'BLOCK_M': 16, 'BLOCK_N': 16})]")
    dropped = three.replace('triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_warps=4),\n', "")
    _, why = candidate_launches([rec], three, dropped)
    assert why and "drops the autotune config" in why


DEFAULTS = '''
import triton
import triton.language as tl


@triton.heuristics({"EVEN": lambda args: args["N"] % args["BLOCK_N"] == 0})
@triton.jit
def mm_kernel(a_ptr, c_ptr, M, N, BLOCK_M: tl.constexpr = 32, BLOCK_N: tl.constexpr = 32, EVEN: tl.constexpr = False):
    pid = tl.program_id(0)
    tl.store(c_ptr + pid, tl.load(a_ptr + pid))


def mm(a, c, M, N):
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),)
    mm_kernel[grid](a, c, M, N)
'''


def test_defaults_and_heuristics_the_launch_site_does_not_pass_are_replayed_not_refused():
    rec = launch(BLOCK_M=32, BLOCK_N=32, EVEN=True)
    moved = DEFAULTS.replace("BLOCK_N: tl.constexpr = 32", "BLOCK_N: tl.constexpr = 48")
    (got,), why = candidate_launches([rec], DEFAULTS, moved)
    assert why is None
    # the default moves, and the heuristic reading it is re-evaluated on the candidate's value
    assert got["candidate"]["constexprs"] == {"BLOCK_N": 48, "EVEN": False}
    assert got["candidate"]["grid"] == [24, 1, 1]  # cdiv(256, 32) * cdiv(128, 48)
    heur = DEFAULTS.replace('args["N"] % args["BLOCK_N"] == 0', 'args["N"] % 256 == 0')
    (got,), why = candidate_launches([rec], DEFAULTS, heur)
    assert why is None and got["candidate"]["constexprs"] == {"EVEN": False}


def test_a_heuristic_reading_a_block_moved_at_the_launch_site_is_re_evaluated():
    rec = launch(BLOCK_M=32, BLOCK_N=32, EVEN=True)
    site = DEFAULTS.replace("mm_kernel[grid](a, c, M, N)", "mm_kernel[grid](a, c, M, N, BLOCK_N=32)")
    (got,), why = candidate_launches([rec], site, site.replace("BLOCK_N=32)", "BLOCK_N=96)"))
    assert why is None
    assert got["candidate"]["constexprs"] == {"BLOCK_N": 96, "EVEN": False}  # 128 % 96 != 0
    assert got["candidate"]["grid"] == [16, 1, 1]  # cdiv(256, 32) * cdiv(128, 96)


GRID_DEF = '''
import triton
import triton.language as tl


def _grid(META):
    return (triton.cdiv(META["n"], META["BLOCK"]),)


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


def scale(x, y, n):
    scale_kernel[_grid](x, y, n, BLOCK=64)


def scale_on(grid, x, y, n):
    scale_kernel[grid](x, y, n, BLOCK=64)
'''


def _scale_launch() -> dict:
    return {"kernel": "scale_kernel", "grid": [16, 1, 1], "count": 1, "options": {"num_warps": 4}, "args": [
        {"name": "x_ptr", "kind": "tensor", "dtype": "float32", "shape": [1000], "strides": [1]},
        {"name": "y_ptr", "kind": "tensor", "dtype": "float32", "shape": [1000], "strides": [1]},
        {"name": "n", "kind": "int", "value": 1000}, {"name": "BLOCK", "kind": "constexpr", "value": 64}]}


def test_a_grid_function_is_recomputed_and_a_grid_replay_cannot_read_is_refused():
    only_def = GRID_DEF[:GRID_DEF.index("\n\ndef scale_on")] + "\n"
    moved = only_def.replace("BLOCK=64)", "BLOCK=256)")
    (got,), why = candidate_launches([_scale_launch()], only_def, moved)
    assert why is None and got["candidate"]["grid"] == [4, 1, 1]  # `def _grid(META)` recomputed: cdiv(1000, 256)
    # a grid handed in by the caller: the recorded one may have been computed from BLOCK; never launched stale
    opaque = GRID_DEF.replace("def scale(x, y, n):\n    scale_kernel[_grid](x, y, n, BLOCK=64)\n\n\n", "")
    _, why = candidate_launches([_scale_launch()], opaque, opaque.replace("BLOCK=64)", "BLOCK=256)"))
    assert why and "`grid` replay cannot recompute" in why
    # an option alone leaves the grid as recorded: accepted
    (got,), why = candidate_launches([_scale_launch()], opaque, opaque.replace("BLOCK=64)", "BLOCK=64, num_warps=8)"))
    assert why is None and got["candidate"]["grid"] == [16, 1, 1]
