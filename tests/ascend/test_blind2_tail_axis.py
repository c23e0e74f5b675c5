"""TL405 (issue 24): a cube tile whose last axis is a head dim or an algorithm's literal 16 has no block size the
author could change; a last axis sized by a tile-size parameter (BLOCK_K) still gets the 512 B advice."""

from __future__ import annotations

from test_ascend_rules import line_of, only, report_for


def test_head_dim_and_literal_blocks_are_not_tl405() -> None:
    report, _ = report_for("head_dim")
    assert not only(report.findings, "TL405")


def test_tile_size_last_axis_is_still_tl405() -> None:
    report, case = report_for("matmul")
    lines = {f.span.line for f in only(report.findings, "TL405")}
    assert line_of(case, "a = tl.load") in lines and line_of(case, "b = tl.load") in lines
