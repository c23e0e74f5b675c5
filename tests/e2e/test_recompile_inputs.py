"""Issue 14 item 17 in the editor: a compile error whose fix is outside the kernel (the launch site's block
size) goes away on the next save (cuda environment, sm_90)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsp_harness import open_doc, replace_text, save_doc, session, wait_for, wait_published

pytestmark = [pytest.mark.cuda_env, pytest.mark.slow, pytest.mark.usefixtures("cuda_env", "compile_cache")]

SOURCE = '''import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK_SIZE=BLOCK)
    return out


BLOCK = 96
'''


def _codes(rec: Any, uri: str, version: int) -> list[set[str]]:
    return [{str(d.code) for d in p.diagnostics or []} for p in rec.for_uri(uri) if p.version == version]


async def test_fixing_the_launch_site_clears_the_compile_error(tmp_path: Path) -> None:
    path = tmp_path / "add.py"
    path.write_text(SOURCE)
    config = {"debounceMs": 0, "irTarget": "sm_90", "escalation": {"onSave": True}}
    async with session([tmp_path], config=config, progress=True) as (client, rec):
        uri = open_doc(client, path, SOURCE)
        await wait_published(rec, uri, 1)
        save_doc(client, uri)
        await wait_for(lambda: any("TL300" in c for c in _codes(rec, uri, 1)), 180, "TL300 for BLOCK = 96")
        fixed = SOURCE.replace("BLOCK = 96", "BLOCK = 128")  # outside the kernel's lines
        path.write_text(fixed)
        replace_text(client, uri, 2, fixed)
        await wait_published(rec, uri, 2)
        save_doc(client, uri)
        await wait_for(
            lambda: (c := _codes(rec, uri, 2)) and "TL300" not in c[-1], 180, "a v2 publish without TL300"
        )
        await wait_for(lambda: len([c for c in _codes(rec, uri, 2)]) >= 2, 180, "the recompile's publish")
        assert "TL300" not in _codes(rec, uri, 2)[-1]
