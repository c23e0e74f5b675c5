"""Workspace trust (issue 21, item 4): in an untrusted workspace only level 1 runs, and the workspace's own
settings cannot name an interpreter; a client that says nothing gets no escalation of the server's own.

The workspace's settings name `./evilpy` as the cuda runner's interpreter: a script that leaves a marker file
and exits. Saving a kernel file escalates to a compile (onSave) with that runner in a trusted workspace only.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_harness import open_doc, save_doc, session, wait_published
from lsprotocol import types

from tritonlens.server.trust.workspace_trust import Trust, restrict_folder_section, trust_from_options

KERNEL = '''import triton
import triton.language as tl

open(__file__ + ".imported", "w").write("module-level code ran")


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
'''


def _workspace(tmp_path: Path) -> tuple[Path, Path, dict[str, object]]:
    marker = tmp_path / "evilpy-ran"
    evil = tmp_path / "evilpy"
    evil.write_text(f"#!/bin/sh\necho ran >> {marker}\nexit 3\n")
    evil.chmod(0o755)
    path = tmp_path / "kern.py"
    path.write_text(KERNEL)
    folder = {"debounceMs": 0, "target": "cuda", "irTarget": "sm_90", "escalation": {"onSave": True},
              "runners": {"local": {"cuda": "./evilpy"}}}
    return path, marker, folder


async def _save_and_wait(trust: str | None, tmp_path: Path) -> tuple[bool, bool]:
    path, marker, folder = _workspace(tmp_path)
    user = {"debounceMs": 0, "escalation": {"onSave": True}}
    async with session([tmp_path], config=user, folder_config=folder, trust=trust) as (client, rec):
        uri = open_doc(client, path, KERNEL)
        await wait_published(rec, uri, 1)
        save_doc(client, uri)
        for _ in range(100):  # a compile on save starts the runner within a few seconds when it does
            if marker.exists():
                break
            await asyncio.sleep(0.1)
    return marker.exists(), Path(str(path) + ".imported").exists()


async def test_trusted_workspace_escalates_with_its_runner_on_save(tmp_path: Path) -> None:
    """The control: trusted, the save does start the workspace's runner (so the tests below can fail)."""
    ran, _ = await _save_and_wait("trusted", tmp_path)
    assert ran


@pytest.mark.parametrize("trust", ["untrusted", None])
async def test_untrusted_or_undecided_workspace_runs_nothing_on_save(trust: str | None, tmp_path: Path) -> None:
    ran, imported = await _save_and_wait(trust, tmp_path)
    assert not ran, "the workspace's interpreter ran"
    assert not imported, "the workspace's module-level code ran"


async def test_untrusted_workspace_refuses_code_running_commands(tmp_path: Path) -> None:
    path, marker, folder = _workspace(tmp_path)
    async with session([tmp_path], config={"debounceMs": 0}, folder_config=folder, trust="untrusted") as (client, rec):
        uri = open_doc(client, path, KERNEL)
        published = await wait_published(rec, uri, 1)
        assert published is not None  # level 1 still runs
        for command in ("tritonlens.analyzeKernel", "tritonlens.profileKernel", "tritonlens.optimizeKernel"):
            with pytest.raises(Exception, match="not trusted"):
                await client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command=command, arguments=[uri, "copy_kernel"])
                )
        answer = await client.protocol.send_request_async(
            "tritonlens/ir", {"uri": uri, "kernel": "copy_kernel", "stage": "ttir"}
        )
        assert "not trusted" in str(answer)
    assert not marker.exists()


def test_trust_options_and_restricted_keys() -> None:
    assert trust_from_options({"workspaceTrust": "trusted"}) is Trust.TRUSTED
    assert trust_from_options({"workspaceTrust": False}) is Trust.UNTRUSTED
    assert trust_from_options(None) is Trust.UNDECIDED and trust_from_options({"workspaceTrust": 1}) is Trust.UNDECIDED
    raw = {"runners": {"remote": {"url": "http://x", "tokenEnv": "OPENAI_API_KEY"}}, "llm": {"apiKeyEnv": "K"},
           "interpreter": ["./py"], "target": "cuda"}
    kept, dropped = restrict_folder_section(raw, Trust.UNTRUSTED)
    assert kept == {"target": "cuda"} and sorted(dropped) == ["interpreter", "llm", "runners"]
    assert restrict_folder_section(raw, Trust.TRUSTED) == (raw, [])
