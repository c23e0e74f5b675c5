"""The two processes of an isolated `verify` job (verify_isolated.py starts them; each is a fresh interpreter).

    python -u verify_phases.py reference DIR BACKEND   never imports the candidate: the reference Model of the
        original text at every shape and seed; writes the inputs to DIR/candidate/inputs.pt and the expected
        outputs to DIR/expected.sealed, sealed with the secret read from stdin (sealed.py: no candidate can use them).
    python -u verify_phases.py candidate DIR BACKEND   the candidate alone (confined by sandbox_exec): the same
        inputs through ModelNew, recorded and with poisoned allocations; writes DIR/outputs.pt and DIR/record.json
        (launches, errors, timing).
Each reads DIR/spec.json (the verify payload, the candidate's text only in the candidate's). Tensors cross the
boundary through torch.save / torch.load(weights_only=True): plain tensors and containers, never code.
Stdlib + torch + triton only (no tritonlens).
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import device_lock  # noqa: E402
import sealed  # noqa: E402
from harness_backend import Backend, interpret_mode, make_backend  # noqa: E402
from harness_load import HarnessError, captured_output, job_imports, load_module, tail  # noqa: E402
from harness_models import apply_overrides, clone, describe_exception, inputs, kernelbench, make_model  # noqa: E402
from harness_record import LaunchRecorder, recording  # noqa: E402
from harness_reference import Float64Reference  # noqa: E402
from harness_verify import poisoned_allocations  # noqa: E402

DEFAULT_SHAPE = {"label": "as written", "overrides": {}, "held_out": False}


def cases_of(payload: dict[str, Any], timed: bool) -> list[dict[str, Any]]:
    """Every shape checked, each with its seeds; the interleaved timing shape last (seed 0), where it is timed."""
    shapes = [dict(s) for s in (payload.get("shapes") or [DEFAULT_SHAPE])]
    seeds = [int(s) for s in (payload.get("seeds") or [0])]
    out = [{**s, "seeds": seeds} for s in shapes]
    interleave = payload.get("interleave")
    if timed and interleave and payload.get("baseline_source") is not None:
        out.append({"label": str(interleave.get("label", "timing shape")), "overrides": interleave.get("overrides") or {},
                    "held_out": False, "seeds": [0], "timing": True})
    return out


class Sizes:
    """One shape's overrides on top of the modules' original globals (never on top of the last shape)."""

    def __init__(self, modules: list[Any], shapes: list[dict[str, Any]]) -> None:
        self.modules = modules
        names = {n for s in shapes for n in (s.get("overrides") or {})}
        self.original = {n: getattr(modules[0], n) for n in names if hasattr(modules[0], n)}

    def use(self, overrides: dict[str, Any]) -> None:
        apply_overrides(self.modules, {n: v for n, v in self.original.items() if n not in overrides})
        apply_overrides(self.modules, overrides)


def _cpu(torch: Any, value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu")
    if isinstance(value, (list, tuple)):
        return [_cpu(torch, v) for v in value]
    if isinstance(value, dict):
        return {str(k): _cpu(torch, v) for k, v in value.items()}
    return value


def _original_modules(payload: dict[str, Any]) -> tuple[Any, Any]:
    """(reference module, baseline module or None) from the original texts; the harness file only when neither
    was sent (the user verifying a file against its own Model)."""
    harness = payload["harness"]
    base_mod = ref_only = None
    if payload.get("baseline_source") is not None:
        base_mod = load_module(f"{harness['path']}.baseline.py", payload["baseline_source"])
    if payload.get("reference_source") is not None:
        ref_only = load_module(f"{harness['path']}.reference.py", payload["reference_source"])
    ref_mod = ref_only or base_mod
    if ref_mod is None:
        if payload.get("untrusted"):
            raise HarnessError("an untrusted candidate is verified only against the original text (baseline_source)")
        ref_mod = load_module(harness["path"], harness.get("source"))
    kernelbench(ref_mod, (payload.get("reference", "Model"),))
    return ref_mod, base_mod


def reference_phase(be: Backend, payload: dict[str, Any], folder: str, secret: str) -> None:
    torch = be.torch
    ref_name = payload.get("reference", "Model")
    cases = cases_of(payload, bool(payload.get("time", True)) and be.timing_meaningful)
    ref_mod, base_mod = _original_modules(payload)
    sizes = Sizes([m for m in (ref_mod, base_mod) if m is not None], cases)
    expected: list[dict[str, Any]] = []
    given: list[dict[str, Any]] = []
    for index, case in enumerate(cases):
        sizes.use(dict(case.get("overrides") or {}))
        try:
            init = list(ref_mod.get_init_inputs())
            reference = make_model(be, ref_mod, ref_name, init, 0)
            exact = Float64Reference(torch, reference)
        except HarnessError:
            raise
        except Exception as exc:
            expected.append({"case": index, "error": f"building the models failed: {describe_exception(exc)}"})
            break
        given.append({"case": index, "init": _cpu(torch, init), "runs": []})
        stop = False
        for seed in case["seeds"]:
            args = inputs(be, ref_mod, seed)
            try:
                with torch.no_grad():
                    out = exact.run(reference, args)
                be.synchronize()
            except Exception as exc:
                expected.append({"case": index, "seed": seed, "error": describe_exception(exc)})
                stop = True
                break
            given[-1]["runs"].append({"seed": seed, "args": _cpu(torch, args)})
            expected.append({"case": index, "seed": seed, "native": _cpu(torch, out.native),
                             "exact": _cpu(torch, out.exact), "accumulation": out.accumulation.to_dict(),
                             "kind": out.kind})
        if stop:
            break
    given_bytes, expected_bytes = io.BytesIO(), io.BytesIO()
    torch.save({"cases": given}, given_bytes)
    torch.save({"expected": expected}, expected_bytes)
    with open(os.path.join(folder, "candidate", "inputs.pt"), "wb") as fh:
        fh.write(given_bytes.getvalue())
    with open(os.path.join(folder, "expected.sealed"), "wb") as fh:
        fh.write(sealed.seal(secret, expected_bytes.getvalue(), given_bytes.getvalue()))


def candidate_phase(be: Backend, payload: dict[str, Any], folder: str) -> None:
    torch = be.torch
    harness = payload["harness"]
    cand_name = payload.get("candidate", "ModelNew")
    record: dict[str, Any] = {"cases": [], "launches": [], "errors": [], "timing": {}}
    given = torch.load(os.path.join(folder, "inputs.pt"), weights_only=True)["cases"]
    timed = bool(payload.get("time", True)) and be.timing_meaningful
    cases = cases_of(payload, timed)
    recorder = LaunchRecorder(max_launches=16)
    outputs: dict[str, Any] = {}
    with captured_output() as printed:
        cand_mod = load_module(harness["path"], harness.get("source"))
        if not hasattr(cand_mod, cand_name):
            raise HarnessError(f"the candidate defines no class {cand_name!r}")
        others = [load_module(f"{harness['path']}.{n}.py", payload[f"{n}_source"])
                  for n in ("reference", "baseline") if payload.get(f"{n}_source") is not None]
        sizes = Sizes([*others, cand_mod] if others else [cand_mod], cases)
        crashed = False
        for entry in given:
            case = cases[int(entry["case"])]
            try:
                sizes.use(dict(case.get("overrides") or {}))
                candidate = make_model(be, cand_mod, cand_name, list(entry["init"]), 0)
            except HarnessError:
                raise
            except Exception as exc:
                record["cases"].append({"case": entry["case"], "error": f"building the models failed: {describe_exception(exc)}"})
                crashed = True
                break
            for run in entry["runs"]:
                args = [be.to_device(x) for x in run["args"]]
                try:
                    with torch.no_grad(), recording(recorder):
                        if payload.get("poison", True):
                            with poisoned_allocations():
                                got = candidate(*[clone(x) for x in args])
                        else:
                            got = candidate(*[clone(x) for x in args])
                    be.synchronize()
                except Exception as exc:
                    record["cases"].append({"case": entry["case"], "seed": run["seed"],
                                            "error": describe_exception(exc)})
                    crashed = True
                    break
                outputs[f"{entry['case']}:{run['seed']}"] = _cpu(torch, got)
                record["cases"].append({"case": entry["case"], "seed": run["seed"]})
            if crashed:
                break
        if timed and not crashed:
            try:
                began = time.monotonic()
                record["timing"] = _time(be, payload, cases, sizes, cand_mod, others)
                record["timing"]["seconds"] = round(time.monotonic() - began, 2)  # compiles, waits and samples
            except Exception as exc:  # e.g. out of memory at the benchmark shape: no timing, said plainly
                record["errors"].append(f"timing at the benchmark shape failed: {describe_exception(exc)}")
    record["launches"] = recorder.launches
    record["errors"] += recorder.errors
    record["device_wait_s"] = round(device_lock.waited_s(), 3)
    record["stdout"] = tail(printed.getvalue(), 2000)
    torch.save(outputs, os.path.join(folder, "outputs.pt"))
    with open(os.path.join(folder, "record.json"), "w", encoding="utf-8") as fh:
        json.dump(record, fh, default=str)


def _time(be: Backend, payload: dict[str, Any], cases: list[dict[str, Any]], sizes: Sizes, cand_mod: Any,
          others: list[Any]) -> dict[str, Any]:
    """Baseline and candidate alternately (B C, C B, ...) at the timing shape, and the reference; without a baseline
    text, the candidate against the reference at the shape as written. Measured in the candidate's process."""
    import verify_job

    ref_mod = others[0] if others else cand_mod
    base_mod = others[-1] if payload.get("baseline_source") is not None and others else None
    timing_case = next((c for c in cases if c.get("timing")), None)
    sizes.use(dict((timing_case or {}).get("overrides") or {}))
    init = list(ref_mod.get_init_inputs())
    reference = make_model(be, ref_mod, payload.get("reference", "Model"), init, 0)
    candidate = make_model(be, cand_mod, payload.get("candidate", "ModelNew"), init, 0)
    args = inputs(be, ref_mod, 0)
    if timing_case is None or base_mod is None:
        warmup_ms, rep_ms = verify_job._timing(payload)
        with be.torch.no_grad():
            c = be.time_ms(lambda: candidate(*args), warmup_ms, rep_ms)["median"]
            r = be.time_ms(lambda: reference(*args), warmup_ms, rep_ms)["median"]
        return {"candidate_ms": c, "reference_ms": r}
    baseline = make_model(be, base_mod, payload.get("baseline_class", "ModelNew"), init, 0)
    return verify_job.interleaved_timing(be, payload["interleave"], payload, reference, baseline, candidate, args)


def main(argv: list[str]) -> int:
    phase, folder, backend = argv
    secret = sys.stdin.readline().strip() if phase == "reference" else ""
    with open(os.path.join(folder, "spec.json"), encoding="utf-8") as fh:
        payload = json.load(fh)
    harness = payload.get("harness") or {}
    try:
        with interpret_mode(backend == "interpret"), job_imports(str(harness.get("path", "")), payload.get("workdir")):
            be = make_backend(backend)
            if os.environ.get("TRITONLENS_PHASE_TIMED") == "1":
                be.timing_meaningful = True  # the worker's backend is timed (set by verify_isolated, never by a payload)
            if phase == "reference":
                reference_phase(be, payload, folder, secret)
            else:
                candidate_phase(be, payload, folder)
    except HarnessError as exc:
        print(json.dumps({"error": str(exc)}))
        return 3
    except Exception as exc:
        print(json.dumps({"error": describe_exception(exc)}))
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
