"""On the 2,000-line benchmark file (benchmarks/lsp_latency.py), an independent client (pytest-lsp) gets at least
one code action for every diagnostic, and every one resolves to an edit (its quick fix or its ignore) against the
version it was listed for; "Show IR" and "Optimize this kernel" name the finding's kernel and line ("Show IR" only
for a client that declares the IR view in its initializationOptions)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from lsp_harness import apply_edits, open_doc, replace_text, session, wait_published
from lsprotocol import types

ROOT = Path(__file__).resolve().parents[2]


def generate(lines: int) -> str:
    spec = importlib.util.spec_from_file_location("lsp_latency", ROOT / "benchmarks" / "lsp_latency.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.generate(lines))


async def test_every_diagnostic_of_a_2000_line_file_has_an_action_with_an_edit(tmp_path: Path) -> None:
    text = generate(2000)
    assert text.count("\n") >= 2000
    path = tmp_path / "bench_kernels.py"
    path.write_text(text)
    vscode = {"clientCommands": ["tritonlens.showIr"]}  # what client-vscode says it runs itself
    async with session([tmp_path], config={"debounceMs": 30}, init_options=vscode) as (client, rec):
        uri = open_doc(client, path, text)
        diags = await wait_published(rec, uri, 1, timeout=60)
        assert len(diags) >= 10  # enough to mean something (15 since TL108 reports a row once, issue 24)
        with_edit = 0
        for d in diags:
            params = types.CodeActionParams(types.TextDocumentIdentifier(uri=uri), d.range, types.CodeActionContext([d]))
            actions = [a for a in await client.text_document_code_action_async(params) or [] if isinstance(a, types.CodeAction)]
            mine = [a for a in actions if a.diagnostics and any(x.code == d.code and x.range == d.range for x in a.diagnostics)]
            assert mine, f"no action for {d.code} at line {d.range.start.line + 1}"
            editing = [a for a in mine if a.command is None]
            assert editing, f"no fix or ignore for {d.code}"
            resolved = await client.code_action_resolve_async(editing[0])
            assert resolved.edit is not None and resolved.edit.document_changes, (d.code, editing[0].title)
            (change,) = resolved.edit.document_changes
            assert isinstance(change, types.TextDocumentEdit) and change.text_document.version == 1
            with_edit += 1
            commands = {a.command.command for a in mine if a.command is not None}
            assert {"tritonlens.showIr", "tritonlens.optimizeKernel"} <= commands, (d.code, [a.title for a in actions])
            optimize = next(a for a in mine if a.command and a.command.command == "tritonlens.optimizeKernel")
            assert optimize.command is not None
            doc_uri, kernel, evidence = optimize.command.arguments or []
            assert doc_uri == uri and kernel in text and evidence == {"code": d.code, "line": d.range.start.line + 1}
        assert with_edit == len(diags)

        # The file-wide ignore of one code, applied: every diagnostic of that code goes, nothing else does.
        code = str(diags[0].code)
        params = types.CodeActionParams(
            types.TextDocumentIdentifier(uri=uri), diags[0].range, types.CodeActionContext([diags[0]])
        )
        actions = await client.text_document_code_action_async(params) or []
        whole = next(a for a in actions if isinstance(a, types.CodeAction) and a.title == f"Ignore {code} in this file")
        resolved = await client.code_action_resolve_async(whole)
        assert resolved.edit is not None and resolved.edit.document_changes
        (change,) = resolved.edit.document_changes
        assert isinstance(change, types.TextDocumentEdit)
        replace_text(client, uri, 2, apply_edits(text, list(change.edits)))
        after = await wait_published(rec, uri, 2, timeout=60)
        assert not [d for d in after if d.code == code]
        assert len(after) == len(diags) - sum(1 for d in diags if d.code == code)
