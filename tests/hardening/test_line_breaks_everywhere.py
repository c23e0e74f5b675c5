"""Issue 14 item 8, the class: every place that numbers or edits source lines counts them as Python and LSP do
(a line ends at \\r\\n, \\r or \\n only). `str.splitlines` also breaks at form feeds (common page breaks in old
Python files), vertical tabs, U+0085, U+2028 and U+2029, so line-based edits built with it land on the wrong lines.
Found by the class sweep: the optimize offer's WorkspaceEdit lines, config-search knob offsets (also counting
ast's UTF-8 byte columns as characters), block re-indentation and the LLM prompt's line numbers."""

from __future__ import annotations

import ast

import pytest

from tritonlens.analysis.rewrite.llm_prompt import numbered
from tritonlens.analysis.rewrite.source_edit import reindent
from tritonlens.analysis.source.lines import source_lines
from tritonlens.server.engine.optimize.knobs import apply_edits, find_knobs
from tritonlens.server.features.optimize_present import line_edits

BREAKS = ["\x0c", "\x0b", "\x85", "\u2028", "\u2029", "\x1c"]


@pytest.mark.parametrize("sep", BREAKS)
def test_offer_edits_are_in_lsp_lines(sep: str):
    before = f"a = 1  # page{sep}break\nb = 2\nc = 3\n"
    after = before.replace("b = 2", "b = 3")
    ((first, end, text),) = line_edits(before, after)
    assert (first, end, text) == (1, 2, "b = 3\n")
    lines = source_lines(before, keepends=True)
    assert "".join(lines[:first]) + text + "".join(lines[end:]) == after


@pytest.mark.parametrize("sep", BREAKS)
def test_knob_edits_replace_exactly_the_literal(sep: str):
    source = (
        "import triton\nimport triton.language as tl\n"
        f"# a page break{sep}inside a comment\n"
        "@triton.jit\ndef k(X, N, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(X + offs, tl.load(X + offs, mask=offs < N), mask=offs < N)\n\n\n"
        "def run(x):\n"
        '    s = "é😀"; k[(triton.cdiv(x.numel(), 128),)](x, x.numel(), BLOCK=128)\n'
    )
    knobs = find_knobs(source, {"k": [("X", False), ("N", False), ("BLOCK", True)]})
    (block,) = [kn for kn in knobs if kn.label == "k.BLOCK"]
    moved = apply_edits(source, block.edits(256, source))
    ast.parse(moved)
    assert 's = "é😀"; k[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256)' in moved
    assert moved.replace("256", "128") == source


def test_reindent_and_prompt_numbers_keep_python_lines():
    block = "    x = 1  # a\x0cb\n    y = 2\n"
    assert reindent(block, "    ", "        ") == "        x = 1  # a\x0cb\n        y = 2\n"
    assert numbered("a = 1  # \u2028\nb = 2\n").splitlines()[-1] == "   2| b = 2"
