"""The `verify` job: a candidate's ModelNew against a reference Model, on fresh random inputs at several shapes,
with poisoned allocations, and (where timing means something) interleaved timing against a baseline.

Payload (protocol.VerifyRequest as a dict). Beyond harness/seeds/candidate/reference/atol/rtol/poison/time:
  shapes: [{"label", "overrides": {GLOBAL: int}, "held_out": bool}]  module-global size overrides; each shape is
      checked with every seed. `held_out` marks shapes the search never used (reported per check).
  baseline_source: the original file. When given, the reference Model, get_inputs and get_init_inputs come
      from it (a candidate cannot change what it is compared against) and its ModelNew is the baseline timed.
  reference_source: the ORIGINAL file when the baseline is an intermediate text (a later round of the loop): the
      reference Model and the inputs come from it, the timed baseline from baseline_source.
  interleave: {"repeats", "overrides", "label", "compiled_reference"}: time baseline and candidate alternately
      `repeats` times at that shape (after checking the candidate there too); each repeat's ratio is one sample of
      the speedup. The reference is timed too, and with `compiled_reference` also through torch.compile.
Stdlib + torch + triton only (no tritonlens).
"""

from __future__ import annotations

from typing import Any

from harness_backend import Backend
from harness_load import HarnessError, captured_output, load_module
from harness_models import apply_overrides, clone, describe_exception, inputs, kernelbench, make_model
from harness_record import LaunchRecorder, recording
from harness_reference import Float64Reference
from harness_tolerance import dot_precision
from harness_verify import check_seeds, compare, poisoned_allocations
from replay_verify import replay_verify

_DEFAULT_SHAPE = {"label": "as written", "overrides": {}, "held_out": False}


def _timing(payload: dict[str, Any]) -> tuple[float, float]:
    timing = payload.get("timing") or {}
    return float(timing.get("warmup_ms", 25.0)), float(timing.get("rep_ms", 100.0))


class _Sizes:
    """Applies one shape's overrides on top of the modules' original globals (never on top of the last shape)."""

    def __init__(self, modules: list[Any], shapes: list[dict[str, Any]], timing: dict[str, Any] | None):
        self.modules = modules
        names = {n for s in [*shapes, timing or {}] for n in (s.get("overrides") or {})}
        self.original = {n: getattr(modules[0], n) for n in names if hasattr(modules[0], n)}

    def use(self, overrides: dict[str, Any]) -> None:
        apply_overrides(self.modules, {n: v for n, v in self.original.items() if n not in overrides})
        apply_overrides(self.modules, overrides)


def _check(
    be: Backend,
    reference: Any,
    candidate: Any,
    args: list[Any],
    payload: dict[str, Any],
    recorder: LaunchRecorder,
    exact: Float64Reference,
) -> dict[str, Any]:
    with be.torch.no_grad():
        expected = exact.run(reference, args)
        with recording(recorder):
            if payload.get("poison", True):
                with poisoned_allocations():
                    got = candidate(*[clone(x) for x in args])
            else:
                got = candidate(*[clone(x) for x in args])
        be.synchronize()
    dot = dot_precision(recorder.launches, be.name)
    outcome = compare(got, expected.native, expected.exact, expected.accumulation, dot,
                      payload.get("atol"), payload.get("rtol"))
    outcome["reference"] = expected.kind
    outcome["accumulation"] = expected.accumulation.to_dict()
    return outcome


def _models(be: Backend, ref_mod: Any, cand_mod: Any, payload: dict[str, Any]) -> tuple[Any, Any]:
    init = list(ref_mod.get_init_inputs())
    reference = make_model(be, ref_mod, payload.get("reference", "Model"), init, 0)
    candidate = make_model(be, cand_mod, payload.get("candidate", "ModelNew"), init, 0)
    return reference, candidate


