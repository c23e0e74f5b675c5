"""Is a short task's timing launch-bound? Times KernelBench-form files four ways on the GPU and prints/saves them.

    python3 benchmarks/gpu/launch_bound_probe.py OUT.json FILE [FILE ...]

For each file's ModelNew (inputs from get_inputs() on the GPU): triton.testing.do_bench as the gate uses it (events
around each call, L2 flushed before each) with the CPU idle; the same while busy processes load every CPU core (as
`bench --jobs 8` compiles beside a timing); do_bench_cudagraph (the launches replayed from a CUDA graph: GPU time
without the Python wrapper's launch cost, L2 not flushed); and the runner worker's own `CudaBackend.time_ms` (a graph
replay under do_bench, L2 flushed before each) idle and busy for ModelNew, and once for Model, with the method each
used. A first draft whose idle and busy figures differ, or whose event figure is well above its graph figure, is
timed by its launch path, not by its kernel.
"""

from __future__ import annotations

import importlib.util
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "ascend_runner" / "worker"))


def _spin(stop: float) -> None:
    while time.time() < stop:
        pass


def _load(path: str):  # noqa: ANN202
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _loaded(measure):  # noqa: ANN001, ANN202
    """`measure()` while busy processes load every CPU core."""
    stop = time.time() + 3.0
    busy = [mp.Process(target=_spin, args=(stop,)) for _ in range(os.cpu_count() or 8)]
    for p in busy:
        p.start()
    time.sleep(0.5)
    try:
        return measure()
    finally:
        for p in busy:
            p.join()


def _probe(path: str, be) -> dict:  # noqa: ANN001
    import torch
    from triton.testing import do_bench, do_bench_cudagraph

    m = _load(path)
    torch.manual_seed(0)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in m.get_inputs()]
    init = m.get_init_inputs() if hasattr(m, "get_init_inputs") else []
    model = m.ModelNew(*init).cuda()
    reference = m.Model(*init).cuda()
    with torch.no_grad():

        def fn():  # noqa: ANN202
            return model(*inputs)

        fn()
        torch.cuda.synchronize()
        row = {
            "file": path,
            "do_bench_idle_ms": [do_bench(fn, warmup=25, rep=100) for _ in range(3)],
            "do_bench_cpu_loaded_ms": _loaded(lambda: [do_bench(fn, warmup=25, rep=100) for _ in range(3)]),
            "cudagraph_ms": [do_bench_cudagraph(fn, rep=100) for _ in range(3)],
            "worker_ms": [be.time_ms(fn, 25, 100) for _ in range(3)],
            "worker_cpu_loaded_ms": _loaded(lambda: [be.time_ms(fn, 25, 100) for _ in range(3)]),
            "model_worker_ms": be.time_ms(lambda: reference(*inputs), 25, 100),
        }
    return row


def main(out_path: str, files: list[str]) -> None:
    import torch
    from harness_backend import CudaBackend

    be = CudaBackend()
    rows = []
    for path in files:
        row = _probe(path, be)
        rows.append(row)
        print(json.dumps(row), flush=True)
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(
            {"device": torch.cuda.get_device_name(0), "cpus": os.cpu_count(), "rows": rows}, fh, indent=1
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
