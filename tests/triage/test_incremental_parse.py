"""Incremental parsing (analysis.source_chunks) and the per-chunk memos of parse_module must never change a
result: every test compares the cached, chunked path with a cold whole-file parse of the same text."""

from __future__ import annotations

import ast
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tritonlens.analysis import kernels
from tritonlens.analysis.kernels import ModuleInfo, parse_module
from tritonlens.analysis.source import chunks as source_chunks
from tritonlens.analysis.state.session import Session, current
from tritonlens.analysis.triage import triage

ROOT = Path(__file__).resolve().parents[2]
TORCH = ROOT / ".envs" / "cuda" / "lib" / "python3.11" / "site-packages" / "torch"
CORPUS = sorted([*(ROOT / "examples").glob("*.py"), *(ROOT / "tests" / "corpus").glob("*.py")])

SNIPPET = """import triton
import triton.language as tl

CONFIGS = [triton.Config({"BLOCK": 128}, num_warps=4)]


@triton.jit
def helper(x, y):
    return x + y


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, helper(x, 1), mask=offs < n)


def host(x):
    grid = (4,)
    k[grid](x, 10, BLOCK=16)


g2 = (8,)
k[g2](x, 10)
"""

# Texts whose column-0 lines are not all statement starts, or that do not parse: the chunked parse must still
# give ast.parse's tree, or raise ast.parse's error.
TRICKY = [
    '"""Doc\n\ncolumn zero text\n"""\n' + SNIPPET,
    "x = [\n1,\n2]\n" + SNIPPET,
    "if True:\n    y = 1\nelse:\n    y = 2\n" + SNIPPET,
    "try:\n    y = 1\nexcept Exception:\n    y = 2\nfinally:\n    z = 1\n" + SNIPPET,
    "s = '''\nimport triton\n@triton.jit\ndef q(): pass\n'''\n" + SNIPPET,
    "s = 1 + \\\n2\n" + SNIPPET,
    "@dec\n\n" + SNIPPET,
    SNIPPET.replace("def k(", "def k(\n"),
    SNIPPET + "\n@triton.jit\n",
    SNIPPET + "\nx = (\n",
    "x = 1\n  y = 2\n" + SNIPPET,
    SNIPPET + "\n\x00",
    SNIPPET.replace("CONFIGS = [", "CONFIGS = [ # é\n"),
    SNIPPET.replace("\n", "\r\n"),
    "match x:\n    case 1:\n        pass\n" + SNIPPET,
]


@pytest.fixture(autouse=True)
def _cold_chunk_cache() -> Iterator[None]:
    with Session().active():  # cold caches: no chunk parsed or seen, no text parsed
        yield


