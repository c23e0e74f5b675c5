"""Is a short task's timing launch-bound? Times KernelBench-form files three ways on the GPU and prints/saves them.

    python3 benchmarks/gpu/launch_bound_probe.py OUT.json FILE [FILE ...]

For each file's ModelNew (inputs from get_inputs() on the GPU): triton.testing.do_bench as the gate uses it (events
around each call, L2 flushed before each) with the CPU idle; the same while busy processes load every CPU core (as
`bench --jobs 8` compiles beside a timing); and do_bench_cudagraph (the launches replayed from a CUDA graph: GPU time
without the Python wrapper's launch cost). A first draft whose idle and busy figures differ, or whose event figure
is well above its graph figure, is timed by its launch path, not by its kernel.
"""

from __future__ import annotations

import importlib.util
import json
import multiprocessing as mp
import os
import sys
import time


def _spin(stop: float) -> None:
    while time.time() < stop:
        pass


def _load(path: str):  # noqa: ANN202
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(out_path: str, files: list[str]) -> None:
    import torch
    from triton.testing import do_bench, do_bench_cudagraph

    rows = []
    for path in files:
        m = _load(path)
        torch.manual_seed(0)
        inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in m.get_inputs()]
        init = m.get_init_inputs() if hasattr(m, "get_init_inputs") else []
        model = m.ModelNew(*init).cuda()
        with torch.no_grad():
            fn = lambda model=model, inputs=inputs: model(*inputs)  # noqa: E731
            fn()
            torch.cuda.synchronize()
            idle = [do_bench(fn, warmup=25, rep=100) for _ in range(3)]
            stop = time.time() + 6.0
            busy = [mp.Process(target=_spin, args=(stop,)) for _ in range(os.cpu_count() or 8)]
            for p in busy:
                p.start()
            time.sleep(0.5)
            loaded = [do_bench(fn, warmup=25, rep=100) for _ in range(3)]
            for p in busy:
                p.join()
            graph = [do_bench_cudagraph(fn, rep=100) for _ in range(3)]
        row = {"file": path, "do_bench_idle_ms": idle, "do_bench_cpu_loaded_ms": loaded, "cudagraph_ms": graph}
        rows.append(row)
        print(json.dumps(row), flush=True)
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump({"device": torch.cuda.get_device_name(0), "cpus": os.cpu_count(), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
