"""Replay verification end to end on the CPU: a non-KernelBench example (examples/naive_softmax.py) has its
launches recorded by `tritonlens record --backend interpret`, then the gate replays them against the original
kernel: a correct kernel-body rewrite passes, wrong ones fail, a launch-site change is refused with the reason, and
`tritonlens optimize` on the file verifies by replay instead of refusing it."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tritonlens.analysis.rewrite.model import Candidate
from tritonlens.server.engine.optimize.gate import Gate, GateConfig
from tritonlens.server.engine.optimize.replay import replay_launches, replay_plan

ROOT = Path(__file__).resolve().parents[2]
TRITONLENS = Path(sys.executable).parent / "tritonlens"

pytestmark = pytest.mark.cuda_env

DRIVER = """
import torch
import naive_softmax as m

torch.manual_seed(0)
for rows, cols, temperature in ((3, 100, 1.0), (2, 37, 0.5)):
    x = torch.randn(rows, cols)
    m.softmax(x, torch.full((1,), temperature))
"""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project holding the example and a small driver, with the driver's launches recorded (interpret)."""
    root = tmp_path_factory.mktemp("replay-ws")
    shutil.copy(ROOT / "examples" / "naive_softmax.py", root / "naive_softmax.py")
    (root / "pyproject.toml").write_text("[project]\nname = 'ws'\n")
    (root / "driver.py").write_text(DRIVER)
    proc = subprocess.run(
        [str(TRITONLENS), "record", "--backend", "interpret", "--", "python", "driver.py"],
        cwd=root, capture_output=True, text=True, timeout=300,
    )
    if proc.returncode != 0 and "environment" in proc.stderr:
        pytest.skip(f"cuda runner environment missing: {proc.stderr[-300:]}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "softmax_kernel: 2 distinct launch(es)" in proc.stdout, proc.stdout
    return root


def _gate(runner, path: Path, source: str) -> Gate:
    launches = replay_launches(str(path), source, ["softmax_kernel"])
    assert len(launches) == 2
    return Gate(runner, GateConfig(backend="interpret", target="sm_90", seeds=(0, 1)), replay_plan(launches),
                str(path), reference_source=source, launches=launches)


def _candidate(source: str, old: str, new: str) -> Candidate:
    assert old in source
    return Candidate(source=source.replace(old, new), origin="recipe", producer="test", kernel="softmax_kernel",
                     title=new, rationale="")


STORE = "tl.store(row_out + cols, y, mask=cols < n_cols)"
CASES = {
    # a correct rewrite of the kernel body: one reciprocal per row instead of a division per element
    "reciprocal": ("y = tl.exp((x - row_max) / temperature) / denom",
                   "y = tl.exp((x - row_max) / temperature) * (1.0 / denom)", None, None),
    "scaled by 1e-3": (STORE, "tl.store(row_out + cols, y * 1.001, mask=cols < n_cols)", "correctness",
                       "outside atol"),
    "off by one": (STORE, "tl.store(row_out + cols, y, mask=cols < n_cols - 1)", "correctness", "outside atol"),
    "nan": (STORE, "tl.store(row_out + cols, y + tl.sqrt(-1.0 - y), mask=cols < n_cols)", "correctness", "NaN"),
    # launch-site knobs: replayed with the candidate's constexprs, options and grid overriding the recorded ones
    "block size and warps": ("n_cols, BLOCK_SIZE=32)", "n_cols, BLOCK_SIZE=64, num_warps=2)", None, None),
    "grid too small": ("softmax_kernel[(n_rows,)]", "softmax_kernel[(max(n_cols // 64, 1),)]", "correctness",
                       "outside atol"),
    "block the kernel mis-handles": ("n_cols, BLOCK_SIZE=32)", "n_cols, BLOCK_SIZE=48)", "correctness",
                                     "power of 2"),
    # a change the overrides cannot express: declined before anything runs
    "wrapper": ("y = x.new_empty(x.shape)", "y = x.new_zeros(x.shape)", "replay", "outside the kernels' bodies"),
    "grid from a value replay does not hold": ("softmax_kernel[(n_rows,)]", "softmax_kernel[(n_rows + 0,)]",
                                               "replay", "cannot be computed from the recorded"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_replay_gate_judges_kernel_rewrites_against_the_recorded_launches(runner, workspace, name):
    path = workspace / "naive_softmax.py"
    source = path.read_text()
    old, new, stage, words = CASES[name]
    verdict = _gate(runner, path, source).check(source, _candidate(source, old, new)).verdict
    if stage is None:
        assert verdict.accepted, verdict.reason
        checks = verdict.details["checks"]
        assert [c["shape"].split(" grid")[0] for c in checks] == ["softmax_kernel launch 1"] * 2 + [
            "softmax_kernel launch 2"] * 2
        assert all(c["passed"] and c["reference"].startswith("original kernel, float64") for c in checks)
        # every tensor argument is compared (output, input, temperature), each with its bound named
        bounds = checks[0]["tolerance"]["outputs"]
        assert len(bounds) == 3 and all("K unknown in a replay" in b["basis"] for b in bounds)
        assert "correct on 2 shape(s) x 2 seed(s)" in verdict.reason
        assert verdict.details["mode"] == "replay"  # the hover record says how it was compared
        if "BLOCK_SIZE=64" in new:  # the candidate ran with its own block size and warps, on the recorded grid
            assert all("(candidate: grid [" in c["shape"] and "BLOCK_SIZE=64 num_warps=2" in c["shape"]
                       for c in checks), checks
        return
    assert not verdict.accepted
    assert verdict.stage == stage, verdict.reason
    assert words in verdict.reason


def test_optimize_cli_verifies_a_recorded_file_by_replay(workspace):
    proc = subprocess.run(
        [str(TRITONLENS), "optimize", "naive_softmax.py", "--backend", "interpret", "--target", "sm_90",
         "--budget", "candidates=2,rounds=1", "--format", "json"],
        cwd=workspace, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    files = report["files"] if isinstance(report, dict) and "files" in report else report
    entry = files[0]
    text = json.dumps(entry)
    assert "verified by replaying 2 recorded launch(es)" in text
    assert "not in KernelBench form" not in text


def test_replay_payload_is_a_valid_verify_request_and_needs_launches():
    from tritonlens.ascend_runner.protocol import ProtocolError, verify_request_from

    launch = {"kernel": "k", "grid": [1, 1, 1], "args": [{"name": "x", "kind": "tensor", "dtype": "float32",
                                                           "shape": [4], "strides": [1], "range": [-1.0, 1.0]}]}
    gate = Gate(None, GateConfig(), replay_plan([launch]), "f.py", reference_source="x = 1\n", launches=[launch])
    sent = gate.plan("x = 1\n", "x = 1  # the candidate\n").request
    request = verify_request_from(dataclasses.asdict(sent))  # what the runner receives, read back as it checks it
    assert request.harness.mode == "replay" and request.launches == [launch] and request == sent
    with pytest.raises(ProtocolError, match="needs `launches`"):
        verify_request_from({**dataclasses.asdict(sent), "launches": []})


HOST_TIMED = """
import json, sys
sys.path.insert(0, sys.argv[1])
from harness_backend import InterpretBackend, interpret_mode
from verify_job import verify_job

class HostTimed(InterpretBackend):
    timing_meaningful = True  # exercises the timed path; the numbers mean nothing

with interpret_mode(True):
    print(json.dumps(verify_job(HostTimed(), json.loads(sys.stdin.read())), default=str))
"""


def _replay_on_host_clock(candidate: str, grid: int) -> dict:
    fixture = ROOT / "tests" / "fixtures" / "optimize" / "kb_scale.py"
    launch = {
        "kernel": "scale_kernel", "grid": [grid, 1, 1], "count": 3, "options": {"num_warps": 4},
        "args": [
            {"name": "x_ptr", "kind": "tensor", "dtype": "float32", "shape": [1000], "strides": [1], "range": [-3, 3]},
            {"name": "out_ptr", "kind": "tensor", "dtype": "float32", "shape": [1000], "strides": [1]},
            {"name": "n", "kind": "int", "value": 1000},
            {"name": "BLOCK", "kind": "constexpr", "value": 64},
        ],
    }
    payload = {
        "harness": {"mode": "replay", "path": str(fixture), "source": candidate},
        "baseline_source": fixture.read_text(), "launches": [launch], "seeds": [0, 1],
        "interleave": {"repeats": 2}, "timing": {"warmup_ms": 1, "rep_ms": 1},
    }
    proc = subprocess.run(
        [str(ROOT / ".envs" / "cuda" / "bin" / "python"), "-c", HOST_TIMED, str(ROOT / "ascend_runner" / "worker")],
        input=json.dumps(payload), capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_worker_replays_a_hand_written_launch_and_times_original_against_candidate():
    source = (ROOT / "tests" / "fixtures" / "optimize" / "kb_scale.py").read_text()
    good = _replay_on_host_clock(source.replace("x * 2.0 + 1.0, mask=mask)", "x + x + 1.0, mask=mask)"), grid=16)
    assert good["mode"] == "replay" and good["passed"], good
    assert [c["seed"] for c in good["checks"]] == [0, 1]
    assert len(good["timing"]["baseline_ms"]) == len(good["timing"]["candidate_ms"]) == 2
    assert "weighted by how often" in good["timing"]["method"]
    # a candidate that stops short: the tail of the output keeps its random start values and mismatches
    short = _replay_on_host_clock(source.replace("mask = offs < n", "mask = offs < n - 40"), grid=16)
    assert not short["passed"] and "outside atol" in short["checks"][0]["reason"]


def test_launches_with_arguments_replay_cannot_rebuild_are_not_replayed():
    from tritonlens.server.engine.optimize.replay import replayable

    tensor = {"name": "x", "kind": "tensor", "dtype": "float32", "shape": [4], "strides": [1]}
    assert replayable({"kernel": "k", "args": [tensor, {"name": "n", "kind": "int", "value": 4}]})
    assert not replayable({"kernel": "k", "args": [tensor, {"name": "d", "kind": "other", "value": "TensorDescriptor"}]})


class _Fixed:
    """A proposer handing the loop fixed candidates (what a recipe or the config search would)."""

    name = "fixed"

    def __init__(self, candidates: list[Candidate]) -> None:
        self.candidates, self.declined = candidates, []

    def propose(self, ctx, feedback):
        out, self.candidates = self.candidates, []
        return out


def test_candidates_replay_cannot_verify_are_declined_before_taking_the_budget(runner, workspace):
    from tritonlens.server.engine.optimize.loop import Budget, OptimizeOptions, optimize_source
    from tritonlens.server.engine.optimize.report import to_markdown

    path = workspace / "naive_softmax.py"
    source = path.read_text()
    wrapper = _candidate(source, "y = x.new_empty(x.shape)", "y = x.new_zeros(x.shape)")
    block = _candidate(source, "n_cols, BLOCK_SIZE=32)", "n_cols, BLOCK_SIZE=64)")
    options = OptimizeOptions(backend="interpret", target="sm_90", budget=Budget(candidates=1, rounds=1), profile=False)
    result = optimize_source(source, str(path), runner, options, proposers=[_Fixed([wrapper, block])])
    assert result.error is None, result.error
    # the one verification slot went to the block-size change, verified by replay with its override
    assert [s.candidate.title for s in result.offered] == [block.title], result.rejected
    assert not result.rejected
    declined = [d for d in result.declined if d.proposer == "test"]
    assert len(declined) == 1 and wrapper.title in declined[0].reason
    assert "outside the kernels' bodies (line " in declined[0].reason
    assert "Recipes that did not apply" in to_markdown(result)


SCALE = """
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


def scale(x, out, n):
    scale_kernel[(triton.cdiv(n, 64),)](x, out, n, BLOCK=64)
"""


def test_launch_overrides_recompute_the_grid_and_refuse_what_they_cannot_express():
    from tritonlens.server.engine.optimize.replay_overrides import candidate_launches

    launch = {"kernel": "scale_kernel", "grid": [16, 1, 1], "options": {"num_warps": 4}, "args": [
        {"name": "n", "kind": "int", "value": 1000}, {"name": "BLOCK", "kind": "constexpr", "value": 64}]}
    site = "scale_kernel[(triton.cdiv(n, 64),)](x, out, n, BLOCK=64)"

    def sides(new_site: str) -> tuple[list, str | None]:
        return candidate_launches([launch], SCALE, SCALE.replace(site, new_site))

    launches, why = sides("scale_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256, num_stages=2)")
    assert why is None and launches[0]["candidate"] == {
        "grid": [4, 1, 1], "constexprs": {"BLOCK": 256}, "options": {"num_warps": 4, "num_stages": 2}}
    launches, why = sides('scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, BLOCK=128)')
    assert why is None and launches[0]["candidate"]["grid"] == [8, 1, 1]
    assert sides(site)[0] == [launch]  # nothing changed at the site: replayed as recorded
    # An option the candidate leaves alone keeps the recorded value even when the wrapper computed it from
    # values the record does not hold (Liger's cross-entropy: `num_warps=ce_num_warps`, candidate num_stages=4).
    computed = SCALE.replace(site, "scale_kernel[(triton.cdiv(n, 64),)](x, out, n, BLOCK=64, num_warps=x.shape[1])")
    launches, why = candidate_launches([launch], computed, computed.replace("num_warps=x.shape[1])",
                                                                             "num_warps=x.shape[1], num_stages=4)"))
    assert why is None and launches[0]["candidate"]["options"] == {"num_warps": 4, "num_stages": 4}
    for changed, words in (
        ("scale_kernel[(triton.cdiv(n, 64),)](x, out, n - 1, BLOCK=64)", "outside the kernels' bodies"),
        ("scale_kernel[(triton.cdiv(n, 64),)](x, out, n, BLOCK=x.shape[0])", "cannot be computed"),
        ("scale_kernel[(triton.cdiv(x.numel(), 64),)](x, out, n, BLOCK=64)", "cannot be computed"),
    ):
        assert words in (sides(changed)[1] or ""), changed


SCALE_LOCALS = SCALE.replace("""    scale_kernel[(triton.cdiv(n, 64),)](x, out, n, BLOCK=64)""", """    BLOCK = 64
    grid = (triton.cdiv(n, BLOCK),)
    scale_kernel[grid](x, out, n, BLOCK=BLOCK)""")


def test_launch_overrides_follow_block_sizes_moved_in_the_wrappers_locals():
    """What config search moves: a block size assigned once to a local that sizes both the grid and the launch."""
    from tritonlens.server.engine.optimize.replay_overrides import candidate_launches

    launch = {"kernel": "scale_kernel", "grid": [16, 1, 1], "options": {}, "args": [
        {"name": "n", "kind": "int", "value": 1000}, {"name": "BLOCK", "kind": "constexpr", "value": 64}]}
    launches, why = candidate_launches([launch], SCALE_LOCALS, SCALE_LOCALS.replace("BLOCK = 64", "BLOCK = 128"))
    assert why is None and launches[0]["candidate"] == {"grid": [8, 1, 1], "constexprs": {"BLOCK": 128}, "options": {}}
    power = SCALE_LOCALS.replace("BLOCK = 64", "BLOCK = min(triton.next_power_of_2(n), 512)")
    launches, why = candidate_launches([launch], SCALE_LOCALS, power)
    assert why is None and launches[0]["candidate"]["constexprs"] == {"BLOCK": 512}
    assert launches[0]["candidate"]["grid"] == [2, 1, 1]
    # a local the wrapper also reads elsewhere is wrapper logic, not a knob
    shared = SCALE_LOCALS.replace("    scale_kernel[grid]", "    out.fill_(BLOCK)\n    scale_kernel[grid]")
    _, why = candidate_launches([launch], shared, shared.replace("BLOCK = 64", "BLOCK = 128"))
    assert why and "outside the kernels' bodies" in why


def test_a_knob_of_a_kernel_launched_from_two_sites_moves_at_both_and_replays():
    """Liger's RoPE launches one kernel from its forward and its backward wrapper: config search moves num_warps
    at both sites (a record does not say which site launched it), and replay can then verify the move."""
    from tritonlens.analysis.kernels import parse_module
    from tritonlens.server.engine.optimize.knobs import apply_edits, find_knobs
    from tritonlens.server.engine.optimize.replay_overrides import candidate_launches

    two_sites = SCALE + "\n\ndef scale_backward(g, out, n):\n    scale_kernel[(triton.cdiv(n, 64),)](g, out, n, BLOCK=64)\n"
    module = parse_module(two_sites)
    params = {k.name: [(p.name, p.is_constexpr) for p in k.params] for k in module.kernels}
    warps = next(k for k in find_knobs(two_sites, params) if k.kind == "num_warps")
    moved = apply_edits(two_sites, warps.edits(8, two_sites))
    assert moved.count("BLOCK=64, num_warps=8)") == 2
    launch = {"kernel": "scale_kernel", "grid": [16, 1, 1], "options": {}, "args": [
        {"name": "n", "kind": "int", "value": 1000}, {"name": "BLOCK", "kind": "constexpr", "value": 64}]}
    launches, why = candidate_launches([launch], two_sites, moved)
    assert why is None and launches[0]["candidate"]["options"] == {"num_warps": 8}
    one_site = two_sites.replace("(g, out, n, BLOCK=64)", "(g, out, n, BLOCK=64, num_warps=8)")
    assert "launched from several sites" in (candidate_launches([launch], two_sites, one_site)[1] or "")


def test_an_llm_candidate_is_replayed_confined(runner, workspace):
    """Replay loads the candidate's kernels (under interpret, their bodies run as Python): an LLM's text runs in a
    confined fresh process (issue 21), with the same verdict as any candidate."""
    path = workspace / "naive_softmax.py"
    source = path.read_text()
    old, new, _, _ = CASES["reciprocal"]
    cand = Candidate(source=source.replace(old, new), origin="llm", producer="m", kernel="softmax_kernel",
                     title="reciprocal", rationale="")
    verdict = _gate(runner, path, source).check(source, cand).verdict
    assert verdict.accepted, verdict.reason
    assert verdict.details["sandbox"]["confined"] is True and verdict.details["mode"] == "replay"
