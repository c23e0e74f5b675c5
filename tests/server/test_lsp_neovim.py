"""Neovim's own LSP client (headless), configured by exactly the README's snippet, receives tritonlens' diagnostics
for a sample kernel (Debian's Neovim is 0.7.2; the snippet also covers 0.8+)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NVIM = shutil.which("nvim")

README = Path(__file__).resolve().parents[2] / "README.md"
PLACEHOLDER = '"/path/to/tritonlens/.venv/bin/tritonlens", "serve"'

# After the README's snippet: wait for diagnostics in the opened buffer, write them out, quit.
HARNESS = r"""
local function code_of(d)
  if d.code then return d.code end
  local lsp = d.user_data and d.user_data.lsp
  return lsp and lsp.code or vim.NIL
end

vim.api.nvim_create_autocmd("VimEnter", {
  callback = function()
    local ok = vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 50)
    local items = {}
    for _, d in ipairs(vim.diagnostic.get(0)) do
      table.insert(items, { lnum = d.lnum, col = d.col, code = code_of(d), source = d.source or vim.NIL,
                            message = d.message, severity = d.severity })
    end
    vim.fn.writefile({ vim.fn.json_encode({ ok = ok, diagnostics = items }) }, vim.env.TL_OUT)
    vim.cmd("qa!")
  end,
})
"""


def readme_snippet() -> str:
    """The Lua block under the README's Neovim heading, exactly as shown."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Neovim"):]
    start = section.index("```lua\n") + len("```lua\n")
    return section[start:section.index("```", start)]


def init_lua() -> str:
    snippet = readme_snippet()
    assert PLACEHOLDER in snippet, "the README snippet's cmd changed; update PLACEHOLDER"
    # Only the install path differs from the README: this checkout's Python runs the server.
    cmd = ", ".join(json.dumps(x) for x in [sys.executable, "-m", "tritonlens.server.cli", "serve"])
    return snippet.replace(PLACEHOLDER, cmd) + HARNESS


SAMPLE = """import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)
"""


@pytest.mark.skipif(NVIM is None, reason="nvim is not installed (scripts/bootstrap --all installs it)")
def test_neovim_client_receives_diagnostics(tmp_path: Path):
    (tmp_path / "init.lua").write_text(init_lua())
    sample = tmp_path / "sample.py"
    sample.write_text(SAMPLE)
    out = tmp_path / "diagnostics.json"
    env = {
        **os.environ,
        "TL_OUT": str(out),
        "XDG_STATE_HOME": str(tmp_path / "state"),  # keep Neovim's lsp.log out of the user's home
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    assert NVIM is not None
    proc = subprocess.run(
        [NVIM, "--headless", "-i", "NONE", "-u", str(tmp_path / "init.lua"), str(sample)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert out.exists(), (
        f"nvim wrote nothing (rc={proc.returncode}): {proc.stdout[-2000:]} {proc.stderr[-2000:]}"
    )
    result = json.loads(out.read_text())
    assert result["ok"], result
    by_code = {d["code"]: d for d in result["diagnostics"]}
    assert "TL101" in by_code, result
    d = by_code["TL101"]
    assert d["source"] == "tritonlens"
    assert d["lnum"] == SAMPLE.split("\n").index(
        next(x for x in SAMPLE.split("\n") if x.startswith("def copy"))
    )
