"""End to end on triton-ascend for ascend910b3 (ttir + ttadapter; npubin needs CANN, absent in CI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

pytestmark = [pytest.mark.ascend_env, pytest.mark.usefixtures("ascend_env", "compile_cache")]


def line_of(path: Path, needle: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), start=1) if needle in text)


def test_gather_is_scalarized_on_ascend(cli) -> None:
    path = EXAMPLES / "gather.py"
    result = cli("check", "--level", "ir", "--target", "ascend910b3", "--format", "json", str(path))
    assert result.rc == 1, result.err
    findings = json.loads(result.out)
    assert not [f for f in findings if f["code"] == "TL400"]
    line = line_of(path, "values = tl.load(table_ptr + idx")
    (gather,) = [f for f in findings if f["code"] == "TL401" and f["span"]["line"] == line]
    assert gather["kernel"] == "gather_kernel" and gather["platforms"] == ["ascend"]
    ir = [e for e in gather["evidence"] if e["stage"] == "ttadapter"]
    assert ir and "DiscreteMemAccess" in ir[0]["excerpt"]
    # only Ascend rules for an Ascend target
    assert not [f for f in findings if f["code"].startswith("TL3")]


def test_ttadapter_with_source_markers(cli) -> None:
    path = EXAMPLES / "gather.py"
    result = cli("ir", str(path), "--kernel", "gather_kernel", "--stage", "ttadapter")
    assert result.rc == 0, result.err
    line = line_of(path, "values = tl.load(table_ptr + idx")
    lines = result.out.splitlines()
    starts = [
        i for i, text in enumerate(lines) if text.startswith(f"// ---- gather.py:{line}  values = tl.load(")
    ]
    assert starts
    blocks = []
    for start in starts:
        end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("// ----")), len(lines))
        blocks.append("\n".join(lines[start + 1 : end]))
    assert any("DiscreteMemAccess" in block for block in blocks)
