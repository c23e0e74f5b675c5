"""The `verify` job for files that are not in KernelBench form: replay the kernel's recorded launches.

Each launch recorded by `tritonlens record` (server/launch_store.py) names the kernel, its grid, options, and
per argument the dtype, shape and strides of a tensor (with its value range at record time) or a scalar's value.
For every launch and seed, fresh tensors are drawn from that description (floats uniform in the recorded range,
else standard normal; integers uniform in their recorded range, so index tensors stay in bounds), and the
ORIGINAL kernel (`reference_source`, else `baseline_source`) and the candidate's kernel are launched on copies of
the same arguments. Every tensor argument is compared afterwards (what the kernel writes, and that it writes
nothing else): an element the candidate never writes keeps its random start value and mismatches. The original
kernel also runs on float64 copies of the float tensors, when it compiles so; the tolerance then includes the
original's own distance from that (replay cannot watch a PyTorch reference for the longest sum).

Payload: harness {"mode": "replay", "path", "source": candidate}, baseline_source, reference_source?, launches,
seeds, atol/rtol?, time, timing, interleave {"repeats"}. Stdlib + torch + triton only (no tritonlens).
"""

from __future__ import annotations

from typing import Any

from harness_backend import Backend
from harness_load import HarnessError, captured_output, find_kernel, load_module
from harness_models import describe_exception
from harness_record import LaunchRecorder, recording
from harness_tolerance import Accumulation, dot_precision
from harness_verify import check_seeds, compare
from source_module import decode_constants

REPLAY_K = Accumulation(note="K unknown in a replay, bound widened by the original's own float64 error")


def _storage_size(shape: list[int], strides: list[int]) -> int:
    if any(int(s) == 0 for s in shape):
        return 0
    return 1 + sum((int(s) - 1) * abs(int(st)) for s, st in zip(shape, strides, strict=False))


def _tensor(torch: Any, arg: dict[str, Any], gen: Any) -> Any:
    dtype = getattr(torch, str(arg.get("dtype")), None)
    if not isinstance(dtype, torch.dtype):
        raise HarnessError(f"argument {arg.get('name')}: unknown dtype {arg.get('dtype')!r}")
    shape, strides = list(arg.get("shape") or []), list(arg.get("strides") or [])
    n = _storage_size(shape, strides) if shape else 1
    lo, hi = (arg.get("range") or [None, None])[:2]
    if dtype.is_floating_point:
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and abs(lo) < 1e6 and abs(hi) < 1e6:
            flat = torch.rand(n, generator=gen, dtype=torch.float64) * (hi - lo) + lo
        else:  # no range, or the garbage of a fresh allocation: an output
            flat = torch.randn(n, generator=gen, dtype=torch.float64)
    elif dtype == torch.bool:
        flat = torch.randint(0, 2, (n,), generator=gen).bool()
    else:
        ok = isinstance(lo, int) and isinstance(hi, int) and 0 <= hi - lo < 2**31
        low, high = (lo, hi + 1) if ok else (0, 2)
        flat = torch.randint(low, high, (n,), generator=gen, dtype=torch.int64)
    flat = flat.to(dtype)
    return flat.as_strided(shape, strides) if shape else flat.reshape(())


def make_arguments(be: Backend, launch: dict[str, Any], seed: int) -> dict[str, Any]:
    """Keyword arguments for `kernel.run` rebuilt from a recorded launch, fresh for `seed`."""
    torch = be.torch
    gen = torch.Generator().manual_seed(int(seed))
    values: dict[str, Any] = {}
    for arg in launch.get("args") or []:
        name, kind = arg.get("name"), arg.get("kind")
        if kind == "tensor":
            values[name] = _tensor(torch, arg, gen).to(be.device)
        elif kind in ("int", "float", "bool"):
            values[name] = arg.get("value")
        elif kind == "constexpr":
            values[name] = decode_constants({name: arg.get("value")})[name]
        elif kind == "none":
            values[name] = None
        else:
            raise HarnessError(f"argument {name} ({arg.get('value')}) cannot be rebuilt from a recorded launch")
    return values


