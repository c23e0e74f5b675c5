"""Computed block sizes as knobs: a heuristic's lambda and a constexpr the wrapper computes
(`triton.next_power_of_2`, `min`, `max`), rewritten where they are written; a block that covers its whole extent
in one program only grows, one the kernel loops over or tiles the grid with may also shrink."""

from __future__ import annotations

from tritonlens.server.engine.optimize.derived_knobs import derived_moves
from tritonlens.server.engine.optimize.replay_overrides import candidate_launches

ROW = '''
import triton
import triton.language as tl


@triton.jit
def row_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, x / tl.sum(x, axis=0), mask=cols < n_cols)


def rows(x, y):
    n_rows, n_cols = x.shape
    BLOCK = min(triton.next_power_of_2(n_cols), 1024)
    row_kernel[(n_rows,)](x, y, n_cols, BLOCK=BLOCK)
'''

LOOPED = '''
import triton
import triton.language as tl


@triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"]) // 8})
@triton.jit
def sum_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(y_ptr, tl.sum(acc, axis=0))


def total(x, y):
    sum_kernel[(1,)](x, y, x.numel())
'''


def test_a_whole_extent_block_computed_in_the_wrapper_only_grows():
    moves = derived_moves(ROW, "row_kernel", ["BLOCK"])
    labels = [m.label for m in moves]
    assert any("x2" in label for label in labels) and any("cap 1024 -> 2048" in label for label in labels)
    assert not any("/2" in label or "-> 512" in label for label in labels)  # would leave columns unprocessed
    raised = next(m for m in moves if "cap 1024 -> 2048" in m.label)
    assert "BLOCK = min(triton.next_power_of_2(n_cols), 2048)" in raised.source
    assert raised.config["covers"] == "whole extent"


def test_a_looped_heuristic_block_moves_both_ways_and_replays_re_evaluated():
    moves = derived_moves(LOOPED, "sum_kernel", ["BLOCK"])
    half = next(m for m in moves if m.label.endswith("/2"))
    assert 'lambda args: max(16, (triton.next_power_of_2(args["n"]) // 8) // 2)' in half.source
    launch = {"kernel": "sum_kernel", "grid": [1, 1, 1], "count": 1, "options": {}, "args": [
        {"name": "x_ptr", "kind": "tensor", "dtype": "float32", "shape": [1000], "strides": [1]},
        {"name": "y_ptr", "kind": "tensor", "dtype": "float32", "shape": [1], "strides": [1]},
        {"name": "n", "kind": "int", "value": 1000}, {"name": "BLOCK", "kind": "constexpr", "value": 128}]}
    (got,), why = candidate_launches([launch], LOOPED, half.source)
    assert why is None and got["candidate"]["constexprs"] == {"BLOCK": 64}
    double = next(m for m in moves if m.label.endswith("x2"))
    (got,), why = candidate_launches([launch], LOOPED, double.source)
    assert why is None and got["candidate"]["constexprs"] == {"BLOCK": 256}


def test_the_wrapper_expression_replays_evaluated_on_the_recorded_arguments():
    raised = next(m for m in derived_moves(ROW, "row_kernel", ["BLOCK"]) if m.label.endswith("x2"))
    launch = {"kernel": "row_kernel", "grid": [3, 1, 1], "count": 1, "options": {}, "args": [
        {"name": "x_ptr", "kind": "tensor", "dtype": "float32", "shape": [3, 100], "strides": [100, 1]},
        {"name": "y_ptr", "kind": "tensor", "dtype": "float32", "shape": [3, 100], "strides": [100, 1]},
        {"name": "n_cols", "kind": "int", "value": 100}, {"name": "BLOCK", "kind": "constexpr", "value": 128}]}
    (got,), why = candidate_launches([launch], ROW, raised.source)
    assert why is None and got["candidate"]["constexprs"] == {"BLOCK": 256}
