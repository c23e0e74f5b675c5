"""The faster paths of level 1 (issue 23: first diagnostics of a 2,000-line file) answer what the plain ones did,
on the repository's own kernel files: the list walker against `ast.walk`, launch-line search against the pattern
of all kernel names it replaced, cached reaching values and address expressions against a fresh computation."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from tritonlens.analysis.kernels import parse_module
from tritonlens.analysis.kernels.launch_sites import _NAME_BRACKET, _NAME_BRACKET_IN_LINE
from tritonlens.analysis.source.node_walk import child_nodes, walk_nodes
from tritonlens.analysis.triage.context import KernelContext, _contains

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.lsp_latency import generate  # noqa: E402

SINGLETONS = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def _kernel_files() -> list[tuple[str, str]]:
    paths = [*sorted((ROOT / "examples").glob("*.py")), *sorted((ROOT / "bench").glob("*/*.py"))]
    files = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in paths if "blind" not in p.parts]
    files.append(("<generated 2,000 lines>", generate(2000)))
    return [(name, text) for name, text in files if "jit" in text]


FILES = _kernel_files()


def test_there_are_files_to_compare() -> None:
    assert len(FILES) >= 10


@pytest.mark.parametrize(("name", "text"), FILES, ids=[n for n, _ in FILES])
def test_walker_is_ast_walk_without_singletons(name: str, text: str) -> None:
    tree = ast.parse(text)
    assert walk_nodes(tree) == [n for n in ast.walk(tree) if not isinstance(n, SINGLETONS)]
    for node in ast.walk(tree):
        assert child_nodes(node) == [c for c in ast.iter_child_nodes(node) if not isinstance(c, SINGLETONS)]


def _lines_by_names_pattern(text: str, names: set[str]) -> list[int]:
    """The search the launch finder ran before: one pattern of all kernel names, per line."""
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")\s*\[")
    return [i for i, line in enumerate(text.split("\n"), start=1) if pattern.search(line)]


@pytest.mark.parametrize(("name", "text"), FILES, ids=[n for n, _ in FILES])
def test_launch_lines_match_the_pattern_of_all_names(name: str, text: str) -> None:
    module = parse_module(text)
    names = {k.name for k in module.functions}
    hit = _lines_by_names_pattern(text, names)
    for pattern in (_NAME_BRACKET, _NAME_BRACKET_IN_LINE):
        found = [
            i
            for i, line in enumerate(text.split("\n"), start=1)
            if any(m.group(1) in names for m in pattern.finditer(line))
        ]
        assert found == hit
    assert {s.span.line for s in module.launches} <= set(hit)
    # Launches found are those on the hit lines; a text with CR takes the per-line path: both must agree.
    crlf = parse_module(text.replace("\n", "\r\n"))
    assert [(s.kernel, s.span.line) for s in crlf.launches] == [(s.kernel, s.span.line) for s in module.launches]


def _reaching_reference(ctx: KernelContext, name: str, use: ast.AST) -> list[ast.AST]:
    sites = sorted(ctx.assign_sites.get(name, ()), key=lambda s: (s[0], s[1]))
    where = (getattr(use, "lineno", 0), getattr(use, "col_offset", 0))
    before = [value for line, col, value in sites if (line, col) < where]
    if before:
        return before[-1:]
    return [value for _, _, value in sites if not _contains(value, where)]


@pytest.mark.parametrize(("name", "text"), FILES, ids=[n for n, _ in FILES])
def test_cached_reaching_and_address_exprs_match_a_fresh_computation(name: str, text: str) -> None:
    module = parse_module(text)
    checked = 0
    for function in module.functions:
        ctx = KernelContext(module=module, kernel=function, path=name)
        for node in ctx.nodes:
            if isinstance(node, ast.Name):
                assert ctx.reaching(node.id, node) == _reaching_reference(ctx, node.id, node)
                checked += 1
        for call in ctx.all_calls:
            pointer = ctx.pointer_arg(call)
            if pointer is not None:
                first = ctx.address_exprs(pointer)
                assert first == ctx._find_address_exprs(pointer)
                assert ctx.address_exprs(pointer) is first  # computed once
    assert checked or not module.functions
