"""In the editor (pytest-lsp, interpret backend): Optimize kernel on a file that is not in KernelBench form but
has recorded launches (examples/naive_softmax.py, recorded with `tritonlens record --backend interpret`) offers
rewrites verified by replaying those launches, and the hover record says so."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_harness import open_doc, session, wait_published
from lsprotocol import types

ROOT = Path(__file__).resolve().parents[2]
TRITONLENS = Path(sys.executable).parent / "tritonlens"
CONFIG = {"profileBackend": "interpret", "optimizeBudget": "candidates=3,rounds=1", "escalation": {"onSave": False}}
DRIVER = "import torch\nimport naive_softmax as m\ntorch.manual_seed(0)\nm.softmax(torch.randn(3, 100), torch.ones(1))\n"

pytestmark = pytest.mark.cuda_env


async def test_optimize_on_a_recorded_file_offers_rewrites_verified_by_replay(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("TRITONLENS_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copy(ROOT / "examples" / "naive_softmax.py", tmp_path / "naive_softmax.py")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    (tmp_path / "driver.py").write_text(DRIVER)
    record = subprocess.run([str(TRITONLENS), "record", "--backend", "interpret", "--", "python", "driver.py"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    if record.returncode != 0 and "environment" in record.stderr:
        pytest.skip(f"cuda runner environment missing: {record.stderr[-300:]}")
    assert record.returncode == 0, record.stdout + record.stderr
    path = tmp_path / "naive_softmax.py"
    text = path.read_text()
    async with session([tmp_path], config=CONFIG, progress=True) as (client, rec):
        uri = open_doc(client, path, text)
        await wait_published(rec, uri, 1, timeout=60)
        summary = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tritonlens.optimizeKernel", arguments=[uri, "softmax_kernel"])
        )
        assert summary["error"] is None, summary
        assert summary["offers"], summary  # kernel-body recipes verified by replay (launch-site ones refused)
        line = next(i for i, x in enumerate(text.splitlines()) if x.startswith("def softmax_kernel"))
        here = types.Range(types.Position(line + 10, 4), types.Position(line + 10, 4))
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(types.TextDocumentIdentifier(uri), here, types.CodeActionContext(diagnostics=[]))
        )
        mine = [a for a in actions or [] if isinstance(a.data, dict) and a.data.get("provider") == "optimize"]
        assert mine and all(a.title.startswith("Apply verified-correct rewrite") for a in mine)
        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, 6))
        )
        assert "on the recorded launches" in hover.contents.value
        assert "softmax_kernel launch 1" in hover.contents.value