def _whole_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make parse_module parse whole files, with fresh memos: the reference behaviour (the memo of parses by
    text is cleared, or the reference would be the warm result itself)."""
    monkeypatch.setattr(kernels.parse, "parse_chunked", lambda text, lines=None: source_chunks._whole(text))
    kernels.clear_memo()


def _facts(module: ModuleInfo) -> dict[str, Any]:
    return {
        "kernels": [repr(k) for k in module.kernels],
        "helpers": [repr(k) for k in module.helpers],
        "launches": [repr(s) for s in module.launches],
        "aliases": list(module.aliases.items()),
        "syntax_error": module.syntax_error,
        "tree": None if module.tree is None else ast.dump(module.tree, include_attributes=True),
    }


def _parse_error(text: str) -> tuple[str, Any, Any] | None:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        return type(exc).__name__, getattr(exc, "msg", str(exc)), getattr(exc, "lineno", None)
    return None


@pytest.mark.parametrize("index", range(len(TRICKY)))
def test_chunked_parse_equals_ast_parse_or_raises_the_same(index: int) -> None:
    text = TRICKY[index]
    expected = _parse_error(text)
    for _ in range(2):  # cold, then from the cache
        if expected is None:
            tree, chunks = source_chunks.parse_chunked(text)
            assert ast.dump(tree, include_attributes=True) == ast.dump(
                ast.parse(text), include_attributes=True
            )
            assert [s for c in chunks for s in c.stmts] == tree.body
        else:
            with pytest.raises((SyntaxError, ValueError)) as info:
                source_chunks.parse_chunked(text)
            assert (type(info.value).__name__, getattr(info.value, "msg", str(info.value))) == expected[:2]
            assert getattr(info.value, "lineno", None) == expected[2]


def test_an_edit_reparses_only_its_chunk() -> None:
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in CORPUS[:4])
    first, chunks = source_chunks.parse_chunked(text)
    assert len(chunks) == 1  # a file seen for the first time is parsed whole; its chunks are not kept
    before, chunks = source_chunks.parse_chunked(text)  # seen again: parsed and kept chunk by chunk
    assert len(chunks) > 1
    assert ast.dump(before, include_attributes=True) == ast.dump(first, include_attributes=True)
    edited = text.replace("tl.program_id(0)", "tl.program_id(1)", 1)
    assert edited != text
    after, _ = source_chunks.parse_chunked(edited)
    assert ast.dump(after, include_attributes=True) == ast.dump(ast.parse(edited), include_attributes=True)
    reused = sum(a is b for a, b in zip(before.body, after.body, strict=True))
    assert 0 < reused < len(before.body)  # everything but the edited chunk is shared
    assert len(before.body) - reused <= 3


def _edits(text: str, rng: random.Random, count: int) -> list[str]:
    """Typing-like edit sequence: characters typed and deleted, lines added and removed, imports renamed."""
    pieces = ["BLOCK", " 17", "tl.load(x_ptr)", "\n", "# c\n", "    pass\n", "x = 1\n", "(", "def ", "[g]"]
    out = []
    for _ in range(count):
        pos = rng.randrange(len(text))
        if rng.random() < 0.6:
            text = text[:pos] + rng.choice(pieces) + text[pos:]
        else:
            text = text[:pos] + text[pos + rng.randrange(1, 6) :]
        out.append(text)
    out.append(text.replace("import triton.language as tl", "import triton.language as tq"))
    out.append(text.replace("import triton\n", "import triton as tr\n"))
    return out


def test_incremental_parse_module_and_triage_equal_a_cold_whole_file_parse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(11)
    base = "\n\n".join(p.read_text(encoding="utf-8") for p in CORPUS) + "\n" + SNIPPET
    # Facts of one chunk that depend on another: import aliases (constexpr annotations, decorators) and the
    # names of the file's jit functions (helper calls, launches).
    no_helper = SNIPPET.replace("def helper(", "def helper2(")
    no_kernel = SNIPPET.replace("def k(", "def kk(")
    not_triton = SNIPPET.replace("import triton.language as tl", "import numpy as tl")
    dependent = [no_kernel, SNIPPET, no_helper, SNIPPET, not_triton, SNIPPET]
    texts = [base, *_edits(base, rng, 60), *dependent, *TRICKY]
    incremental = []
    for text in texts:  # every text right after its predecessor: caches and memos are warm
        incremental.append((_facts(parse_module(text)), triage(text, "f.py", strict=True).findings))
    _whole_file(monkeypatch)
    for text, (facts, findings) in zip(texts, incremental, strict=True):
        current().chunks.clear()
        assert facts == _facts(parse_module(text))
        assert findings == triage(text, "f.py", strict=True).findings


def test_non_ascii_columns_are_characters_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    text = SNIPPET.replace("tl.store(", "tl.store( # é→中\n        ").replace(
        "x = tl.load(", "x = tl.load('é' and "
    )
    warm = _facts(parse_module(text))
    launch = parse_module(text).launches[0]
    assert parse_module(text).text_of(launch.node).startswith("k[grid]")
    _whole_file(monkeypatch)
    assert warm == _facts(parse_module(text))


@pytest.mark.skipif(
    not TORCH.is_dir(), reason="the cuda environment (torch's Triton kernels) is not installed"
)
def test_torch_triton_files_parse_the_same_incrementally(monkeypatch: pytest.MonkeyPatch) -> None:
    files = [p for p in sorted(TORCH.rglob("*.py")) if "@triton.jit" in p.read_text(encoding="utf-8")]
    assert files
    texts = [p.read_text(encoding="utf-8") for p in files]
    warm = []
    for text in texts:
        parse_module(text)  # fill the cache, then parse again from it
        warm.append((_facts(parse_module(text)), triage(text, "f.py").findings))
    _whole_file(monkeypatch)
    for path, text, (facts, findings) in zip(files, texts, warm, strict=True):
        assert facts == _facts(parse_module(text)), path
        assert findings == triage(text, "f.py", strict=True).findings, path
