"""Config search inside `@triton.autotune` (issue 24 part 3): configs written as literals or built by a helper /
comprehension are read, pruned to the recorded best, moved to a neighbour as a single config (which replay then
verifies launch by launch), or extended with neighbours and a completed key; every candidate is the whole file
edited in place."""

from __future__ import annotations

import ast

import pytest

from tritonlens.analysis.kernels import parse_module
from tritonlens.analysis.kernels.config_lists import autotune_configs, read_configs
from tritonlens.analysis.rewrite.model import RecipeContext
from tritonlens.server.engine.optimize.autotune_search import autotune_moves, tile_dependent_args
from tritonlens.server.engine.optimize.replay_overrides import candidate_launches

LITERAL = '''
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4, num_stages=2),
    ],
    key=["M"],
)
@triton.jit
def tile_kernel(x_ptr, y_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    for start in range(0, N, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
        ptrs = offs_m[:, None] * stride_m + offs_n[None, :]
        tl.store(y_ptr + ptrs, tl.load(x_ptr + ptrs, mask=mask) * 2.0, mask=mask)


def run(x, y):
    M, N = x.shape  # a comment the edit keeps
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]),)
    tile_kernel[grid](x, y, M, N, x.stride(0))
'''

HELPER = LITERAL.replace('''@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4, num_stages=2),
    ],
    key=["M"],
)''', '''def get_configs():
    configs = []
    for bm in [32, 64]:
        for w in (4, 8):
            configs.append(triton.Config({"BLOCK_M": bm, "BLOCK_N": 32}, num_warps=w))
    return configs + [triton.Config({"BLOCK_M": b, "BLOCK_N": 64}, num_warps=4) for b in range(16, 33, 16) if b > 16]


@triton.autotune(configs=get_configs(), key=["M", "N"])''')


def launch(**values) -> dict:
    args = [{"name": "x_ptr", "kind": "tensor", "dtype": "float32", "shape": [100, 70], "strides": [70, 1]},
            {"name": "y_ptr", "kind": "tensor", "dtype": "float32", "shape": [100, 70], "strides": [70, 1]},
            {"name": "M", "kind": "int", "value": 100}, {"name": "N", "kind": "int", "value": 70},
            {"name": "stride_m", "kind": "int", "value": 70}]
    args += [{"name": k, "kind": "constexpr", "value": v} for k, v in values.items() if k != "options"]
    return {"kernel": "tile_kernel", "grid": [100 // values["BLOCK_M"] + 1, 1, 1], "count": 1,
            "options": values.get("options", {"num_warps": 4}), "args": args}


def _fn(source: str) -> ast.FunctionDef:
    tree = ast.parse(source)
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "tile_kernel")


def test_configs_built_by_a_helper_loop_and_a_comprehension_are_read():
    tree = ast.parse(HELPER)
    configs = autotune_configs(_fn(HELPER), tree)
    assert configs == [({"BLOCK_M": 32, "BLOCK_N": 32}, {"num_warps": 4}), ({"BLOCK_M": 32, "BLOCK_N": 32}, {"num_warps": 8}),
                       ({"BLOCK_M": 64, "BLOCK_N": 32}, {"num_warps": 4}), ({"BLOCK_M": 64, "BLOCK_N": 32}, {"num_warps": 8}),
                       ({"BLOCK_M": 32, "BLOCK_N": 64}, {"num_warps": 4})]
    # a list built from a value only known at run time is not read at all (never half a list)
    assert read_configs(ast.parse("f(get(n))").body[0].value.args[0], tree) is None  # type: ignore[attr-defined]