def _copy(values: dict[str, Any], float64: bool = False) -> dict[str, Any]:
    out = {}
    for name, v in values.items():
        if hasattr(v, "clone"):
            v = v.clone()
            if float64 and v.is_floating_point():
                v = v.double()
        out[name] = v
    return out


def _side(launch: dict[str, Any], who: str) -> dict[str, Any]:
    """The launch as `who` ("candidate", "baseline") makes it: a launch site's changed constexprs, options and grid
    (the server's `launch["candidate"]`/`["baseline"]`) replace the recorded ones; else the launch as recorded."""
    side = launch.get(who)
    if not isinstance(side, dict):
        return launch
    return {**launch, "grid": side.get("grid") or launch["grid"], "options": side.get("options") or {},
            "constexprs": side.get("constexprs") or {}}


def _launch(be: Backend, kernel: Any, launch: dict[str, Any], values: dict[str, Any]) -> Any:
    values = {**values, **(launch.get("constexprs") or {})}
    options = {k: v for k, v in (launch.get("options") or {}).items() if k not in values}
    compiled = kernel.run(grid=tuple(launch["grid"]), warmup=False, **values, **options)
    be.synchronize()
    return compiled


def _tensors(values: dict[str, Any]) -> list[Any]:
    return [v for v in values.values() if hasattr(v, "dtype") and hasattr(v, "shape")]


def _label(index: int, launch: dict[str, Any]) -> str:
    shapes = [f"{a.get('name')}{list(a.get('shape') or [])}" for a in launch.get("args") or []
              if a.get("kind") == "tensor"]
    label = f"{launch.get('kernel')} launch {index + 1} grid {list(launch.get('grid') or [])} " + " ".join(shapes[:3])
    side = launch.get("candidate")
    if isinstance(side, dict):  # say what the candidate ran with: the check is not of the recorded launch alone
        knobs = {**(side.get("constexprs") or {}), **(side.get("options") or {})}
        label += f" (candidate: grid {side.get('grid')} {' '.join(f'{k}={v}' for k, v in knobs.items())})"
    return label


def replay_verify(be: Backend, payload: dict[str, Any]) -> dict[str, Any]:
    harness = payload["harness"]
    path = harness["path"]
    result: dict[str, Any] = {"ok": True, "passed": True, "backend": be.name, "mode": "replay", "checks": [],
                              "tolerance": {}, "timing_meaningful": be.timing_meaningful, "errors": []}
    launches = [x for x in payload.get("launches") or [] if isinstance(x, dict) and x.get("kernel")]
    if not launches:
        raise HarnessError("replay verification needs recorded launches (tritonlens record -- COMMAND)")
    with captured_output():
        reference_text = payload.get("reference_source") or payload.get("baseline_source")
        if reference_text is None:
            raise HarnessError("replay verification needs the original text (baseline_source)")
        ref_mod = load_module(f"{path}.reference.py", reference_text)
        base_mod = ref_mod
        if payload.get("baseline_source") not in (None, reference_text):
            base_mod = load_module(f"{path}.baseline.py", payload["baseline_source"])
        cand_mod = load_module(path, harness.get("source"))
        recorder = LaunchRecorder(max_launches=16)
        for index, launch in enumerate(launches):
            if not _replay_one(be, index, launch, ref_mod, cand_mod, payload, recorder, result):
                break
        if payload.get("time", True) and be.timing_meaningful and result["passed"]:
            try:
                _interleaved(be, launches, base_mod, cand_mod, payload, result)
            except Exception as exc:
                result["errors"].append(f"timing the replayed launches failed: {describe_exception(exc)}")
    return result


