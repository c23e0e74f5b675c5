"""Ignore comments and pyproject ignores behave the same in `tritonlens check`, in the language server (an
independent pytest-lsp client) and in the workspace rows; unused ignores are TL006 hints with a removing fix; the
"Ignore ..." code actions write comments that make the diagnostic go."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_harness import apply_edits, open_doc, replace_text, session, wait_published
from lsprotocol import types

from tritonlens.analysis.ignores import Ignores, project_codes
from tritonlens.analysis.triage import triage

# The bundled-example pattern: a tiny block on 4 warps (TL126 on the launch), a loop-invariant load
# (TL106), a divide by a scalar next to per-element math (TL135).
KERNEL = """import triton
import triton.language as tl


@triton.jit
def scale_rows(x_ptr, y_ptr, t_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    for i in range(0, n, BLOCK):
        t = tl.load(t_ptr)
        x = tl.load(x_ptr + row * n + i + cols, mask=i + cols < n)
        tl.store(y_ptr + row * n + i + cols, tl.exp(x) / t, mask=i + cols < n)


def launch(x, y, t):
    scale_rows[(x.shape[0],)](x, y, t, x.shape[1], BLOCK=32)
"""


def cli_codes(path: Path, *extra: str) -> set[tuple[str, int]]:
    proc = subprocess.run(
        [sys.executable, "-m", "tritonlens.server.cli", "check", "--format", "json", *extra, str(path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return {(f["code"], f["span"]["line"]) for f in json.loads(proc.stdout)}


def lsp_codes(diags: list[types.Diagnostic]) -> set[tuple[str, int]]:
    return {(str(d.code), d.range.start.line + 1) for d in diags}


def line_no(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), start=1) if fragment in line)


def test_the_kernel_has_the_findings_the_tests_silence() -> None:
    codes = {f.code for f in triage(KERNEL).findings}
    assert {"TL106", "TL135"} <= codes


def test_line_and_file_ignores_and_unused_ones() -> None:
    load = line_no(KERNEL, "t = tl.load(t_ptr)")
    text = KERNEL.replace("t = tl.load(t_ptr)", "t = tl.load(t_ptr)  # tritonlens: ignore[TL106, TL112]")
    text = "# tritonlens: ignore-file[TL135, TL127]\n" + text
    found = Ignores.of(text).apply(triage(text).findings)
    codes = {(f.code, f.span.line) for f in found}
    assert ("TL106", load + 1) not in codes and not any(c == "TL135" for c, _ in codes)
    unused = [f for f in found if f.code == "TL006"]
    assert sorted(f.data["ignore_code"] for f in unused) == ["TL112", "TL127"]
    # the fix removes exactly the unused code and keeps the used one
    tl112 = next(f for f in unused if f.data["ignore_code"] == "TL112")
    assert tl112.fix is not None
    (edit,) = tl112.fix.edits
    assert edit.new_text == "# tritonlens: ignore[TL106]"


def test_a_later_level_code_is_never_called_unused_and_an_unknown_one_is() -> None:
    text = KERNEL.replace("row = tl.program_id(0)", "row = tl.program_id(0)  # tritonlens: ignore[TL301, TL9]")
    unused = [f for f in Ignores.of(text).apply(triage(text).findings) if f.code == "TL006"]
    assert [f.data["ignore_code"] for f in unused] == ["TL9"]
    assert "no rule has code TL9" in unused[0].message


def test_bare_ignore_silences_every_code_on_its_line() -> None:
    text = KERNEL.replace(
        "tl.store(y_ptr + row * n + i + cols, tl.exp(x) / t, mask=i + cols < n)",
        "tl.store(y_ptr + row * n + i + cols, tl.exp(x) / t, mask=i + cols < n)  # tritonlens: ignore",
    )
    line = line_no(text, "tl.store(")
    assert any(f.span.line == line for f in triage(text).findings)
    assert not any(f.span.line == line for f in Ignores.of(text).apply(triage(text).findings))


def test_per_file_ignores_match_globs_like_ruff() -> None:
    table = {"ignore": ["TL113"], "per-file-ignores": {"tests/*": ["TL1"], "k.py": ["TL106"]}}
    assert project_codes(table, "tests/sub/a.py") == ("TL113", "TL1")
    assert project_codes(table, "src/k.py") == ("TL113", "TL106")  # no `/`: matches the file name
    assert project_codes(table, "src/other.py") == ("TL113",)
    with pytest.raises(ValueError):
        project_codes({"per-file-ignores": {"x.py": 3}}, "x.py")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    (folder / "kernels").mkdir(parents=True)
    (folder / "pyproject.toml").write_text(
        '[tool.tritonlens]\nignore = ["TL135"]\n[tool.tritonlens.per-file-ignores]\n"kernels/*" = ["TL126"]\n'
    )
    return folder


def commented(text: str) -> str:
    return text.replace("t = tl.load(t_ptr)", "t = tl.load(t_ptr)  # tritonlens: ignore[TL106, TL112]")


def test_check_honours_comments_and_pyproject(project: Path) -> None:
    plain = project / "plain.py"
    plain.write_text(KERNEL)
    inside = project / "kernels" / "k.py"
    inside.write_text(commented(KERNEL))
    before = cli_codes(plain)
    assert {"TL106", "TL126"} <= {c for c, _ in before} and "TL135" not in {c for c, _ in before}
    after = {c for c, _ in cli_codes(inside)}
    assert not {"TL106", "TL126", "TL135"} & after and "TL006" in after


async def test_server_shows_what_check_shows_and_its_actions_silence(project: Path) -> None:
    path = project / "k.py"  # outside kernels/: the pyproject's `ignore` and the comment apply, not per-file
    text = commented(KERNEL)
    path.write_text(text)
    expected = cli_codes(path)
    assert "TL126" in {c for c, _ in expected} and "TL135" not in {c for c, _ in expected}
    async with session([project], config={"debounceMs": 30}) as (client, rec):
        uri = open_doc(client, path, text)
        diags = await wait_published(rec, uri, 1)
        assert lsp_codes(diags) == expected  # the same findings, the same ignores
        unused = next(d for d in diags if d.code == "TL006")
        target = next(d for d in diags if d.code != "TL006")
        # every diagnostic gets an action; the unused ignore's removes the dead code
        for d in diags:
            params = types.CodeActionParams(types.TextDocumentIdentifier(uri=uri), d.range, types.CodeActionContext([d]))
            assert await client.text_document_code_action_async(params)
        params = types.CodeActionParams(
            types.TextDocumentIdentifier(uri=uri), target.range, types.CodeActionContext([target])
        )
        actions = [a for a in await client.text_document_code_action_async(params) or [] if isinstance(a, types.CodeAction)]
        ignore = next(a for a in actions if a.title == f"Ignore {target.code} on this line")
        assert ignore.edit is None  # lazily resolved
        resolved = await client.code_action_resolve_async(ignore)
        assert resolved.edit is not None and resolved.edit.document_changes
        (change,) = resolved.edit.document_changes
        assert isinstance(change, types.TextDocumentEdit) and change.text_document.version == 1
        silenced = apply_edits(text, list(change.edits))
        assert f"ignore[{target.code}]" in silenced or f", {target.code}]" in silenced
        replace_text(client, uri, 2, silenced)
        after = await wait_published(rec, uri, 2)
        assert (str(target.code), target.range.start.line + 1) not in lsp_codes(after)
        # ... and check agrees with the edited file
        path.write_text(silenced)
        assert cli_codes(path) == lsp_codes(after)
        assert unused.code == "TL006"


def test_the_workspace_rows_of_closed_files_honour_the_same_ignores(project: Path) -> None:
    from tritonlens.server.lsp.analysis import index_file

    path = project / "kernels" / "k.py"
    path.write_text(commented(KERNEL))
    from tritonlens.analysis.core.settings import Settings

    text = path.read_text()
    shown = Settings().for_file(text, str(path)).apply(list(index_file(text, str(path)).findings))  # as the rows do
    assert {(f.code, f.span.line) for f in shown} == cli_codes(path)
