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
  untrusted / allow_unsandboxed / kernels / budget_s: see verify_isolated.py.
The KernelBench form runs in three processes (verify_isolated.py: reference, confined candidate, comparison); this
module keeps the timing both use. Stdlib + torch + triton only (no tritonlens).
"""

from __future__ import annotations

from typing import Any

from device_lock import exclusive
from harness_backend import Backend
from harness_models import describe_exception
from replay_verify import replay_verify
from verify_isolated import replay_confined, verify_isolated


def _timing(payload: dict[str, Any]) -> tuple[float, float]:
    timing = payload.get("timing") or {}
    return float(timing.get("warmup_ms", 25.0)), float(timing.get("rep_ms", 100.0))


def verify_job(be: Backend, payload: dict[str, Any]) -> dict[str, Any]:
    harness = payload["harness"]
    if harness.get("mode") == "replay":  # not KernelBench form: the kernel's recorded launches are the reference
        return replay_confined(be, payload) or replay_verify(be, payload)
    return verify_isolated(be, payload)


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
        t = be.time_ms(lambda: compiled(*args), warmup_ms, rep_ms)
        return {"compiled_reference_ms": t["median"], "compiled_reference_method": t.get("method"),
                "compiled_reference_compile_s": round(compile_s, 2)}
    except Exception as exc:  # inductor missing a compiler, an op it cannot lower...
        return {"compiled_reference_error": describe_exception(exc)[:500]}



def interleaved_timing(
    be: Backend, spec: dict[str, Any], payload: dict[str, Any], reference: Any, baseline: Any, candidate: Any,
    args: list[Any],
) -> dict[str, Any]:
    """Baseline and candidate timed alternately `repeats` times, then the reference (and its torch.compile form):
    {"timing", "candidate_ms", "reference_ms", "speedup"}."""
    warmup_ms, rep_ms = _timing(payload)
    repeats = max(2, int(spec.get("repeats", 5)))
    label = str(spec.get("label", "timing shape"))
    base_ms: list[dict[str, float]] = []
    cand_ms: list[dict[str, float]] = []
    with be.torch.no_grad(), exclusive():  # the whole alternating series on a device no other timing shares
        for i in range(repeats):
            pair = [("b", baseline), ("c", candidate)]
            for tag, model in pair if i % 2 == 0 else pair[::-1]:
                t = be.time_ms(lambda m=model: m(*args), warmup_ms, rep_ms)
                (base_ms if tag == "b" else cand_ms).append(t)
        ref_t = be.time_ms(lambda: reference(*args), warmup_ms, rep_ms)
        compiled = _time_compiled(be, reference, args, warmup_ms, rep_ms) if spec.get("compiled_reference") else {}
    timing = {
        **compiled,
        "shape": label,
        "overrides": dict(spec.get("overrides") or {}),
        "repeats": repeats,
        "baseline_ms": [t["median"] for t in base_ms],
        "candidate_ms": [t["median"] for t in cand_ms],
        "baseline_quantiles": base_ms,
        "candidate_quantiles": cand_ms,
        "reference_ms": ref_t["median"],
        "reference_method": ref_t.get("method"),
        "device": be.describe(),
        "method": "baseline and candidate alternated; each sample is the backend's median over rep_ms (of a CUDA "
                  "graph replay of the call where one could be captured: the sample's \"method\")",
    }
    med_c = sorted(t["median"] for t in cand_ms)[len(cand_ms) // 2]
    med_b = sorted(t["median"] for t in base_ms)[len(base_ms) // 2]
    return {"timing": timing, "candidate_ms": med_c, "reference_ms": ref_t["median"],
            "speedup": med_b / med_c if med_c > 0 else None}