def verify_job(be: Backend, payload: dict[str, Any]) -> dict[str, Any]:
    harness = payload["harness"]
    if harness.get("mode") == "replay":  # not KernelBench form: the kernel's recorded launches are the reference
        return replay_verify(be, payload)
    cand_name, ref_name = payload.get("candidate", "ModelNew"), payload.get("reference", "Model")
    result: dict[str, Any] = {
        "ok": True,
        "passed": True,
        "backend": be.name,
        "checks": [],
        "tolerance": {},
        "timing_meaningful": be.timing_meaningful,
        "errors": [],
        "device": be.describe(),  # every verdict names where it was reached, timed or not
    }
    baseline_source = payload.get("baseline_source")
    shapes = list(payload.get("shapes") or [_DEFAULT_SHAPE])
    interleave = payload.get("interleave")
    with captured_output():
        base_mod = None
        if baseline_source is not None:
            base_path = f"{harness['path']}.baseline.py"  # its own linecache entry: tracebacks stay right
            base_mod = load_module(base_path, baseline_source)
            kernelbench(base_mod, (ref_name,))
        ref_only = None
        if payload.get("reference_source") is not None:
            ref_only = load_module(f"{harness['path']}.reference.py", payload["reference_source"])
        cand_mod = load_module(harness["path"], harness.get("source"))
        ref_mod = ref_only or base_mod or cand_mod
        kernelbench(ref_mod, (ref_name,))
        if not hasattr(cand_mod, cand_name):
            raise HarnessError(f"the candidate defines no class {cand_name!r}")
        sizes = _Sizes([m for m in (ref_only, base_mod, cand_mod) if m is not None], shapes, interleave)
        recorder = LaunchRecorder(max_launches=16)
        for shape in shapes:
            if not _check_shape(be, shape, sizes, ref_mod, cand_mod, payload, recorder, result):
                break  # the candidate crashed: every further shape would say the same
        if not recorder.launches and result["passed"]:
            result["errors"].append(f"{cand_name} launched no Triton kernel")
        if payload.get("time", True) and be.timing_meaningful and result["passed"]:
            if interleave and base_mod is not None:
                try:
                    _interleaved(be, interleave, sizes, ref_mod, base_mod, cand_mod, payload, recorder, result)
                except Exception as exc:  # e.g. out of memory at the benchmark shape: no timing, said plainly
                    result["errors"].append(f"timing at the benchmark shape failed: {describe_exception(exc)}")
            else:
                _versus_reference(be, ref_mod, cand_mod, payload, result)
    return result


def _check_shape(
    be: Backend,
    shape: dict[str, Any],
    sizes: _Sizes,
    ref_mod: Any,
    cand_mod: Any,
    payload: dict[str, Any],
    recorder: LaunchRecorder,
    result: dict[str, Any],
) -> bool:
    """Check every seed at one shape; False when the candidate raised (stop: the rest would repeat it)."""
    label, held_out = str(shape.get("label", "")), bool(shape.get("held_out", False))
    try:
        sizes.use(dict(shape.get("overrides") or {}))
        reference, candidate = _models(be, ref_mod, cand_mod, payload)
        exact = Float64Reference(be.torch, reference)
    except HarnessError:
        raise
    except Exception as exc:
        result["checks"].append(
            {"seed": -1, "passed": False, "shape": label, "held_out": held_out,
             "reason": f"building the models failed: {describe_exception(exc)}"}
        )
        result["passed"] = False
        return False
    def check_one(seed: int) -> dict[str, Any]:  # fresh random inputs for every seed
        return _check(be, reference, candidate, inputs(be, ref_mod, seed), payload, recorder, exact)

    return check_seeds(payload, result, label, held_out, check_one, "candidate or reference failed")


def _versus_reference(
    be: Backend, ref_mod: Any, cand_mod: Any, payload: dict[str, Any], result: dict[str, Any]
) -> None:
    warmup_ms, rep_ms = _timing(payload)
    reference, candidate = _models(be, ref_mod, cand_mod, payload)
    args = inputs(be, ref_mod, 0)
    with be.torch.no_grad():
        c = be.time_ms(lambda: candidate(*args), warmup_ms, rep_ms)["median"]
        r = be.time_ms(lambda: reference(*args), warmup_ms, rep_ms)["median"]
    result.update(candidate_ms=c, reference_ms=r, speedup=r / c if c > 0 else None)


