"""The CUDA backend's choice between a graph replay and launch-by-launch timing, with a scripted stand-in for
torch.cuda (no GPU here: only the capture logic is under test; the H200 probe in bench/results/h200-launch-probe/
measured what each method reads)."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "ascend_runner" / "worker"))

import harness_backend  # noqa: E402

from tritonlens.server.engine.optimize.timing import GRAPH_REPLAY, judge, timed_by_graph  # noqa: E402


class FakeCuda:
    """Records what ran inside a capture; a capture of a host sync fails as CUDA's does."""

    def __init__(self, device_broken: bool = False) -> None:
        self.capturing = False
        self.captured: list[str] = []
        self.replays = 0
        self.device_broken = device_broken

    class Stream:
        def wait_stream(self, other: Any) -> None:
            pass

    def current_stream(self) -> FakeCuda.Stream:
        return FakeCuda.Stream()

    @contextmanager
    def stream(self, s: Any):  # noqa: ANN201
        yield

    def CUDAGraph(self) -> Any:  # noqa: N802
        cuda = self

        class Graph:
            def replay(self) -> None:
                cuda.replays += 1

        return Graph()

    @contextmanager
    def graph(self, g: Any, capture_error_mode: str = "global"):  # noqa: ANN201
        assert capture_error_mode == "thread_local"  # other threads of the worker may touch the device meanwhile
        self.capturing = True
        try:
            yield
        finally:
            self.capturing = False

    def synchronize(self) -> None:
        if self.capturing:
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing")
        if self.device_broken:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")


def backend(cuda: FakeCuda) -> harness_backend.CudaBackend:
    be = object.__new__(harness_backend.CudaBackend)  # no torch.cuda here: only the capture logic
    be.torch = type("FakeTorch", (), {"cuda": cuda})()
    return be


def test_a_capturable_call_is_timed_by_its_graph_replay():
    cuda = FakeCuda()
    calls = []

    def fn() -> str:
        calls.append(cuda.capturing)
        return "out"

    replay, why = backend(cuda)._graph_replay(fn)
    assert why == "" and replay is not None
    assert calls == [False, False, True]  # warmed up twice outside the capture, then captured once
    before = cuda.replays
    assert replay() == "out" and cuda.replays == before + 1  # the captured output stays alive with the replay
    assert len(calls) == 3  # a replay runs no Python of the call


def test_a_call_with_a_host_sync_falls_back_to_launches_and_says_why():
    cuda = FakeCuda()

    def fn() -> None:
        cuda.synchronize()  # like .item() or .cpu() in a wrapper

    replay, why = backend(cuda)._graph_replay(fn)
    assert replay is None and "not permitted when stream is capturing" in why


def test_a_device_fault_is_no_capture_problem():
    cuda = FakeCuda()

    def fn() -> None:
        if cuda.capturing:
            cuda.device_broken = True
            raise RuntimeError("captured launch failed")

    with pytest.raises(RuntimeError, match="illegal memory access"):
        backend(cuda)._graph_replay(fn)


def test_graph_replayed_samples_carry_no_launch_path_note():
    base, cand = [0.0210, 0.0211, 0.0210], [0.0058, 0.0058, 0.0059]
    graph = {"baseline_quantiles": [{"median": t, "method": GRAPH_REPLAY} for t in base],
             "candidate_quantiles": [{"median": t, "method": GRAPH_REPLAY} for t in cand]}
    assert GRAPH_REPLAY == harness_backend.GRAPH_REPLAY  # one wire value, named on both sides
    assert timed_by_graph(graph)
    assert "launch path" not in judge(base, cand, by_graph=True).reason
    mixed = {**graph, "candidate_quantiles": [{"median": t, "method": harness_backend.LAUNCHES} for t in cand]}
    assert not timed_by_graph(mixed) and not timed_by_graph({})  # older records name no method
    assert "launch path" in judge(base, cand, by_graph=timed_by_graph(mixed)).reason
