"""The editor records real launches: a code lens on a kernel with nothing recorded runs
`tritonlens.recordLaunches` (here the CPU interpret backend, a pytest test the server finds), and the lens goes
once the launches are stored."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "server"))

from lsp_harness import open_doc, resolved_lenses, session, wait_published  # noqa: E402

from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment  # noqa: E402
from tritonlens.server.features.record import default_command  # noqa: E402

KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def twice_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def twice(x):
    twice_kernel[(triton.cdiv(x.numel(), 128),)](x, x.numel(), BLOCK=128)
    return x
"""
TEST = "import torch\nfrom twice import twice\n\n\ndef test_twice():\n    assert twice(torch.ones(8)).sum() == 16\n"


def lens_titles(lenses: list[types.CodeLens] | None) -> list[str]:
    return [lens.command.title for lens in lenses or [] if lens.command]


def test_default_command_is_the_test_that_imports_the_module(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "twice.py").write_text(KERNEL)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_other.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "tests" / "test_use.py").write_text(TEST)
    assert default_command(tmp_path / "twice.py", tmp_path) == ["pytest", "-q", "tests/test_use.py"]
    (tmp_path / "tests" / "test_use.py").unlink()
    assert default_command(tmp_path / "twice.py", tmp_path) is None
    (tmp_path / "twice.py").write_text(KERNEL + "\nif __name__ == '__main__':\n    twice(torch.ones(4))\n")
    assert default_command(tmp_path / "twice.py", tmp_path) == ["python", "twice.py"]


async def test_record_command_from_the_lens(tmp_path: Path) -> None:
    try:
        find_environment("cuda")
    except EnvironmentUnavailable as exc:
        pytest.skip(str(exc))
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "twice.py"
    path.write_text(KERNEL)
    (tmp_path / "test_twice.py").write_text(TEST)
    config = {
        "debounceMs": 0,
        "profileBackend": "interpret",
        "escalation": {"onSave": False, "onSymptom": False},
    }
    async with session([tmp_path], config=config) as (client, rec):
        uri = open_doc(client, path, KERNEL)
        await wait_published(rec, uri, 1)
        params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        lenses = await resolved_lenses(client, params)
        record_lens = [
            x for x in lenses or [] if x.command and x.command.command == "tritonlens.recordLaunches"
        ]
        assert record_lens and "no launches recorded" in record_lens[0].command.title
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="tritonlens.recordLaunches", arguments=record_lens[0].command.arguments
            )
        )
        assert result["command"] == ["pytest", "-q", "test_twice.py"] and result["returncode"] == 0, result
        assert result["stored"] == {"twice.py": {"twice_kernel": 1}}
        after = await resolved_lenses(client, params)
        assert not any("no launches recorded" in t for t in lens_titles(after))