def _time_compiled(be: Backend, reference: Any, args: list[Any], warmup_ms: float, rep_ms: float) -> dict[str, Any]:
    """The reference through torch.compile (what a PyTorch user gets without writing a kernel): its median time,
    or why it could not be compiled. Compile time itself is left out (warm-up runs absorb it)."""
    import time

    try:
        started = time.perf_counter()
        compiled = be.torch.compile(reference)
        compiled(*args)  # compiles here
        be.synchronize()
        compile_s = time.perf_counter() - started
        return {"compiled_reference_ms": be.time_ms(lambda: compiled(*args), warmup_ms, rep_ms)["median"],
                "compiled_reference_compile_s": round(compile_s, 2)}
    except Exception as exc:  # inductor missing a compiler, an op it cannot lower...
        return {"compiled_reference_error": describe_exception(exc)[:500]}


def _interleaved(
    be: Backend,
    spec: dict[str, Any],
    sizes: _Sizes,
    ref_mod: Any,
    base_mod: Any,
    cand_mod: Any,
    payload: dict[str, Any],
    recorder: LaunchRecorder,
    result: dict[str, Any],
) -> None:
    """Baseline and candidate timed alternately (B C, C B, B C, ...): drift in clocks or temperature hits both."""
    warmup_ms, rep_ms = _timing(payload)
    repeats = max(2, int(spec.get("repeats", 5)))
    label = str(spec.get("label", "timing shape"))
    sizes.use(dict(spec.get("overrides") or {}))
    reference, candidate = _models(be, ref_mod, cand_mod, payload)
    init = list(ref_mod.get_init_inputs())
    baseline = make_model(be, base_mod, payload.get("baseline_class", "ModelNew"), init, 0)
    args = inputs(be, ref_mod, 0)
    # correctness at the timing shape too: the shape the speedup is claimed at
    check: dict[str, Any] = {"seed": 0, "shape": label, "held_out": False}
    try:
        exact = Float64Reference(be.torch, reference)
        check.update(_check(be, reference, candidate, args, payload, recorder, exact))
    except Exception as exc:
        check.update(passed=False, reason=f"candidate or reference failed: {describe_exception(exc)}")
    result["checks"].append(check)
    if not check["passed"]:
        result["passed"] = False
        return
    base_ms: list[dict[str, float]] = []
    cand_ms: list[dict[str, float]] = []
    with be.torch.no_grad():
        for i in range(repeats):
            pair = [("b", baseline), ("c", candidate)]
            for tag, model in pair if i % 2 == 0 else pair[::-1]:
                t = be.time_ms(lambda m=model: m(*args), warmup_ms, rep_ms)
                (base_ms if tag == "b" else cand_ms).append(t)
        ref_t = be.time_ms(lambda: reference(*args), warmup_ms, rep_ms)
        compiled = _time_compiled(be, reference, args, warmup_ms, rep_ms) if spec.get("compiled_reference") else {}
    result["timing"] = {
        **compiled,
        "shape": label,
        "overrides": dict(spec.get("overrides") or {}),
        "repeats": repeats,
        "baseline_ms": [t["median"] for t in base_ms],
        "candidate_ms": [t["median"] for t in cand_ms],
        "baseline_quantiles": base_ms,
        "candidate_quantiles": cand_ms,
        "reference_ms": ref_t["median"],
        "device": be.describe(),
        "method": "baseline and candidate alternated; each sample is the backend's median over rep_ms",
    }
    med_c = sorted(t["median"] for t in cand_ms)[len(cand_ms) // 2]
    med_b = sorted(t["median"] for t in base_ms)[len(base_ms) // 2]
    result.update(candidate_ms=med_c, reference_ms=ref_t["median"], speedup=med_b / med_c if med_c > 0 else None)
