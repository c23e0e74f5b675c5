"""The language server's memory plateaus (issue 21, item 7): trees of old versions die, and every cache is
bounded by the bytes it holds, not by its number of entries."""

from __future__ import annotations

import ast
import gc
import weakref

from tritonlens.analysis.kernels.parse import clear_memo
from tritonlens.analysis.source.node_memo import per_node
from tritonlens.analysis.state import session as state
from tritonlens.analysis.state.session import current
from tritonlens.analysis.triage import triage
from tritonlens.analysis.triage.launch_facts import call_index

KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x, y, out):
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
'''


def _dies(make: object) -> bool:
    gc.collect()
    return make() is None  # type: ignore[operator]


def test_a_node_whose_memo_refers_to_it_dies_with_its_tree() -> None:
    tree = ast.parse("def f():\n    def g():\n        pass\n")
    stmt = tree.body[0]
    # The value holds the node itself (fusion.defs does: ast.walk(stmt) yields stmt).
    per_node("test.defs", stmt, lambda node: [n for n in ast.walk(node) if isinstance(n, ast.FunctionDef)])
    assert per_node("test.defs", stmt, lambda node: []) != []  # memoised
    ref = weakref.ref(stmt)
    del tree, stmt
    assert _dies(ref), "a memoised statement outlived its tree"


def test_a_call_index_dies_with_its_tree() -> None:
    tree = ast.parse(KERNEL)
    call_index(tree)
    ref = weakref.ref(tree)
    del tree
    assert _dies(ref), "the call index kept its tree alive"


def test_triaged_versions_do_not_stay_alive() -> None:
    """Every version of an edited file triaged, then the memos dropped: no tree of those versions is left."""
    refs: list[weakref.ref[ast.AST]] = []
    lines = KERNEL.split("\n")
    for version in range(6):
        lines.insert(3, f"# edit {version}")
        result = triage("\n".join(lines), "/tmp/edited.py")
        assert result.module.tree is not None
        refs.append(weakref.ref(result.module.tree.body[-1]))
        del result
    clear_memo()
    current().chunks.clear()
    gc.collect()
    alive = sum(ref() is not None for ref in refs)
    assert alive == 0, f"{alive} of {len(refs)} versions' trees still alive with every cache cleared"


def test_typing_in_a_large_file_keeps_a_bounded_number_of_versions_alive(monkeypatch) -> None:
    """As the server runs triage (collector paused during each run, high thresholds): 30 edits of a 1,000-line
    file leave only the versions the byte budget allows alive; before, every version's tree stayed."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.lsp_latency import generate
    from tritonlens.analysis.kernels import parse
    from tritonlens.server.lsp.analysis import analyze_text_quickly
    from tritonlens.server.lsp.collector import collect_if_due

    memo = current().parsed
    monkeypatch.setattr(memo, "budget", 8 * len(generate(1000)) * state.PARSED_BYTES_PER_CHAR // 2)
    monkeypatch.setattr(memo, "collect_every", memo.budget // 2)
    clear_memo()
    thresholds = gc.get_threshold()
    gc.set_threshold(20_000, 20, 20)
    try:
        lines = generate(1000).split("\n")
        refs = []
        for version in range(30):
            lines.insert(len(lines) // 2, f"# edit {version}")
            text = "\n".join(lines)
            analyze_text_quickly(text, "/tmp/typed.py", version)
            collect_if_due()  # as the server does after the publish
            refs.append(weakref.ref(parse.parse_module(text)))
        alive = sum(ref() is not None for ref in refs)
    finally:
        gc.set_threshold(*thresholds)
        clear_memo()
    assert alive <= 8, f"{alive} of 30 versions alive"
