"""Escalation without a command: saving compiles the kernels whose text changed since their last IR analysis
(cuda environment, sm_90) and merges the compiler's findings (TL305 on examples/matmul.py, which triage alone
cannot see); a newer save cancels an older in-flight escalation; a result for a version the editor has moved
past is dropped; with onSave off, nothing compiles."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import open_doc, replace_text, resolved_lenses, save_doc, session, wait_for, wait_published
from lsprotocol import types

ROOT = Path(__file__).resolve().parents[2]
MATMUL = ROOT / "examples" / "matmul.py"
DOT = 'accumulator = tl.dot(a, b, accumulator, input_precision="ieee")'

pytestmark = [pytest.mark.cuda_env, pytest.mark.slow, pytest.mark.usefixtures("cuda_env", "compile_cache")]


def _tl305(diags: list[types.Diagnostic] | None) -> list[types.Diagnostic]:
    return [d for d in diags or [] if str(d.code) == "TL305"]


def _edited(text: str, tag: str) -> str:
    """The kernel's text changes (a comment beside the dot), so its hash changes; the IR does not."""
    return text.replace(DOT, f"{DOT}  # {tag}")


def _escalations(client: Any) -> list[list[Any]]:
    return [
        list(v)
        for v in client.progress_reports.values()
        if v and getattr(v[0], "title", "").startswith("tritonlens: compiling")
    ]


def _ended(client: Any) -> list[str]:
    return [v[-1].message for v in _escalations(client) if v[-1].kind == "end"]


async def test_save_escalates_cancels_older_and_drops_stale(tmp_path: Path, capsys: Any) -> None:
    text = MATMUL.read_text()
    path = tmp_path / "matmul.py"
    path.write_text(text)
    config = {"debounceMs": 0, "irTarget": "sm_90", "escalation": {"onSave": True}}
    async with session([tmp_path], config=config, progress=True) as (client, rec):
        uri = open_doc(client, path, text)
        assert not _tl305(await wait_published(rec, uri, 1))
        await asyncio.sleep(0.5)
        assert _escalations(client) == []  # opening and typing never compile

        started = time.perf_counter()
        save_doc(client, uri)
        await wait_for(
            lambda: any(p.version == 1 and _tl305(p.diagnostics) for p in rec.for_uri(uri)), 120, "TL305"
        )
        with capsys.disabled():
            print(f"\nsave -> compiler findings (cold compile cache): {time.perf_counter() - started:.2f} s")
        await wait_for(lambda: _ended(client) == ["done"], 10, "the escalation's progress end")
        (first,) = _escalations(client)
        assert first[0].kind == "begin" and "1 changed kernel(s) for sm_90 (save)" in first[0].title

        # saving again without a change compiles nothing (the kernel's text is what was analyzed)
        save_doc(client, uri)
        await asyncio.sleep(1.0)
        assert len(_escalations(client)) == 1

        # two saves in a row: the newer one supersedes the older in-flight escalation
        replace_text(client, uri, 2, _edited(text, "v2"))
        save_doc(client, uri)
        await wait_for(lambda: len(_escalations(client)) == 2, 30, "the second escalation to begin")
        replace_text(client, uri, 3, _edited(text, "v3"))
        save_doc(client, uri)
        await wait_for(
            lambda: any(p.version == 3 and _tl305(p.diagnostics) for p in rec.for_uri(uri)), 120, "TL305 v3"
        )
        await wait_for(lambda: len(_ended(client)) == 3, 30, "both escalations to end")
        assert _ended(client) == ["done", "cancelled", "done"]
        assert not any(p.version == 2 and _tl305(p.diagnostics) for p in rec.for_uri(uri))

        # save, then type before the compile finishes: the result for the saved version is dropped
        replace_text(client, uri, 4, _edited(text, "v4"))
        save_doc(client, uri)
        await wait_for(lambda: len(_escalations(client)) == 4, 30, "the fourth escalation to begin")
        replace_text(client, uri, 5, _edited(text, "v5"))
        await wait_for(lambda: len(_ended(client)) == 4, 120, "the fourth escalation to end")
        await asyncio.sleep(0.5)
        assert not any(p.version in (4, 5) and _tl305(p.diagnostics) for p in rec.for_uri(uri))
        assert not _tl305(await wait_published(rec, uri, 5))


async def test_on_save_off_compiles_nothing(tmp_path: Path) -> None:
    text = MATMUL.read_text()
    path = tmp_path / "matmul.py"
    path.write_text(text)
    config = {"debounceMs": 0, "escalation": {"onSave": False}}
    async with session([tmp_path], config=config, progress=True) as (client, rec):
        uri = open_doc(client, path, text)
        await wait_published(rec, uri, 1)
        save_doc(client, uri)
        await asyncio.sleep(1.5)
        assert _escalations(client) == []
        assert not any(_tl305(p.diagnostics) for p in rec.for_uri(uri))


async def test_symptom_escalates_once_typing_pauses(tmp_path: Path) -> None:
    text = MATMUL.read_text()
    path = tmp_path / "matmul.py"
    path.write_text(text)
    config = {"debounceMs": 0, "irTarget": "sm_90", "escalation": {"onSave": False, "onSymptom": True}}
    async with session([tmp_path], config=config, progress=True) as (client, rec):
        uri = open_doc(client, path, text)
        first = await wait_published(rec, uri, 1)
        assert any(str(d.code) == "TL111" for d in first)  # triage's symptom on the kernel
        # keystrokes closer together than the idle time: no compile yet
        for version in range(2, 6):
            replace_text(client, uri, version, text + "#" * version + "\n")
            await asyncio.sleep(0.4)
        assert _escalations(client) == []
        await wait_for(
            lambda: any(p.version == 5 and _tl305(p.diagnostics) for p in rec.for_uri(uri)), 120, "TL305"
        )
        (run,) = _escalations(client)
        assert "(symptom)" in run[0].title
        # an edit outside the kernel leaves its text, hence its IR analysis, as it was: nothing recompiles
        replace_text(client, uri, 6, text + "# outside the kernel\n")
        await asyncio.sleep(3.0)
        assert len(_escalations(client)) == 1
        assert _tl305(await wait_published(rec, uri, 6))


async def test_missing_runner_environment_is_one_message(tmp_path: Path) -> None:
    text = MATMUL.read_text()
    path = tmp_path / "matmul.py"
    path.write_text(text)
    config = {
        "debounceMs": 0,
        "irTarget": "sm_90",
        "escalation": {"onSave": True},
        "runners": {"local": {"cuda": str(tmp_path / "no-such-env" / "python")}},
    }
    async with session([tmp_path], config=config, progress=True) as (client, rec):
        uri = open_doc(client, path, text)
        await wait_published(rec, uri, 1)
        for version in (2, 3, 4):
            replace_text(client, uri, version, _edited(text, f"v{version}"))
            save_doc(client, uri)
            await wait_for(lambda v=version: len(_ended(client)) == v - 1, 30, f"escalation {version} to end")
        shown = [m.message for m in rec.messages if "IR analysis is off" in m.message]
        assert len(shown) == 1 and "no-such-env" in shown[0], rec.messages
        lenses = await resolved_lenses(client,
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert any("no runner environment" in (lens.command.title if lens.command else "") for lens in lenses)
