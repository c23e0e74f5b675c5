"""Per-keystroke work is proportional to the edit, not the document: whole-module passes of triage (the call
index of launch sites, the launching hosts of the fusion rule) merge per-statement results that the editor's
incremental parse lets unchanged statements reuse."""

from __future__ import annotations

import ast

from tritonlens.analysis.source.chunks import parse_chunked
from tritonlens.analysis.source.node_memo import per_node
from tritonlens.analysis.specialize import scope as specialization_launch

SOURCE = """
import triton
import triton.language as tl


@triton.jit
def k1(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


def launch_1(x):
    n = x.numel()
    k1[(1,)](x, n, BLOCK=128)
    helper(x)


def helper(x):
    def inner(y):
        k1[(2,)](y, y.numel(), BLOCK=64)
    inner(x)


if __name__ == "__main__":
    launch_1(None)
"""


def _reference_index(tree: ast.Module) -> tuple[dict, dict]:
    """The whole-tree walk index_calls did before it was made incremental."""
    launches: dict = {}
    calls: dict = {}
    stack = [(tree, None)]
    while stack:
        node, func = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append((child, child))
                continue
            if isinstance(child, ast.Call):
                name = specialization_launch._launched_name(child)
                if name is not None:
                    launches.setdefault(name, []).append((child, func))
                elif isinstance(child.func, ast.Name):
                    calls.setdefault(child.func.id, []).append((child, func))
            stack.append((child, func))
    return launches, calls


def test_call_index_matches_a_whole_tree_walk() -> None:
    tree = ast.parse(SOURCE)
    index = specialization_launch.index_calls(tree)
    launches, calls = _reference_index(tree)
    assert index.launches == launches and index.calls == calls
    assert [launch.line for launch in specialization_launch.find_launches(index, "k1")] == [13, 19]


def test_an_edit_re_indexes_only_the_edited_statement(monkeypatch) -> None:
    seen: list[int] = []
    original = specialization_launch._index_statement

    def counting(stmt: ast.AST):
        seen.append(stmt.lineno)
        return original(stmt)

    monkeypatch.setattr(specialization_launch, "_index_statement", counting)
    for text in (SOURCE, SOURCE):  # the second parse of a known file reuses its chunks
        tree, _ = parse_chunked(text)
        specialization_launch.index_calls(tree)
    seen.clear()
    edited = SOURCE.replace("BLOCK=128", "BLOCK=256")
    tree, _ = parse_chunked(edited)
    index = specialization_launch.index_calls(tree)
    assert seen == [11]  # launch_1 only
    values = [kw.value.value for call, _ in index.launches["k1"] for kw in call.keywords if kw.arg == "BLOCK"]
    assert sorted(values) == [64, 256]


def test_per_node_computes_once_per_node_object() -> None:
    node = ast.parse("x = 1").body[0]
    calls: list[ast.AST] = []

    def compute(n: ast.AST) -> int:
        calls.append(n)
        return 7

    assert per_node("test.once", node, compute) == 7
    assert per_node("test.once", node, compute) == 7
    assert calls == [node]
    other = ast.parse("x = 1").body[0]  # equal text, another object: computed again
    per_node("test.once", other, compute)
    assert len(calls) == 2
