"""End-to-end tests: pytest-lsp's client against the real `tritonlens serve` subprocess over stdio."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from pathlib import Path

import pytest
from lsp_harness import (
    apply_edits,
    open_doc,
    replace_text,
    resolved_lenses,
    session,
    wait_for,
    wait_published,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException

# A tutorial-style vector add with two classic mistakes: BLOCK_SIZE is a runtime argument (TL101, with a fix)
# and the launch uses a block of 1000 (not a power of two).
KERNEL = """import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add(x, y, out):
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1000),)](x, y, out, n, BLOCK_SIZE=1000)
"""
FAST = {"debounceMs": 30}


def codes(diags: list[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diags)


def line_of(text: str, fragment: str) -> int:
    """0-based line of the first line containing `fragment`."""
    return next(i for i, line in enumerate(text.split("\n")) if fragment in line)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


async def test_open_then_burst_publishes_only_the_final_version(ws: Path):
    # A debounce well above the time the ten edits take to send, even on a loaded 2-core machine (the tests run
    # on two workers): at 150 ms a slow sender let the debounce expire between edits and version 2 was analysed.
    async with session([ws], config={"debounceMs": 1000}) as (client, rec):
        uri = open_doc(client, ws / "k.py", KERNEL)
        first = await wait_published(rec, uri, 1)
        assert "TL101" in codes(first)
        assert all(d.source == "tritonlens" for d in first)
        tl101 = next(d for d in first if d.code == "TL101")
        assert tl101.range.start.line == line_of(KERNEL, "def add_kernel")
        rec.published.clear()

        # Ten quick edits, each inserting a line at the top; the last one makes BLOCK_SIZE a constexpr.
        text = KERNEL
        for version in range(2, 12):
            text = f"# edit {version}\n" + text
            if version == 11:
                text = text.replace("BLOCK_SIZE):", "BLOCK_SIZE: tl.constexpr):")
            replace_text(client, uri, version, text)
        final = await wait_published(rec, uri, 11)
        await asyncio.sleep(0.6)  # anything stale would have arrived by now
        versions = [p.version for p in rec.for_uri(uri)]
        # Never a version older than one already shown, and the newest last. A request that needs the current
        # analysis (code lens, pull) may analyse the newest version mid-burst on a loaded machine: that is not stale.
        assert versions == sorted(set(versions)) and versions[-1] == 11, versions
        assert len(versions) <= 3, versions  # the debounce still coalesced the burst
        assert "TL101" not in codes(final)
        assert all(d.data["version"] == 11 for d in final)


async def test_hover_shows_rule_evidence_and_gain(ws: Path):
    async with session([ws], config=FAST) as (client, rec):
        uri = open_doc(client, ws / "k.py", KERNEL)
        diags = await wait_published(rec, uri, 1)
        d = next(d for d in diags if d.code == "TL101")
        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=d.range.start)
        )
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        md = hover.contents.value
        assert "**TL101**" in md and "**Evidence**" in md and "**Why**" in md
        assert "BLOCK_SIZE" in md  # the AST excerpt that triggered it
        nothing = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 0)
            )
        )
        assert nothing is None


async def test_code_action_resolves_to_a_versioned_edit_that_applies(ws: Path):
    async with session([ws], config=FAST) as (client, rec):
        uri = open_doc(client, ws / "k.py", KERNEL)
        diags = await wait_published(rec, uri, 1)
        d = next(d for d in diags if d.code == "TL101")
        ctx = types.CodeActionContext(diagnostics=[d])
        params = types.CodeActionParams(types.TextDocumentIdentifier(uri=uri), d.range, ctx)
        actions = await client.text_document_code_action_async(params)
        assert actions
        action = next(a for a in actions if isinstance(a, types.CodeAction) and "constexpr" in a.title)
        assert action.edit is None  # listed cheaply; the edit comes from resolve
        resolved = await client.code_action_resolve_async(action)
        assert resolved.edit is not None and resolved.edit.document_changes
        (change,) = resolved.edit.document_changes
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.uri == uri and change.text_document.version == 1
        fixed = apply_edits(KERNEL, list(change.edits))
        assert "BLOCK_SIZE: tl.constexpr" in fixed and fixed.count("\n") == KERNEL.count("\n")

        # The user applies it: the finding disappears.
        replace_text(client, uri, 2, fixed)
        after = await wait_published(rec, uri, 2)
        assert "TL101" not in codes(after)

        # Resolving the old action now: the finding is gone, so no edit (never one for a stale version).
        stale = await client.code_action_resolve_async(action)
        assert stale.edit is None

        # An unrelated edit above the kernel: resolve gives a fresh edit against the new version.
        replace_text(client, uri, 3, "# comment\n" + KERNEL)
        await wait_published(rec, uri, 3)
        new_diag = next(d for d in client.diagnostics[uri] if d.code == "TL101")
        params = types.CodeActionParams(
            types.TextDocumentIdentifier(uri=uri), new_diag.range, types.CodeActionContext([new_diag])
        )
        fresh_action = next(
            a for a in await client.text_document_code_action_async(params) if "constexpr" in a.title
        )
        replace_text(client, uri, 4, "# another\n# comment\n" + KERNEL)
        fresh = await client.code_action_resolve_async(fresh_action)
        if fresh.edit is not None:  # either no edit, or one that fits version 4 exactly
            (change,) = fresh.edit.document_changes
            assert change.text_document.version == 4
            fixed = apply_edits("# another\n# comment\n" + KERNEL, list(change.edits))
            assert "BLOCK_SIZE: tl.constexpr):" in fixed


async def test_configuration_change_applies_without_restart(ws: Path):
    async with session([ws], config=FAST) as (client, rec):
        uri = open_doc(client, ws / "k.py", KERNEL)
        before = await wait_published(rec, uri, 1)
        assert "TL101" in codes(before)
        count = len(rec.for_uri(uri))
        client.set_configuration(
            {**FAST, "ignore": ["TL101"], "severity": {"TL102": "hint"}}, section="tritonlens"
        )
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await wait_for(lambda: len(rec.for_uri(uri)) > count, what="re-published diagnostics")
        after = list(rec.for_uri(uri)[-1].diagnostics)
        assert "TL101" not in codes(after)
        assert all(d.severity == types.DiagnosticSeverity.Hint for d in after if d.code == "TL102")

        # A bad value is reported to the user, and the server keeps going with defaults.
        client.set_configuration({"target": "tpu"}, section="tritonlens")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await wait_for(lambda: any("tpu" in m.message for m in rec.messages), what="a settings warning")
        await wait_for(
            lambda: "TL101" in codes(list(rec.for_uri(uri)[-1].diagnostics)), what="defaults again"
        )


async def test_per_folder_configuration(tmp_path: Path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    async with session([a, b], config=FAST) as (client, rec):
        client.set_configuration({**FAST, "ignore": ["TL101"]}, section="tritonlens", scope_uri=b.as_uri())
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await asyncio.sleep(0.2)
        uri_a = open_doc(client, a / "k.py", KERNEL)
        uri_b = open_doc(client, b / "k.py", KERNEL)
        assert "TL101" in codes(await wait_published(rec, uri_a, 1))
        assert "TL101" not in codes(await wait_published(rec, uri_b, 1))


async def test_syntax_error_reports_tl001_then_recovers(ws: Path):
    async with session([ws], config=FAST) as (client, rec):
        uri = open_doc(client, ws / "k.py", KERNEL)
        await wait_published(rec, uri, 1)
        broken = KERNEL.replace("mask = offsets < n_elements", "mask = (offsets < n_elements")
        replace_text(client, uri, 2, broken)
        diags = await wait_published(rec, uri, 2)
        assert codes(diags) == ["TL001"]
        assert diags[0].severity == types.DiagnosticSeverity.Error
        assert abs(diags[0].range.start.line - line_of(broken, "mask = (offsets")) <= 1
        # Half-typed code keeps the server alive: hover and the kernels list still answer.
        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri=uri), diags[0].range.start)
        )
        assert hover is not None and "TL001" in hover.contents.value
        replace_text(client, uri, 3, KERNEL)
        assert "TL101" in codes(await wait_published(rec, uri, 3))


async def test_close_clears_diagnostics_and_non_triton_files_are_quiet(ws: Path):
    async with session([ws], config=FAST) as (client, rec):
        uri = open_doc(client, ws / "k.py", KERNEL)
        assert await wait_published(rec, uri, 1)
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
        )
        await wait_for(lambda: len(rec.for_uri(uri)[-1].diagnostics) == 0, what="cleared diagnostics")

        plain = "import os\n\n\ndef main():\n    print(os.getcwd())\n"
        other = open_doc(client, ws / "plain.py", plain)
        assert await wait_published(rec, other, 1) == []


async def test_pull_diagnostics_when_the_client_supports_them(ws: Path):
    # A long debounce: the pulls below must be answered by analyzing at once, not by the debounced run.
    async with session([ws], config={"debounceMs": 600}, pull=True) as (client, rec):
        uri = open_doc(client, ws / "k.py", KERNEL)
        ident = types.TextDocumentIdentifier(uri=uri)
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=ident)
        )
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        assert "TL101" in codes(list(report.items))
        same = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=ident, previous_result_id=report.result_id)
        )
        assert isinstance(same, types.RelatedUnchangedDocumentDiagnosticReport)

        fixed = KERNEL.replace("BLOCK_SIZE):", "BLOCK_SIZE: tl.constexpr):")
        refreshes = client.diagnostic_refresh_count
        replace_text(client, uri, 2, fixed)
        # Pulled right after the change (inside the debounce): answered for version 2, not the stale one.
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=ident)
        )
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        assert "TL101" not in codes(list(report.items))
        assert all(d.data["version"] == 2 for d in report.items)
        await asyncio.sleep(0.3)
        assert rec.for_uri(uri) == []  # nothing pushed to a pulling client
        assert client.diagnostic_refresh_count == refreshes  # that pull got its answer directly

        # A change the client does not pull for: once analyzed, the server asks it to pull again.
        replace_text(client, uri, 3, KERNEL)
        await wait_for(
            lambda: client.diagnostic_refresh_count > refreshes, what="workspace/diagnostic/refresh"
        )
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=ident)
        )
        assert "TL101" in codes(list(report.items))


async def test_kernels_request_covers_workspace_and_follows_disk(ws: Path):
    (ws / "on_disk.py").write_text(KERNEL.replace("add_kernel", "disk_kernel"))
    (ws / ".venv").mkdir()
    (ws / ".venv" / "vendored.py").write_text(KERNEL.replace("add_kernel", "vendored_kernel"))
    async with session([ws], config=FAST) as (client, rec):

        async def kernels() -> dict[str, dict]:
            rows = await client.protocol.send_request_async("tritonlens/kernels", None)
            return {row["name"]: row for row in rows}

        found: dict[str, dict] = {}
        for _ in range(100):
            found = await kernels()
            if "disk_kernel" in found:
                break
            await asyncio.sleep(0.1)
        assert "disk_kernel" in found and "vendored_kernel" not in found
        row = found["disk_kernel"]
        assert row["path"] == str(ws / "on_disk.py") and row["line"] == line_of(KERNEL, "def add_kernel") + 1
        assert "TL101" in {f["code"] for f in row["findings"]}
        assert row["platforms"] == ["cuda"]  # nothing Ascend in it: only the CUDA runner is needed (status bar)

        # An open document uses the editor's text, not the disk's.
        uri = open_doc(client, ws / "on_disk.py", KERNEL.replace("add_kernel", "edited_kernel"))
        await wait_published(rec, uri, 1)
        found = await kernels()
        assert "edited_kernel" in found and "disk_kernel" not in found
        assert found["edited_kernel"]["platforms"] == ["cuda"]
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri))
        )

        # Changed on disk outside the editor: created, then deleted.
        (ws / "new_file.py").write_text(KERNEL.replace("add_kernel", "new_kernel"))
        for _ in range(100):
            if "new_kernel" in await kernels():
                break
            await asyncio.sleep(0.1)
        assert "new_kernel" in await kernels()
        await wait_for(lambda: rec.kernels_changed > 0, what="tritonlens/kernelsChanged")
        (ws / "new_file.py").unlink()
        for _ in range(100):
            if "new_kernel" not in await kernels():
                break
            await asyncio.sleep(0.1)
        assert "new_kernel" not in await kernels()


async def test_workspace_folders_added_and_removed(tmp_path: Path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (b / "k.py").write_text(KERNEL.replace("add_kernel", "b_kernel"))
    async with session([a], config=FAST) as (client, _rec):
        folder_b = types.WorkspaceFolder(uri=b.as_uri(), name="b")

        async def names() -> set[str]:
            return {r["name"] for r in await client.protocol.send_request_async("tritonlens/kernels", None)}

        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                types.WorkspaceFoldersChangeEvent(added=[folder_b], removed=[])
            )
        )
        for _ in range(100):
            if "b_kernel" in await names():
                break
            await asyncio.sleep(0.1)
        assert "b_kernel" in await names()
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                types.WorkspaceFoldersChangeEvent(added=[], removed=[folder_b])
            )
        )
        for _ in range(100):
            if "b_kernel" not in await names():
                break
            await asyncio.sleep(0.1)
        assert "b_kernel" not in await names()


async def test_code_lens_and_commands(ws: Path):
    async with session([ws], config=FAST) as (client, rec):
        uri = open_doc(client, ws / "k.py", KERNEL)
        diags = await wait_published(rec, uri, 1)
        lenses = await resolved_lenses(client,
            types.CodeLensParams(types.TextDocumentIdentifier(uri=uri))
        )
        # Later levels add their own lenses; the triage lens is the one running tritonlens.kernelFindings.
        (lens,) = [x for x in lenses if x.command and x.command.command == "tritonlens.kernelFindings"]
        assert lens.range.start.line == line_of(KERNEL, "def add_kernel")
        kernel_diags = [d for d in diags if d.data.get("kernel") == "add_kernel"]
        assert lens.command is not None and f"{len(kernel_diags)} finding" in lens.command.title
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=lens.command.command, arguments=lens.command.arguments)
        )
        assert sorted(f["code"] for f in result) == sorted(str(d.code) for d in kernel_diags)
        listed = await client.protocol.send_request_async("tritonlens/commands", None)
        assert lens.command.command in {c["command"] for c in listed}


async def test_malformed_requests_get_errors_and_the_server_keeps_serving(ws: Path):
    async with session([ws], config=FAST) as (client, rec):
        uri = open_doc(client, ws / "k.py", KERNEL)
        await wait_published(rec, uri, 1)
        # Raw JSON the typed client would refuse to send: params of the wrong shape.
        fut: Future = Future()
        client.protocol._request_futures["bad-1"] = fut
        client.protocol._send_data(
            {"jsonrpc": "2.0", "id": "bad-1", "method": "textDocument/hover", "params": {"textDocument": 5}}
        )
        with pytest.raises(JsonRpcException, match="invalid params"):
            await asyncio.wait_for(asyncio.wrap_future(fut), 10)
        with pytest.raises(JsonRpcException, match="missing argument"):
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="tritonlens.kernelFindings", arguments=[])
            )
        with pytest.raises(JsonRpcException):
            await client.protocol.send_request_async("tritonlens/noSuchMethod", None)
        # Hover on a document that was never opened: an answer, not a crash.
        assert (
            await client.text_document_hover_async(
                types.HoverParams(
                    types.TextDocumentIdentifier(uri=(ws / "nope.py").as_uri()), types.Position(0, 0)
                )
            )
            is None
        )
        replace_text(client, uri, 2, KERNEL + "\n")
        assert "TL101" in codes(await wait_published(rec, uri, 2))


async def test_long_work_reports_progress_and_can_be_cancelled(ws: Path):
    body = "".join(
        KERNEL.replace("add_kernel", f"k{i}").replace("def add(", f"def add{i}(") for i in range(5)
    )
    for i in range(80):
        (ws / f"m{i:03d}.py").write_text(body)
    async with session([ws], config=FAST, progress=True) as (client, _rec):
        run = types.ExecuteCommandParams(command="tritonlens.reanalyze", arguments=[])
        result = await client.workspace_execute_command_async(run)
        assert result["files"] == result["total"] == 80 and not result["cancelled"]
        (token,) = client.progress_reports
        kinds = [type(v).__name__ for v in client.progress_reports[token]]
        assert kinds[0] == "WorkDoneProgressBegin" and kinds[-1] == "WorkDoneProgressEnd"
        assert "WorkDoneProgressReport" in kinds

        task = asyncio.ensure_future(client.workspace_execute_command_async(run))
        await wait_for(lambda: len(client.progress_reports) == 2, what="a second progress token")
        (second,) = [t for t in client.progress_reports if t != token]
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=second))
        result = await asyncio.wait_for(task, 30)
        assert result["cancelled"] and result["files"] < result["total"]
        end = client.progress_reports[second][-1]
        assert isinstance(end, types.WorkDoneProgressEnd) and end.message == "cancelled"
