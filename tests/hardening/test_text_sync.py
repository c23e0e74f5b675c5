"""Issue 14 item 8: the server's copy of a document equals the editor's after any edit sequence.

The editor side is modelled independently of the server's code: offsets in a Python string, LSP positions
counted character by character (a line ends at \\r\\n, \\r or \\n; columns in the negotiated encoding's units).
"""

from __future__ import annotations

import pytest
from fuzz_profile import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import Workspace

from tritonlens.analysis.source.lines import source_lines
from tritonlens.server.lsp.convert import LineText
from tritonlens.server.lsp.text_sync import install_lsp_text_documents

# Characters that are line breaks for str.splitlines but not for LSP, real breaks, and wide characters.
ALPHABET = st.sampled_from(
    [
        "a",
        "b",
        " ",
        "x = 1",
        "\n",
        "\r",
        "\r\n",
        "\u2028",
        "\u2029",
        "\x85",
        "\x0c",
        "\x0b",
        "\x1c",
        "é",
        "😀",
        "\t",
    ]
)
TEXT = st.lists(ALPHABET, max_size=30).map("".join)
ENCODINGS = ["utf-16", "utf-8", "utf-32"]


def units(s: str, encoding: str) -> int:
    if encoding == "utf-32":
        return len(s)
    if encoding == "utf-8":
        return len(s.encode("utf-8"))
    return len(s.encode("utf-16-le")) // 2


def position(text: str, offset: int, encoding: str) -> types.Position:
    """The editor's LSP position of `offset`, counted character by character."""
    line, start, i = 0, 0, 0
    while i < offset:
        ch = text[i]
        if ch == "\r" and i + 1 < len(text) and text[i + 1] == "\n":
            if i + 2 > offset:
                break
            i += 2
            line, start = line + 1, i
            continue
        i += 1
        if ch in "\r\n":
            line, start = line + 1, i
    return types.Position(line, units(text[start:offset], encoding))


def inside_crlf(text: str, offset: int) -> bool:
    return 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n"


@st.composite
def edits(draw: st.DrawFn, text: str) -> tuple[int, int, str]:
    a = draw(st.integers(0, len(text)))
    b = draw(st.integers(a, len(text)))
    a -= inside_crlf(text, a)
    b += inside_crlf(text, b)
    return a, b, draw(TEXT)


@fuzz_settings(ci_examples=300)
@given(start=TEXT, data=st.data(), encoding=st.sampled_from(ENCODINGS))
def test_incremental_edits_keep_server_text_equal_to_editor_text(
    start: str, data: st.DataObject, encoding: str
):
    workspace = Workspace(None, types.TextDocumentSyncKind.Incremental, position_encoding=encoding)
    install_lsp_text_documents(workspace)
    uri = "file:///tmp/sync.py"
    workspace.put_text_document(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=start))
    editor = start
    for version in range(2, 2 + data.draw(st.integers(1, 6))):
        a, b, new = data.draw(edits(editor))
        rng = types.Range(position(editor, a, encoding), position(editor, b, encoding))
        change = types.TextDocumentContentChangePartial(range=rng, text=new)
        workspace.update_text_document(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version), change
        )
        editor = editor[:a] + new + editor[b:]
        assert workspace.get_text_document(uri).source == editor


@given(text=TEXT)
def test_source_lines_are_lsp_lines(text: str):
    expected_lines = position(text, len(text), "utf-32").line + 1
    lines = LineText(text, types.PositionEncodingKind.Utf32)
    assert len(lines.lines) == expected_lines
    kept = source_lines(text, keepends=True)
    assert "".join(kept) == text
    assert len(source_lines(text)) == len(kept)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_positions_past_the_end_clamp_as_lsp_says(encoding: str):
    workspace = Workspace(None, types.TextDocumentSyncKind.Incremental, position_encoding=encoding)
    install_lsp_text_documents(workspace)
    uri = "file:///tmp/clamp.py"
    workspace.put_text_document(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text="ab\ncd")
    )
    far = types.Range(types.Position(0, 99), types.Position(7, 3))  # end of line 0 .. end of document
    change = types.TextDocumentContentChangePartial(range=far, text="!")
    workspace.update_text_document(types.VersionedTextDocumentIdentifier(uri=uri, version=2), change)
    assert workspace.get_text_document(uri).source == "ab!"
