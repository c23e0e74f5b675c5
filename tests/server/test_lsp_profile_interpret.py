"""Issue 23, items 5 and 7 in the editor (pytest-lsp, interpret backend): Profile kernel runs a KernelBench task at
its smallest TEST_SHAPES entry and says so in its answer, and `tritonlens/roofline` answers the chart of that
profile: the compile target's datasheet ceilings (the run had no GPU), no point placed, and why."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from lsp_harness import open_doc, session, wait_published
from lsprotocol import types

from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment

TASK = Path(__file__).resolve().parents[1] / "fixtures" / "optimize" / "kb_scale.py"  # N=4096, TEST_SHAPES 1000/1537


async def test_profile_under_interpret_uses_test_shapes_and_answers_a_roofline(tmp_path: Path, monkeypatch) -> None:
    try:
        find_environment("cuda")
    except EnvironmentUnavailable as exc:
        pytest.skip(f"cuda runner environment missing: {exc}")
    monkeypatch.setenv("TRITONLENS_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "kb_scale.py"
    path.write_text(TASK.read_text())
    config = {"debounceMs": 30, "profileBackend": "interpret", "target": "cuda", "irTarget": "sm_90",
              "escalation": {"onSave": False, "onSymptom": False}}
    async with session([tmp_path], config=config, progress=True) as (client, rec):
        uri = open_doc(client, path, path.read_text())
        await wait_published(rec, uri, 1, timeout=60)
        def plain(x):  # pygls answers custom requests with namedtuples
            return {k: plain(v) for k, v in x._asdict().items()} if hasattr(x, "_asdict") else x

        before = plain(await client.protocol.send_request_async("tritonlens/roofline", {"uri": uri}))
        assert before["svg"] is None and "not profiled yet" in before["why"]
        (row,) = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tritonlens.profileKernel", arguments=[uri, "scale_kernel"])
        )
        assert row["error"] is None and row["launches"] == 1, row
        assert "smallest TEST_SHAPES entry (N=1000)" in row["note"]
        values = [v for vals in client.progress_reports.values() for v in vals]
        progress = [str((v.get("message") if isinstance(v, dict) else getattr(v, "message", None)) or "") for v in values]
        assert any("at N=1000" in m for m in progress), progress
        chart = plain(await client.protocol.send_request_async("tritonlens/roofline", {"uri": uri}))
        ET.fromstring(chart["svg"])
        assert "datasheet of sm_90" in chart["svg"] and chart["chart"]["points"] == []
        assert chart["why"].startswith("no launch placed: scale_kernel: not timed")
