"""The language server shows one finding per confirmed cause, as `check --level ir` does (cuda environment).

examples/matmul.py forces `input_precision="ieee"`: triage reports TL111 as soon as the file opens; once a save
compiles the kernel for sm_90, TL305 (dot lowered to FMA) confirms it, and the editor shows TL305 alone with
TL111's symptom leading its evidence chain, in diagnostics and hover alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_harness import open_doc, save_doc, session, wait_for, wait_published
from lsprotocol import types

from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment
from tritonlens.server.cli import main

ROOT = Path(__file__).resolve().parents[2]
MATMUL = ROOT / "examples" / "matmul.py"

pytestmark = [pytest.mark.cuda_env]


@pytest.fixture(scope="module")
def cuda_env() -> None:
    try:
        find_environment("cuda")
    except EnvironmentUnavailable as exc:
        pytest.skip(f"cuda runner environment missing: {exc}")


@pytest.fixture(scope="module")
def compile_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("tritonlens-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITONLENS_CACHE_DIR", str(path))
        yield path


def _codes_at(diags: list[types.Diagnostic], line0: int) -> list[str]:
    return sorted(str(d.code) for d in diags if d.range.start.line <= line0 <= d.range.end.line)


@pytest.mark.usefixtures("cuda_env", "compile_cache")
async def test_confirmed_triage_symptom_is_folded_into_the_compiler_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = MATMUL.read_text()
    path = tmp_path / "matmul.py"
    path.write_text(text)
    line0 = next(i for i, t in enumerate(text.splitlines()) if "tl.dot(" in t and "ieee" in t)
    col = text.splitlines()[line0].index("input_precision")
    config = {"debounceMs": 0, "irTarget": "sm_90", "target": "cuda", "escalation": {"onSave": True}}
    async with session([tmp_path], config=config) as (client, rec):
        uri = open_doc(client, path, text)
        triaged = await wait_published(rec, uri, 1)
        assert _codes_at(triaged, line0) == ["TL111"]  # level 1 alone until a compile confirms it
        save_doc(client, uri)
        merged = await wait_for(
            lambda: next(
                (
                    p.diagnostics
                    for p in reversed(rec.for_uri(uri))
                    if any(str(d.code) == "TL305" for d in p.diagnostics)
                ),
                None,
            ),
            120,
            "TL305 after the save",
        )
        assert _codes_at(list(merged), line0) == ["TL305"]
        (tl305,) = [d for d in merged if str(d.code) == "TL305"]
        assert tl305.severity == types.DiagnosticSeverity.Warning

        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line0, col)
            )
        )
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        md = hover.contents.value
        assert "**TL305**" in md and "**Confirms**" in md and "**TL111** `dot-fp32-ieee`" in md
        assert "**Evidence chain**" in md and "**Rewrite:**" in md
        # the chain reads in order: triage's symptom, then the IR the compiler produced
        chain = md.split("**Evidence chain**", 1)[1]
        assert chain.index("TL111 (level 1)") < chain.index("ttgir") < chain.index("ptx")
        assert "**TL111**" not in md.split("**Confirms**", 1)[0]  # no separate TL111 section

        shown = sorted((str(d.code), d.range.start.line + 1) for d in merged)

    # the command line shows the same merged result for the same target
    capsys.readouterr()
    rc = main(["check", "--level", "ir", "--target", "sm_90", "--format", "json", str(path)])
    cli = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert sorted((f["code"], f["span"]["line"]) for f in cli) == shown
    (cli305,) = [f for f in cli if f["code"] == "TL305"]
    assert cli305["data"]["confirms"] == ["TL111"]
