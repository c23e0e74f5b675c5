"""The gate's pure parts: when a measured speedup counts, and which shapes a candidate is checked at."""

from __future__ import annotations

import pytest

from tritonlens.server.engine.optimize.loop import Budget
from tritonlens.server.engine.optimize.shapes import plan_shapes
from tritonlens.server.engine.optimize.timing import judge


def test_clear_gain_is_faster_with_spread():
    j = judge([2.00, 2.02, 1.99, 2.01, 2.00], [1.00, 1.01, 0.99, 1.00, 1.02])
    assert j.faster and j.speedup == pytest.approx(2.0, rel=0.02)
    assert 0 < j.spread < 0.05 and j.low > 1.9
    assert "interleaved" in j.reason


def test_gain_inside_noise_is_no_gain():
    # baseline itself varies by +-5 %: a 4 % gain is noise
    j = judge([1.00, 1.10, 1.00, 1.10, 1.05], [1.00, 1.02, 0.98, 1.03, 1.01])
    assert not j.faster and "inside run-to-run noise" in j.reason


def test_slower_candidate_is_rejected_as_slower():
    j = judge([1.0, 1.0, 1.0], [1.5, 1.5, 1.5])
    assert not j.faster and j.reason.startswith("slower") and j.speedup == pytest.approx(2 / 3)


def test_one_repeat_not_faster_rejects():
    j = judge([1.0, 1.0, 1.0, 1.0, 1.0], [0.5, 0.5, 0.5, 0.5, 1.01])
    assert not j.faster and "not consistently faster" in j.reason


def test_times_under_the_launch_path_say_so():
    # the gather row-tiles candidate's samples on the H200 (ms): kernels of 21 us and 6 us read as launch paths
    j = judge([0.0242, 0.0244, 0.0252, 0.0245, 0.0252], [0.0205, 0.0238, 0.0123, 0.0123, 0.0123])
    assert "launch path" in j.reason and j.faster
    assert "launch path" not in judge([0.180, 0.181, 0.180], [0.049, 0.049, 0.049]).reason  # the baseline's is a kernel's


def test_too_few_samples():
    assert not judge([1.0], [0.5]).faster


def test_test_shapes_hold_out_the_last():
    plan = plan_shapes(
        "N = 4096\nTEST_SHAPES = [{'N': 100}, {'N': 77}, {'N': 1001}]\ndef get_inputs():\n    return [N]\n"
    )
    assert [s.overrides for s in plan.search] == [{"N": 100}, {"N": 77}]
    assert [(s.overrides, s.held_out) for s in plan.held_out] == [({"N": 1001}, True)]
    assert plan.timing.overrides == {} and plan.timing.label == "4096" and not plan.guessed


def test_shapes_derived_from_size_globals_are_named_a_guess():
    source = "M = 64\nN = 128\nK = 3\ndef get_inputs():\n    return [M, N]\n"
    plan = plan_shapes(source)
    assert plan.guessed and "a guess" in plan.source_note and "M, N" in plan.source_note
    odd = plan.search[1].overrides
    assert odd == {"M": 61, "N": 125}  # no multiple of any power-of-two block
    assert plan.held_out[0].overrides == {"M": 33, "N": 65} and plan.held_out[0].held_out


def test_no_sizes_says_what_to_add():
    plan = plan_shapes("def get_inputs():\n    return []\n")
    assert plan.held_out == () and "add TEST_SHAPES" in plan.source_note
    with pytest.raises(ValueError, match="syntax error"):
        plan_shapes("def (:\n")


def test_budget_parse():
    b = Budget.parse("candidates=5, seconds=60")
    assert (b.candidates, b.rounds, b.seconds) == (5, 3, 60.0)
    with pytest.raises(ValueError, match="use candidates=N"):
        Budget.parse("tries=3")
