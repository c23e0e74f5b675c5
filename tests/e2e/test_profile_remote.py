"""Issue acceptance: from the editor, a kernel's harness is profiled through a remote runner on loopback and its
profiling results appear (diagnostics for that document version, hover with the measured numbers, code lens,
$/progress begin/end, runner reachability in `tritonlens/status`).

The runner is a real `tritonlens-runner serve` subprocess; the language server is a real subprocess whose
settings point `runners.remote` at it, with the token in the server's environment (tokenEnv). Without a GPU the
runner picks the interpret backend: launches are recorded (grid, bytes) but timings are meaningless, so the
roofline rules (TL2xx) honestly have no verdict; on a machine whose runner sees a GPU the same test requires
TL2xx diagnostics and GB/s in the hover.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from lsp_harness import open_doc, replace_text, resolved_lenses, session, wait_for, wait_published
from lsprotocol import types

ROOT = Path(__file__).resolve().parents[2]
KB_ADD = ROOT / "tests" / "fixtures" / "run" / "kb_add.py"
KB_COPY = (
    ROOT / "benchmarks" / "gpu" / "kb_copy.py"
)  # naive transpose: TL202 on the H200 (docs/gpu-results.md)
TOKEN_VAR = "TL_E2E_RUNNER_TOKEN"

pytestmark = [pytest.mark.cuda_env, pytest.mark.slow]


def _settings(url: str) -> dict[str, Any]:
    return {
        "debounceMs": 0,
        "escalation": {"onSave": False},
        "runners": {"remote": {"url": url, "tokenEnv": TOKEN_VAR}},
    }


def row_backend(rows: list[dict[str, Any]]) -> str:
    return str(rows[0].get("backend")) if rows else "?"


def _progress(client: Any) -> list[list[Any]]:
    return [list(values) for values in client.progress_reports.values()]


async def _profile(client: Any, uri: str, kernel: str = "add_kernel") -> list[dict[str, Any]]:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="tritonlens.profileKernel", arguments=[uri, kernel])
    )


def _runner_sees_gpu(url: str, token: str) -> bool:
    req = urllib.request.Request(url + "/v1/health", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        backends = json.loads(resp.read())["runner"]["backends"]
    return any((b.get("devices") or {}).get("cuda") for b in backends.values() if b.get("available"))


async def test_profile_through_remote_runner(tmp_path: Path, runner_service: Any, capsys: Any) -> None:
    gpu = _runner_sees_gpu(runner_service.url, runner_service.token)
    # On a GPU the memory-bound transpose gives roofline verdicts; on the interpreter a small add is enough.
    source, kernel = (KB_COPY, "transpose_naive_kernel") if gpu else (KB_ADD, "add_kernel")
    path = tmp_path / source.name
    shutil.copy(source, path)
    text = path.read_text()
    def_line = next(i for i, t in enumerate(text.splitlines()) if t.startswith(f"def {kernel}"))
    env = {**os.environ, TOKEN_VAR: runner_service.token}
    async with session([tmp_path], config=_settings(runner_service.url), progress=True, env=env) as (
        client,
        rec,
    ):
        # the server reports the remote runner as reachable once it has read the settings
        remote_name = f"remote {runner_service.url}"

        def remote_row() -> dict[str, Any] | None:
            for note in reversed(rec.status):
                runners = note["runners"] if isinstance(note, dict) else note.runners
                for row in runners:
                    row = row if isinstance(row, dict) else row._asdict()
                    if row["name"] == remote_name:
                        return row
            return None

        row = await wait_for(remote_row, 60, "tritonlens/status with the remote runner")
        assert row["reachable"] is True, row

        uri = open_doc(client, path, text)
        await wait_published(rec, uri, 1)
        published_before = len(rec.for_uri(uri))

        started = time.perf_counter()
        rows = await _profile(client, uri, kernel)
        elapsed = time.perf_counter() - started
        with capsys.disabled():
            print(f"\nprofile round trip through the remote runner ({row_backend(rows)}): {elapsed:.2f} s")
        (row,) = rows
        assert row["kernel"] == kernel and row["target"] == remote_name
        assert row["runnerUnavailable"] is False and row["stale"] is False, row
        assert row["launches"] == 1

        # the profile layer was merged and published for the version that was profiled
        latest = await wait_for(lambda: rec.for_uri(uri)[published_before:], 10, "a publish after profiling")
        assert latest[-1].version == 1
        tl2 = [d for d in latest[-1].diagnostics if str(d.code).startswith("TL2")]

        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(def_line, 5)
            )
        )
        assert hover is not None
        md = hover.contents.value
        assert f"**Profile** of `{kernel}`" in md and remote_name in md
        if not gpu:
            assert "[4, 1, 1] x1" in md  # cdiv(4000, 1024) programs, as the runner recorded the launch
            assert "0.05 MiB" in md  # 3 x 4000 fp32 moved

        lenses = await resolved_lenses(client,
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        titles = [lens.command.title for lens in lenses if lens.command]
        (profile_title,) = [t for t in titles if t.startswith("tritonlens profile (")]

        if gpu:
            assert row["backend"] == "cuda" and row["timingMeaningful"]
            assert "TL202" in {str(d.code) for d in tl2}, [d.code for d in latest[-1].diagnostics]
            assert " GB/s |" in md and "memory |" in md
            assert "of peak" in profile_title and "memory-bound" in profile_title
            with capsys.disabled():
                print(profile_title)
        else:
            assert row["backend"] == "interpret" and row["timingMeaningful"] is False
            assert tl2 == []  # no verdicts from interpreter timings
            assert "meaningless" in md and "timings meaningless" in profile_title

        # $/progress: a begin and an end for the profile, reported to the client
        runs = [
            v
            for v in _progress(client)
            if v and getattr(v[0], "title", "").startswith("tritonlens: profiling")
        ]
        assert runs and runs[-1][0].kind == "begin" and runs[-1][-1].kind == "end"


async def test_profile_result_dropped_when_the_document_changed(tmp_path: Path, runner_service: Any) -> None:
    path = tmp_path / "kb_add.py"
    shutil.copy(KB_ADD, path)
    text = path.read_text()
    env = {**os.environ, TOKEN_VAR: runner_service.token}
    async with session([tmp_path], config=_settings(runner_service.url), env=env) as (client, rec):
        uri = open_doc(client, path, text)
        await wait_published(rec, uri, 1)
        pending = asyncio.ensure_future(_profile(client, uri))
        await asyncio.sleep(0.3)  # the job is on the runner now (it takes seconds)
        replace_text(client, uri, 2, text + "\n# edited while profiling\n")
        (row,) = await pending
        assert row["stale"] is True  # measured on version 1; the editor shows version 2
        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(
                    next(i for i, t in enumerate(text.splitlines()) if t.startswith("def add_kernel")), 5
                ),
            )
        )
        assert hover is None or "**Profile**" not in hover.contents.value


async def test_unreachable_remote_runner_is_one_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "kb_add.py"
    shutil.copy(KB_ADD, path)
    env = {**os.environ, TOKEN_VAR: "x" * 20}
    config = _settings("http://127.0.0.1:9")  # nothing listens on the discard port
    async with session([tmp_path], config=config, env=env) as (client, rec):
        uri = open_doc(client, path, path.read_text())
        await wait_published(rec, uri, 1)
        for _ in range(2):
            (row,) = await _profile(client, uri)
            assert row["runnerUnavailable"] is True and "not reachable" in row["error"]
        shown = [m.message for m in rec.messages if "profiling through" in m.message]
        assert len(shown) == 1  # once per session, not once per attempt

        def down() -> bool:
            rows = [r if isinstance(r, dict) else r._asdict() for n in rec.status for r in _runners(n)]
            return any(r["name"] == "remote http://127.0.0.1:9" and r["reachable"] is False for r in rows)

        await wait_for(down, 15, "tritonlens/status saying the remote runner is down")


def _runners(note: Any) -> list[Any]:
    return list(note["runners"] if isinstance(note, dict) else note.runners)