def _replay_one(
    be: Backend, index: int, launch: dict[str, Any], ref_mod: Any, cand_mod: Any, payload: dict[str, Any],
    recorder: LaunchRecorder, result: dict[str, Any],
) -> bool:
    label = _label(index, launch)
    try:
        reference, candidate = find_kernel(ref_mod, launch["kernel"]), find_kernel(cand_mod, launch["kernel"])
    except HarnessError as exc:
        result["checks"].append({"seed": -1, "shape": label, "held_out": False, "passed": False, "reason": str(exc)})
        result["passed"] = False
        return False

    def check_one(seed: int) -> dict[str, Any]:
        values = make_arguments(be, launch, seed)
        expected = _copy(values)
        _launch(be, reference, launch, expected)
        exact, note = _copy(values, float64=True), ""
        try:
            _launch(be, reference, launch, exact)
        except Exception as exc:  # a kernel that cannot take float64 pointers: the native result only
            exact, note = None, f"the original kernel did not run in float64: {describe_exception(exc)[:160]}"
        got = _copy(values)
        with recording(recorder):
            _launch(be, candidate, _side(launch, "candidate"), got)
        outcome = compare(_tensors(got), _tensors(expected), _tensors(exact) if exact else None, REPLAY_K,
                          dot_precision(recorder.launches, be.name), payload.get("atol"), payload.get("rtol"),
                          widen_by_reference_error=True)
        outcome["reference"] = "original kernel, float64 and as written" if exact else f"original kernel ({note})"
        return outcome

    return check_seeds(payload, result, label, False, check_one, "replaying the launch failed")


def _interleaved(
    be: Backend, launches: list[dict[str, Any]], base_mod: Any, cand_mod: Any, payload: dict[str, Any],
    result: dict[str, Any],
) -> None:
    """Baseline and candidate kernels timed alternately over every recorded launch; a sample is the sum of each
    launch's median time times how often the program launched it."""
    timing = payload.get("timing") or {}
    warmup_ms, rep_ms = float(timing.get("warmup_ms", 25.0)), float(timing.get("rep_ms", 100.0))
    repeats = max(2, int((payload.get("interleave") or {}).get("repeats", 5)))
    plans = []  # (launch, baseline kernel, candidate kernel, baseline's arguments, candidate's)
    for launch in launches:
        values = make_arguments(be, launch, 0)
        plans.append((launch, find_kernel(base_mod, launch["kernel"]), find_kernel(cand_mod, launch["kernel"]),
                      _copy(values), _copy(values)))
    base_ms: list[float] = []
    cand_ms: list[float] = []
    samples: dict[str, list[dict[str, Any]]] = {"b": [], "c": []}
    for i in range(repeats):
        for tag in ("b", "c") if i % 2 == 0 else ("c", "b"):
            total, methods = 0.0, set()
            for launch, base, cand, vb, vc in plans:
                kernel, values = (base, vb) if tag == "b" else (cand, vc)
                side = _side(launch, "baseline" if tag == "b" else "candidate")
                t = be.time_ms(lambda k=kernel, v=values, la=side: _launch(be, k, la, v), warmup_ms, rep_ms)
                total += t["median"] * int(launch.get("count") or 1)
                methods.add(t.get("method"))
            (base_ms if tag == "b" else cand_ms).append(total)
            # a sum is a graph replay's only when each of its launches was
            samples[tag].append({"median": total, "method": methods.pop() if len(methods) == 1 else "mixed"})
    result["timing"] = {
        "shape": f"{len(launches)} recorded launch(es)", "repeats": repeats, "baseline_ms": base_ms,
        "candidate_ms": cand_ms, "baseline_quantiles": samples["b"], "candidate_quantiles": samples["c"],
        "device": be.describe(),
        "method": "original and candidate kernels alternated over the recorded launches; each sample sums the "
                  "launches' medians weighted by how often the program made them",
    }
    med_c, med_b = sorted(cand_ms)[len(cand_ms) // 2], sorted(base_ms)[len(base_ms) // 2]
    result.update(candidate_ms=med_c, reference_ms=None, speedup=med_b / med_c if med_c > 0 else None)
