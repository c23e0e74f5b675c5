"""End to end in the editor (pytest-lsp, interpret backend): a slow first-draft KernelBench kernel gets a verified
rewrite as a code action (no speed claim under interpret), its edit comes from codeAction/resolve for the version
that was verified, `tritonlens/candidate` returns the full text, and the applied text passes verification."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest
from lsp_harness import apply_edits, open_doc, replace_text, resolved_lenses, session, wait_published
from lsprotocol import types

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "bench" / "reduction" / "row_sum.py"  # BLOCK_SIZE=128 for rows of thousands of elements
CONFIG = {"profileBackend": "interpret", "optimizeBudget": "candidates=1,rounds=1", "escalation": {"onSave": False}}

pytestmark = pytest.mark.cuda_env


@pytest.fixture(scope="module")
def cuda_env() -> None:
    try:
        find_environment("cuda")
    except EnvironmentUnavailable as exc:
        pytest.skip(f"cuda runner environment missing: {exc}")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("TRITONLENS_CACHE_DIR", str(tmp_path / "cache"))
    yield tmp_path / "cache"


@pytest.mark.usefixtures("cuda_env", "cache")
async def test_optimize_offers_a_verified_rewrite_that_applies_and_verifies(tmp_path: Path):
    text = TASK.read_text()
    path = tmp_path / "row_sum.py"
    path.write_text(text)
    async with session([tmp_path], config=CONFIG, progress=True) as (client, rec):
        uri = open_doc(client, path, text)
        await wait_published(rec, uri, 1, timeout=60)
        lenses = await resolved_lenses(client, types.CodeLensParams(types.TextDocumentIdentifier(uri)))
        (lens,) = [x for x in lenses if x.command and x.command.command == "tritonlens.optimizeKernel"]
        assert lens.command.title == "tritonlens: optimize"
        summary = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tritonlens.optimizeKernel", arguments=lens.command.arguments)
        )
        assert summary["error"] is None and summary["backend"] == "interpret" and not summary["timingMeaningful"]
        (offer,) = summary["offers"]
        assert offer["faster"] is False and offer["speedup"] is None  # interpret: never claimed faster
        assert client.progress_reports, "the run reported $/progress"

        kernel_line = next(i for i, line in enumerate(text.splitlines()) if line.startswith("def row_sum_kernel"))
        here = types.Range(types.Position(kernel_line + 2, 4), types.Position(kernel_line + 2, 4))
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(types.TextDocumentIdentifier(uri), here, types.CodeActionContext(diagnostics=[]))
        )
        mine = [a for a in actions or [] if isinstance(a.data, dict) and a.data.get("provider") == "optimize"]
        (action,) = mine
        assert action.title.startswith("Apply verified-correct rewrite (not timed: no speed claim)")
        assert "max error" in action.title and action.edit is None  # the edit comes from resolve
        resolved = await client.code_action_resolve_async(action)
        (doc_edit,) = resolved.edit.document_changes
        assert doc_edit.text_document.version == 1
        annotation = next(iter(resolved.edit.change_annotations.values()))
        assert annotation.label == "verified rewrite"
        assert annotation.needs_confirmation is False  # applied in one step; a preview shows it ticked (issue 23)
        new_text = apply_edits(text, list(doc_edit.edits))

        full = await client.protocol.send_request_async("tritonlens/candidate", {"uri": uri, "id": offer["id"]})
        full = full if isinstance(full, dict) else full._asdict()  # pygls answers custom requests with a namedtuple
        assert full["source"] == new_text and full["current"] and full["diff"].startswith("--- a/")

        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(kernel_line, 6))
        )
        assert "Verified rewrite" in hover.contents.value and "held out" in hover.contents.value
        # the hover links the client's diff view with (uri, id) as the command's JSON arguments
        link = re.search(r"\(command:tritonlens\.showCandidateDiff\?([^)]+)\)", hover.contents.value)
        assert link and json.loads(unquote(link.group(1))) == [uri, offer["id"]]

        replace_text(client, uri, 2, text + "\n# edited\n")  # the buffer moves on: the offer is dropped
        await wait_published(rec, uri, 2, timeout=60)
        stale = await client.code_action_resolve_async(action)
        assert stale.edit is None and stale.data.get("stale")
        again = await client.text_document_code_action_async(
            types.CodeActionParams(types.TextDocumentIdentifier(uri), here, types.CodeActionContext(diagnostics=[]))
        )
        assert not [a for a in again or [] if isinstance(a.data, dict) and a.data.get("provider") == "optimize"]

    # the applied text passes the runner's verification on its own (ModelNew vs Model at every test shape)
    applied = tmp_path / "applied.py"
    applied.write_text(new_text)
    shapes = [{"label": "a", "overrides": {"M": 16, "N": 512}}, {"label": "b", "overrides": {"M": 13, "N": 301}}]
    with LocalRunner({"cache": False}) as runner:
        reply = runner.verify(
            "interpret", {"harness": {"mode": "kernelbench", "path": str(applied)}, "seeds": [3], "shapes": shapes}
        )
    assert reply["ok"] and reply["result"]["passed"], reply


@pytest.mark.usefixtures("cuda_env", "cache")
async def test_optimize_is_cancellable_from_the_editor(tmp_path: Path):
    import asyncio

    from lsp_harness import wait_for

    text = TASK.read_text()
    path = tmp_path / "row_sum.py"
    path.write_text(text)
    async with session([tmp_path], config={**CONFIG, "optimizeBudget": "candidates=6,rounds=3"}, progress=True) as (
        client,
        rec,
    ):
        uri = open_doc(client, path, text)
        await wait_published(rec, uri, 1, timeout=60)
        run = types.ExecuteCommandParams(command="tritonlens.optimizeKernel", arguments=[uri, "row_sum_kernel"])
        task = asyncio.ensure_future(client.workspace_execute_command_async(run))
        await wait_for(lambda: client.progress_reports, timeout=60, what="a progress token")
        (token,) = client.progress_reports
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        summary = await asyncio.wait_for(task, 240)
        assert summary["cancelled"] and summary["offers"] == []
        end = client.progress_reports[token][-1]
        assert isinstance(end, types.WorkDoneProgressEnd) and end.message == "cancelled"
