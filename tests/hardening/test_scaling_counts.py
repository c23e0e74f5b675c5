"""Issue 14 items 1 and 3: work per lookup / per item must not grow with the file (counted, not timed).

The timings are in benchmarks/hardening_scaling.py; here the operations that made them super-linear are counted.
"""

from __future__ import annotations

import asyncio

import pytest
from inprocess import chain_source, kernels_source, make_server, open_text
from lsprotocol import types

from tritonlens.analysis.kernels import ModuleInfo, clear_memo, parse_module
from tritonlens.analysis.kernels import model as kernel_model
from tritonlens.analysis.state.session import current
from tritonlens.analysis.triage import triage
from tritonlens.server.features import code_lenses as code_lens_lsp
from tritonlens.server.features import findings as findings_lsp
from tritonlens.server.features.code_lenses import CodeLensFeature
from tritonlens.server.lsp import views as lsp_views


def _triage_counting(monkeypatch: pytest.MonkeyPatch, source: str) -> tuple[int, int]:
    """(function trees read, sorts in the kernel model's lookups) during one uncached triage of `source`."""
    clear_memo()
    current().triage.clear()
    sorts = 0
    trees = 0
    real_sorted = sorted
    real_tree = ModuleInfo.function_tree

    def counting_sorted(*args, **kwargs):
        nonlocal sorts
        sorts += 1
        return real_sorted(*args, **kwargs)

    def counting_tree(self, kernel):
        nonlocal trees
        trees += 1
        return real_tree(self, kernel)

    monkeypatch.setattr(kernel_model, "sorted", counting_sorted, raising=False)
    monkeypatch.setattr(ModuleInfo, "function_tree", counting_tree)
    triage(source, "chain.py", strict=True)
    monkeypatch.undo()
    return trees, sorts


def test_helper_chain_lookups_grow_linearly(monkeypatch: pytest.MonkeyPatch):
    small = _triage_counting(monkeypatch, chain_source(40))
    big = _triage_counting(monkeypatch, chain_source(160))
    # Four times the helpers: about four times the tree reads, and sorting does not follow the lookups at all.
    # Before the fix every function re-read every helper's tree (16x) and each lookup re-sorted (16x).
    assert big[0] <= 5 * small[0], (small, big)
    assert big[1] <= small[1] + 10, (small, big)


def test_module_lookups_are_indexed():
    module = parse_module(chain_source(5))
    assert module.kernel("helper_3") is module.kernel("helper_3") is not None
    assert module.kernel("missing") is None
    assert [k.name for k in module.functions] == [*(f"helper_{i}" for i in range(5)), "kernel"]
    assert module.launches_of("kernel") == []


def test_has_arange_still_follows_helpers():
    from tritonlens.analysis.triage.context import KernelContext

    src = chain_source(3).replace("    return x + 2\n", "    return x + tl.arange(0, 4)\n")
    module = parse_module(src)
    ctx = KernelContext(module=module, kernel=module.kernel("helper_0"), path="x.py")
    assert ctx.has_arange  # helper_0 -> helper_1 -> helper_2 makes a block
    ctx2 = KernelContext(module=module, kernel=module.kernel("helper_2"), path="x.py")
    assert ctx2.has_arange
    plain = parse_module(chain_source(3))
    assert not KernelContext(module=plain, kernel=plain.kernel("helper_0"), path="x.py").has_arange


async def _lenses_counting(monkeypatch: pytest.MonkeyPatch, k: int) -> tuple[int, int, int]:
    """(lenses, line tables built, findings merges) for one codeLens request on a file of `k` kernels, every
    lens resolved, and the kernels list after it."""
    server, _ = make_server()
    uri = f"file:///tmp/lens_{k}.py"
    open_text(server, uri, kernels_source(k))
    doc = await asyncio.wait_for(server.current(uri), 60)
    assert doc is not None and doc.current
    tables = merges = 0
    real_lines = lsp_views.LineText

    class CountingLines(real_lines):
        def __init__(self, *args, **kwargs):
            nonlocal tables
            tables += 1
            super().__init__(*args, **kwargs)

    import tritonlens.server.lsp.core as lsp_server

    real_apply = lsp_server.apply_and_merge

    def counting_merge(*args, **kwargs):
        nonlocal merges
        merges += 1
        return real_apply(*args, **kwargs)

    monkeypatch.setattr(lsp_views, "LineText", CountingLines)
    monkeypatch.setattr(code_lens_lsp, "LineText", CountingLines)
    monkeypatch.setattr(lsp_server, "apply_and_merge", counting_merge)
    rows = await server.features.get(CodeLensFeature).lenses(doc)
    again = await server.features.get(CodeLensFeature).lenses(doc)
    assert again is rows  # the rows of a version are built once
    anywhere = types.Range(types.Position(0, 0), types.Position(0, 0))
    resolved = [
        code_lens_lsp.resolve_code_lens(server, types.CodeLens(range=anywhere, data=row["data"])) for row in rows
    ]
    kernel_rows = findings_lsp.kernels(server)
    monkeypatch.undo()
    server.shutdown_resources()
    assert len(kernel_rows) == k
    assert all(lens.command is not None and lens.command.title for lens in resolved)
    assert server.features.get(CodeLensFeature).cache.builds == 1
    return len(rows), tables, merges


async def test_code_lenses_do_no_per_kernel_document_work(monkeypatch: pytest.MonkeyPatch):
    lenses, tables, merges = await _lenses_counting(monkeypatch, 60)
    assert lenses >= 60
    # One line table for the lens rows, one for resolving (shared by hover and code actions) and one findings
    # merge for the whole request, its resolves and the kernels list after it, not one per kernel or per lens
    # (before the fix: a table per lens and a merge per kernel).
    assert tables <= 2 and merges <= 1, (tables, merges)


async def test_one_kernels_findings_do_not_build_the_workspace_list(monkeypatch: pytest.MonkeyPatch):
    # Class sweep of item 3: the lens command "Show this kernel's findings" built every kernel row of the
    # workspace (every open document and every indexed file) to pick one.
    server, _ = make_server()
    uri = "file:///tmp/rows_40.py"
    open_text(server, uri, kernels_source(40))
    doc = await asyncio.wait_for(server.current(uri), 60)
    assert doc is not None
    expected = {r["name"]: r["findings"] for r in findings_lsp.kernels(server)}
    listed = 0
    real = findings_lsp.kernels

    def counting(*args, **kwargs):
        nonlocal listed
        listed += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(findings_lsp, "kernels", counting)
    for name in ("k_0", "k_39"):
        assert findings_lsp.kernel_finding_rows(server, uri, name) == expected[name] != []
    assert findings_lsp.kernel_finding_rows(server, uri, "missing") == []
    # ... and the command the lens runs goes through it.
    (spec,) = [s for s in server.commands.specs() if s.name == "tritonlens.kernelFindings"]
    server.window_show_message = lambda params: None  # type: ignore[method-assign]
    assert await spec.handler(server, [uri, "k_7"]) == expected["k_7"]
    assert listed == 0
    server.shutdown_resources()