def test_recorded_best_is_pruned_to_and_neighbours_replay_as_single_configs():
    rec = launch(BLOCK_M=64, BLOCK_N=32, options={"num_warps": 4, "num_stages": 2})
    moves, why = autotune_moves(LITERAL, "tile_kernel", [rec])
    assert why is None
    first = moves[0]
    assert first.label.startswith("autotune: keep only the recorded best config (BLOCK_M=64")
    assert first.source.count("triton.Config(") == 1 and "'BLOCK_M': 64" in first.source
    # the user's text outside the config list is kept as written
    assert "M, N = x.shape  # a comment the edit keeps" in first.source and 'key=["M"],' in first.source
    (got,), why = candidate_launches([rec], LITERAL, first.source)
    assert why is None and got["candidate"]["constexprs"] == {"BLOCK_M": 64, "BLOCK_N": 32}
    larger = next(m for m in moves if "BLOCK_M=128" in m.label and "num_warps=8" in m.label)
    (got,), why = candidate_launches([rec], LITERAL, larger.source)
    assert why is None
    assert got["candidate"]["constexprs"]["BLOCK_M"] == 128 and got["candidate"]["options"]["num_warps"] == 8
    assert got["candidate"]["grid"] == [1, 1, 1]  # the META lambda recomputed: cdiv(100, 128)
    # with launches recorded, no "more configs" move: replay could not tell which one the autotuner picks
    assert not any("more config" in m.label for m in moves)


def test_helper_built_configs_are_replaced_in_place_and_replayed():
    rec = launch(BLOCK_M=64, BLOCK_N=32, options={"num_warps": 8})
    moves, why = autotune_moves(HELPER, "tile_kernel", [rec])
    assert why is None and "keep only the recorded best config (BLOCK_M=64, BLOCK_N=32, num_warps=8)" in moves[0].label
    assert "def get_configs():" in moves[0].source  # the helper stays; the decorator's argument is the edit
    neighbour = moves[1]
    assert neighbour.source.count("triton.Config(") == 3  # two in the helper, one in the decorator
    (got,), why = candidate_launches([rec], HELPER, neighbour.source)
    assert why is None
    side = {**got["candidate"]["constexprs"], **{k: v for k, v in got["candidate"]["options"].items()}}
    expected = {k: v for k, v in neighbour.config.items() if k != "autotune"}
    assert {k: side.get(k, v) for k, v in expected.items()} == expected
    assert expected != {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 8}


def test_without_records_configs_are_added_where_they_are_written_and_the_key_completed():
    assert set(tile_dependent_args(_fn(LITERAL), {"BLOCK_M", "BLOCK_N"})) == {"M", "N"}  # not stride_m, not ptrs
    moves, _ = autotune_moves(LITERAL, "tile_kernel", [])
    added = next(m for m in moves if "more config" in m.label)
    assert "key gains N" in added.label
    assert 'key=["M", \'N\'],' in added.source
    # appended after the last config, on its own line with the list's indentation
    assert 'num_stages=2),\n        triton.Config({' in added.source
    compile(added.source, "candidate", "exec")
    n_configs = len(autotune_configs(_fn(added.source), ast.parse(added.source)) or [])
    assert n_configs == 2 + added.config["configs"]
    helper_added = next(m for m in autotune_moves(HELPER, "tile_kernel", [])[0] if "more config" in m.label)
    assert "configs=get_configs() + [triton.Config(" in helper_added.source
    assert "key gains" not in helper_added.label  # M and N are both in its key already


@pytest.mark.cuda_env
def test_config_search_proposes_compiled_autotune_moves(runner, tmp_path):
    from tritonlens.server.engine.optimize.config_search import ConfigSearch

    path = tmp_path / "tile.py"
    path.write_text(LITERAL)
    ctx = RecipeContext(source=LITERAL, path=str(path), kernel="tile_kernel", module=parse_module(LITERAL))
    search = ConfigSearch(runner, "sm_90", backend="cuda", max_survivors=4)
    survivors, pruned = search.search(ctx)
    assert not any("autotuned" in d.reason for d in search.declined), search.declined
    assert survivors, pruned
    assert all(c.title.startswith("config: autotune:") and "autotune configs" in c.rationale for c in survivors)
    assert all("registers" in c.rationale for c in survivors)
