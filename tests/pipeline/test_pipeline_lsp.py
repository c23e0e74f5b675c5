"""Levels 3-4 in the real language server (subprocess): analyzeKernel merges compiler findings into the
document's diagnostics, `tritonlens/ir` returns a stage with its line map, the code lens shows the summary,
and an edit to the kernel drops what the compiler said about the old text."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "server"))

from lsp_harness import open_doc, replace_text, resolved_lenses, session, wait_for, wait_published  # noqa: E402

pytestmark = [pytest.mark.cuda_env, pytest.mark.usefixtures("cuda_env", "compile_cache")]


def codes(diags: list[types.Diagnostic]) -> set[str]:
    return {str(d.code) for d in diags}


async def test_analyze_kernel_ir_view_and_lens(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "matmul.py").read_text()
    dot_line = next(i for i, t in enumerate(text.splitlines(), start=1) if "accumulator = tl.dot(" in t)
    path = tmp_path / "matmul.py"
    path.write_text(text)
    async with session([tmp_path], config={"debounceMs": 0, "irTarget": "sm_90"}) as (client, rec):
        uri = open_doc(client, path, text)
        first = await wait_published(rec, uri, 1)
        assert "TL305" not in codes(first)  # level 1 alone cannot see the FMA lowering

        rows = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tritonlens.analyzeKernel", arguments=[uri, "matmul_kernel"])
        )
        assert rows[0]["kernel"] == "matmul_kernel" and rows[0]["error"] is None
        assert rows[0]["summary"]["variant"].startswith("launch at line")

        def has_tl305() -> list[types.Diagnostic]:
            latest = rec.for_uri(uri)[-1].diagnostics or []
            return [d for d in latest if str(d.code) == "TL305"]

        (diag,) = await wait_for(has_tl305, 30, "TL305 from the compiler")
        assert diag.range.start.line == dot_line - 1

        ir = await client.protocol.send_request_async(
            "tritonlens/ir", {"uri": uri, "kernel": "matmul_kernel", "stage": "ttgir"}
        )
        ir = ir if isinstance(ir, dict) else ir._asdict()  # pygls answers custom requests with a namedtuple
        assert ir["stage"] == "ttgir" and "ptx" in ir["stages"]
        assert "tt.dot" in ir["text"]
        ir_lines = ir["text"].splitlines()
        dot_ir = [pair[1] for pair in ir["lineMap"] if pair[0] == dot_line]
        assert any("tt.dot" in ir_lines[n - 1] for n in dot_ir)

        lenses = await resolved_lenses(client,
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        titles = [lens.command.title for lens in lenses if lens.command]
        assert any(t.startswith("tritonlens sm_90") and "compiler finding" in t for t in titles), titles

        # editing the kernel's body invalidates the compiler's findings for it
        replace_text(client, uri, 2, text.replace('input_precision="ieee"', 'input_precision="tf32"'))
        after = await wait_published(rec, uri, 2)
        assert "TL305" not in codes(after)


async def test_analyze_kernel_rejects_bad_arguments(tmp_path: Path) -> None:
    from pygls.exceptions import JsonRpcException

    async with session([tmp_path], config={"debounceMs": 0}) as (client, rec):
        with pytest.raises(JsonRpcException, match="document URI"):
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="tritonlens.analyzeKernel", arguments=[])
            )
        path = tmp_path / "k.py"
        uri = open_doc(client, path, "x = 1\n")
        await wait_published(rec, uri, 1)
        with pytest.raises(JsonRpcException, match="unknown target"):
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="tritonlens.analyzeKernel", arguments=[uri, "k", "sm_7"])
            )
