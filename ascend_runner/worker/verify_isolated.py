"""The KernelBench `verify` job across three processes, so a candidate cannot change what it is compared with.

1. The reference (verify_phases.py `reference`): a fresh process that never imports the candidate computes the
   reference outputs (as written and in float64) on fresh inputs at every shape and seed.
2. The candidate (verify_phases.py `candidate`): a fresh process, confined by sandbox_exec (no network, read-only
   filesystem but its own folder, an allow-listed environment, CPU/memory/process limits, killed at its budget),
   runs the same inputs through ModelNew. It cannot see the expected outputs (their folder is hidden from it).
3. This process (which imports neither) compares the two across the process boundary (harness_verify.compare),
   and rejects a candidate that launched none of the Triton kernels it claims to replace.

Payload keys beyond verify_job's: `untrusted` (an LLM's text: never run unconfined unless `allow_unsandboxed`),
`kernels` (names the candidate must launch), `budget_s` (the candidate's seconds). What is measured inside the
candidate's process (launches, timings) is only as honest as its code; the outputs are checked outside it.
Stdlib + torch only (no tritonlens).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

import kernel_cache
import sandbox_exec
import sealed
from harness_backend import Backend
from harness_load import HarnessError, tail
from harness_tolerance import Accumulation, dot_precision
from harness_verify import compare
from verify_phases import cases_of

HERE = os.path.dirname(os.path.abspath(__file__))
PHASES = os.path.join(HERE, "verify_phases.py")
DEFAULT_BUDGET_S = 600.0
NO_KERNEL = ("{name} launched no Triton kernel: a rewrite must run the Triton kernel(s) it replaces, not fall back to "
             "PyTorch")


def _memory_mb() -> float | None:
    raw = os.environ.get("TRITONLENS_WORKER_MEMORY_MB")
    if raw:
        return float(raw)
    return None if _accelerator_visible() else 16384.0


def _accelerator_visible() -> bool:
    try:
        names = os.listdir("/dev")
    except OSError:
        return False
    return any((n.startswith("nvidia") and n[6:].isdigit()) or (n.startswith("davinci") and n[7:].isdigit())
               for n in names)


def _phase_env(backend: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "TRITONLENS_PHASE_TIMED")}
    if backend == "interpret":
        env["TRITON_INTERPRET"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _error_of(stdout: bytes, stderr: bytes, code: int | None) -> str:
    for line in reversed(stdout.decode("utf-8", "replace").splitlines()):
        try:
            said = json.loads(line)
        except ValueError:
            continue
        if isinstance(said, dict) and isinstance(said.get("error"), str):
            return said["error"]
    return f"exit status {code}: {tail(stderr.decode('utf-8', 'replace').strip(), 1200)}"


def _confinement(payload: dict[str, Any]) -> dict[str, Any]:
    kind = sandbox_exec.mechanism()
    if kind != "none":
        return {"mechanism": kind, "confined": True, "network": sandbox_exec.NETWORK_NAMESPACE}
    if payload.get("untrusted") and not payload.get("allow_unsandboxed"):
        return {"mechanism": "none", "confined": False, "refused": True,
                "note": f"not run: {sandbox_exec.why_none()}; LLM candidates run only confined unless the user opts "
                        "in (`--llm-allow-unsandboxed`, setting tritonlens.llm.allowUnsandboxed)"}
    why = "the user opted in" if payload.get("untrusted") else "the candidate is not an LLM's"
    return {"mechanism": "none", "confined": False,
            "note": f"run without a sandbox ({why}): {sandbox_exec.why_none()}; environment allow-listed and limits "
                    "applied only"}


def verify_isolated(be: Backend, payload: dict[str, Any]) -> dict[str, Any]:
    cand_name = payload.get("candidate", "ModelNew")
    result: dict[str, Any] = {"ok": True, "passed": True, "backend": be.name, "checks": [], "tolerance": {},
                              "timing_meaningful": be.timing_meaningful, "errors": [], "isolated": True,
                              "device": be.describe()}  # every verdict names where it was reached
    result["sandbox"] = confinement = _confinement(payload)
    if confinement.get("refused"):
        result.update(passed=False, errors=[confinement["note"]])
        result["checks"].append({"seed": -1, "shape": "all shapes", "held_out": False, "passed": False,
                                 "reason": confinement["note"]})
        return result
    root = tempfile.mkdtemp(prefix="verify-", dir=jobs_folder())
    try:
        return _run(be, payload, result, root, cand_name, confinement)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def jobs_folder() -> str:
    """The one folder every verify job's files live under (mode 0700). A confined candidate gets it covered by an
    empty tmpfs with only its own folder bound back: it cannot read its job's expected outputs, nor those of any
    other job running on this machine at the same time."""
    base = os.environ.get("TRITONLENS_WORKER_SCRATCH") or tempfile.gettempdir()
    folder = os.path.join(base, f"tritonlens-jobs-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


def _write_spec(folder: str, spec: dict[str, Any]) -> None:
    with open(os.path.join(folder, "spec.json"), "w", encoding="utf-8") as fh:
        json.dump(spec, fh)


def _run(be: Backend, payload: dict[str, Any], result: dict[str, Any], root: str, cand_name: str,
         confinement: dict[str, Any]) -> dict[str, Any]:
    import torch

    cand_dir = os.path.join(root, "candidate")
    os.makedirs(cand_dir)
    timed = bool(payload.get("time", True)) and be.timing_meaningful
    spec = {**payload, "time": timed}
    harness = dict(payload["harness"])
    # The reference's process never sees the candidate's text; it reads the original texts only.
    ref_spec = {**spec, "harness": {**harness, "source": None} if _has_original(payload) else harness}
    began = time.monotonic()
    expected_bytes, kept = _reference_outputs(be, ref_spec, root, cand_dir,
                                              float(payload.get("budget_s") or DEFAULT_BUDGET_S),
                                              dict(payload.get("kept_references") or {}))
    result["reference_outputs"] = ("kept (sealed) from an earlier job of the same original texts, shapes and seeds"
                                   ) if kept.pop("reused") else "computed"
    if kept.get("key"):
        result["reference_kept"] = kept
    # where a verification's seconds go (the device's time is short: the next run can be planned from them)
    result["seconds"] = seconds = {"reference": round(time.monotonic() - began, 2)}
    _write_spec(cand_dir, spec)
    budget = float(payload.get("budget_s") or DEFAULT_BUDGET_S)
    env = sandbox_exec.allowed_environment(os.environ, {**_phase_env(be.name), **_timing_flag(be)})
    env["TRITON_CACHE_DIR"] = os.path.join(cand_dir, "triton-cache")
    kernels = kernel_cache.kept_folder(bool(payload.get("untrusted")))
    if kernels:  # our own candidate: what earlier jobs compiled (driver, launchers, the baseline) is reused
        seconds["kernels_linked"] = kernel_cache.seed(kernels, env["TRITON_CACHE_DIR"])
    out = sandbox_exec.run_confined(
        [sys.executable, "-u", PHASES, "candidate", cand_dir, _phase_name(be)], writable=cand_dir, env=env,
        timeout_s=budget, hidden=[os.path.dirname(root), *references_parent(), *_store()], memory_mb=_memory_mb(),
        kind=confinement["mechanism"] if confinement["confined"] else "plain",
    )
    seconds["candidate"] = round(out.seconds, 2)
    if kernels and not out.timed_out:
        kernel_cache.keep(env["TRITON_CACHE_DIR"], kernels)
    expected = torch.load(io.BytesIO(expected_bytes), weights_only=True)["expected"]
    cases = cases_of(spec, timed)
    if out.timed_out:
        result["timed_out_s"] = budget  # structured: the gate tells the optimize budget's cut from a hang
        return _fail(result, f"the candidate ran past its budget of {budget:g} s and was killed (with every process "
                             "it started)")
    if out.returncode != 0:
        return _fail(result, f"the candidate's process failed: {_error_of(out.stdout, out.stderr, out.returncode)}")
    record, outputs = _read_candidate(torch, cand_dir)
    if isinstance(record, str):
        return _fail(result, record)
    timing_s = _number((record.get("timing") or {}).get("seconds") if isinstance(record.get("timing"), dict) else None)
    if timing_s is not None:
        seconds["candidate_timing"] = round(timing_s, 2)  # part of "candidate"
    waited = _number(record.get("device_wait_s"))
    if waited:  # the candidate's own count: the gate believes it only for candidates the product wrote
        result["device_wait_s"] = waited
    began = time.monotonic()
    _compare_all(be, payload, cases, expected, record, outputs, result)
    seconds["compare"] = round(time.monotonic() - began, 2)
    launched = {str(rec.get("kernel")) for rec in record["launches"] if isinstance(rec, dict)}
    if result["passed"] and not launched:
        _fail(result, NO_KERNEL.format(name=cand_name))
    missing = sorted(set(payload.get("kernels") or []) - launched)
    if result["passed"] and missing:
        _fail(result, f"{cand_name} never launched {', '.join(missing)}, the kernel(s) it claims to replace")
    result["errors"] += [str(e)[:500] for e in record.get("errors") or []][:8]
    timing = record.get("timing") or {}
    if timed and result["passed"] and isinstance(timing, dict):
        result.update(_timing_result(timing))
    return result


# Reference outputs kept across the verify jobs of one pool (its folder: REFERENCE_STORE_ENV). Every verify job
# gets a fresh worker, and the candidates of one task share the original texts, shapes and seeds, so each job
# would recompute the same outputs in a fresh process (Python, torch, the device, the models, a float64 run per
# case). Kept outputs stay sealed (sealed.py) with the secret the job reported to its client: a later job reuses
# them only when the client sends that secret back and the tag checks out, so a store rewritten by a candidate
# that ran without a sandbox only costs a recomputation. The key leaves out what only the candidate's phase
# reads; with no original text the harness text (the candidate's) is part of it.
REFERENCE_STORE_ENV = "TRITONLENS_REFERENCE_STORE"
_CANDIDATE_ONLY = ("kernels", "budget_s", "allow_unsandboxed", "poison", "candidate", "kept_references")
MAX_KEPT_REFERENCES = 32
MAX_KEPT_BYTES = 4 << 30
SEALED = "expected.sealed"


def _store() -> list[str]:
    folder = os.environ.get(REFERENCE_STORE_ENV) or ""
    return [folder] if folder and os.path.isdir(folder) else []


def references_parent() -> list[str]:
    """Every pool's kept references live under this folder (ascend_runner/pool.py): a confined candidate gets all of
    it covered, not only its own pool's (they are sealed too: covering them is the first of two walls)."""
    folder = os.path.join(tempfile.gettempdir(), f"tritonlens-references-{os.getuid()}")
    return [folder] if os.path.isdir(folder) else []


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _reference_outputs(be: Backend, ref_spec: dict[str, Any], root: str, cand_dir: str, timeout_s: float,
                       known: dict[str, str]) -> tuple[bytes, dict[str, Any]]:
    """(plain bytes of the reference's expected outputs, {"key", "secret", "reused"}); the inputs are written into
    the candidate's folder from the bytes that were checked (the candidate may change its copy, never the kept
    one). The plain bytes never touch the disk."""
    key = _reference_key(be, ref_spec)
    store = _store()
    kept_dir = os.path.join(store[0], key) if store else ""
    if kept_dir and known.get(key):
        kept, inputs = _read(os.path.join(kept_dir, SEALED)), _read(os.path.join(kept_dir, "inputs.pt"))
        expected = sealed.unseal(known[key], kept, inputs) if kept is not None and inputs is not None else None
        if expected is not None and inputs is not None:
            _write_bytes(os.path.join(cand_dir, "inputs.pt"), inputs)
            _touch(kept_dir)  # the store forgets the least recently used first
            return expected, {"key": key, "secret": known[key], "reused": True}
    secret = sealed.new_secret()
    _write_spec(root, ref_spec)
    ref = subprocess.run([sys.executable, "-u", PHASES, "reference", root, _phase_name(be)], capture_output=True,
                         env={**_phase_env(be.name), **_timing_flag(be)}, timeout=timeout_s,
                         input=f"{secret}\n".encode())
    if ref.returncode != 0:
        raise HarnessError(_error_of(ref.stdout, ref.stderr, ref.returncode))
    kept, inputs = _read(os.path.join(root, SEALED)), _read(os.path.join(cand_dir, "inputs.pt"))
    expected = sealed.unseal(secret, kept, inputs) if kept is not None and inputs is not None else None
    if expected is None or kept is None or inputs is None:
        raise HarnessError("the reference process wrote no outputs")
    if not kept_dir:
        return expected, {"reused": False}
    os.makedirs(kept_dir, mode=0o700, exist_ok=True)
    _write_bytes(os.path.join(kept_dir, SEALED), kept)
    _write_bytes(os.path.join(kept_dir, "inputs.pt"), inputs)
    _forget_oldest(store[0])
    return expected, {"key": key, "secret": secret, "reused": False}


def _reference_key(be: Backend, ref_spec: dict[str, Any]) -> str:
    """What the reference outputs depend on. The reference Model and inputs come from the original text
    (`reference_source`, else `baseline_source`); a later round's baseline (an intermediate text) only decides that
    a timing shape is run, so every round of one task shares one key."""
    spec = {k: v for k, v in ref_spec.items() if k not in _CANDIDATE_ONLY}
    original = spec.pop("reference_source", None)
    baseline = spec.pop("baseline_source", None)
    spec["original_text"] = original if original is not None else baseline
    spec["has_baseline"] = baseline is not None
    key_text = json.dumps(spec, sort_keys=True, default=str)
    return hashlib.sha256(f"{be.name}\0{be.timing_meaningful}\0{key_text}".encode()).hexdigest()


def _touch(folder: str) -> None:
    try:
        os.utime(folder)
    except OSError:
        pass


def _write_bytes(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def _forget_oldest(store: str) -> None:
    """Keep the most recently used references while they number at most MAX_KEPT_REFERENCES and fit in
    MAX_KEPT_BYTES. A pool serves several tasks at once (bench --jobs): a count of 8 dropped a task's reference
    between its rounds, and each recomputation cost a fresh process and a float64 run (about 10 s on the H100)."""
    try:
        kept = sorted((e for e in os.scandir(store) if e.is_dir()), key=lambda e: e.stat().st_mtime, reverse=True)
    except OSError:
        return
    total = 0
    for index, entry in enumerate(kept):
        total += _folder_bytes(entry.path)
        if index >= MAX_KEPT_REFERENCES or (index > 0 and total > MAX_KEPT_BYTES):
            shutil.rmtree(entry.path, ignore_errors=True)


def _folder_bytes(folder: str) -> int:
    try:
        return sum(e.stat().st_size for e in os.scandir(folder) if e.is_file())
    except OSError:
        return 0


def _has_original(payload: dict[str, Any]) -> bool:
    return payload.get("baseline_source") is not None or payload.get("reference_source") is not None


def _phase_name(be: Backend) -> str:
    return "interpret" if be.name == "interpret" else be.name


def _timing_flag(be: Backend) -> dict[str, str]:
    # The phases make their backend by name; a backend this worker marks as timed (a host-clock test) stays timed.
    return {"TRITONLENS_PHASE_TIMED": "1"} if be.timing_meaningful else {}


def _fail(result: dict[str, Any], reason: str) -> dict[str, Any]:
    result["passed"] = False
    result["checks"].append({"seed": -1, "shape": "all shapes", "held_out": False, "passed": False, "reason": reason})
    return result


def _read_candidate(torch: Any, folder: str) -> tuple[dict[str, Any] | str, dict[str, Any]]:
    """The candidate's record and outputs, checked for shape: anything it wrote is untrusted."""
    try:
        with open(os.path.join(folder, "record.json"), encoding="utf-8") as fh:
            record = json.load(fh)
        outputs = torch.load(os.path.join(folder, "outputs.pt"), weights_only=True)
    except (OSError, ValueError) as exc:
        return f"the candidate's process left no readable outputs: {type(exc).__name__}", {}
    except Exception as exc:  # torch.load refusing anything but plain tensors (weights_only)
        return f"the candidate's outputs are not plain tensors ({type(exc).__name__}: {str(exc)[:200]})", {}
    if not isinstance(record, dict) or not isinstance(record.get("cases"), list) or not isinstance(outputs, dict):
        return "the candidate's process left a malformed record", {}
    if not isinstance(record.get("launches"), list):
        record["launches"] = []
    return record, outputs


def _compare_all(be: Backend, payload: dict[str, Any], cases: list[dict[str, Any]], expected: list[dict[str, Any]],
                 record: dict[str, Any], outputs: dict[str, Any], result: dict[str, Any]) -> None:
    """One check per (shape, seed), in order, as the in-process gate made them; stop at the first crash."""
    ran = {(c.get("case"), c.get("seed")): c for c in record["cases"] if isinstance(c, dict)}
    built_errors = {c.get("case"): c for c in record["cases"] if isinstance(c, dict) and "seed" not in c}
    dot = dot_precision([r for r in record["launches"] if isinstance(r, dict)], be.name)
    for exp in expected:
        case = cases[int(exp["case"])]
        label, held_out = str(case.get("label", "")), bool(case.get("held_out", False))
        check: dict[str, Any] = {"seed": int(exp.get("seed", -1)), "shape": label, "held_out": held_out}
        if "seed" not in exp:  # the reference's models could not be built at this shape
            result["checks"].append({**check, "passed": False, "reason": exp["error"]})
            result["passed"] = False
            return
        built = built_errors.get(exp["case"])
        if built is not None:
            result["checks"].append({**check, "seed": -1, "passed": False, "reason": str(built.get("error"))[:2000]})
            result["passed"] = False
            return
        if "error" in exp:
            result["checks"].append({**check, "passed": False, "reason": f"candidate or reference failed: {exp['error']}"})
            result["passed"] = False
            return
        mine = ran.get((exp["case"], exp["seed"]))
        key = f"{exp['case']}:{exp['seed']}"
        if mine is None or "error" in mine or key not in outputs:
            why = str((mine or {}).get("error") or "it produced no output here")[:2000]
            result["checks"].append({**check, "passed": False, "reason": f"candidate or reference failed: {why}"})
            result["passed"] = False
            return
        accumulation = Accumulation(**{k: v for k, v in exp["accumulation"].items() if k in ("k", "op", "note")})
        outcome = compare(outputs[key], exp["native"], exp["exact"], accumulation, dot, payload.get("atol"),
                          payload.get("rtol"))
        outcome["reference"] = exp["kind"]
        outcome["accumulation"] = exp["accumulation"]
        result["tolerance"] = outcome.get("tolerance") or {}
        result["checks"].append({**check, **outcome})
        result["passed"] = result["passed"] and bool(outcome["passed"])


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value else None


def _timing_result(timing: dict[str, Any]) -> dict[str, Any]:
    """The candidate process's timing, kept only as numbers."""
    if "timing" in timing and isinstance(timing["timing"], dict):
        out: dict[str, Any] = {"timing": timing["timing"]}
        for key in ("candidate_ms", "reference_ms", "speedup"):
            out[key] = _number(timing.get(key))
        return out
    c, r = _number(timing.get("candidate_ms")), _number(timing.get("reference_ms"))
    return {"candidate_ms": c, "reference_ms": r, "speedup": r / c if c and r else None}


CONFINED_ENV = "TRITONLENS_CONFINED"  # set inside a confined replay job: it runs there, not again


def replay_confined(be: Backend, payload: dict[str, Any]) -> dict[str, Any] | None:
    """An untrusted candidate verified by replay: the whole replay job in one confined fresh process (replay loads
    the candidate's kernels beside the original's, so only containment, not separation, holds here). None: run it
    here (a trusted candidate, or already confined)."""
    if not payload.get("untrusted") or os.environ.get(CONFINED_ENV) == "1":
        return None
    confinement = _confinement(payload)
    base = {"ok": True, "passed": False, "backend": be.name, "checks": [], "errors": [], "mode": "replay",
            "timing_meaningful": be.timing_meaningful, "sandbox": confinement}
    if confinement.get("refused"):
        return _fail({**base, "errors": [confinement["note"]]}, confinement["note"])
    root = tempfile.mkdtemp(prefix="replay-", dir=jobs_folder())
    try:
        env = sandbox_exec.allowed_environment(os.environ, {**_phase_env(be.name), CONFINED_ENV: "1"})
        budget = float(payload.get("budget_s") or DEFAULT_BUDGET_S)
        out = sandbox_exec.run_confined(
            [sys.executable, "-u", os.path.join(HERE, "run_job.py"), "verify", _phase_name(be)], writable=root,
            env=env, timeout_s=budget, hidden=[os.path.dirname(root)], memory_mb=_memory_mb(), stdin=json.dumps(payload).encode(),
            kind=confinement["mechanism"] if confinement["confined"] else "plain",
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if out.timed_out:
        return _fail({**base, "timed_out_s": budget}, f"the candidate ran past its budget of {budget:g} s and was killed")
    try:
        result = json.loads(out.stdout.decode("utf-8", "replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        return _fail(base, f"the confined replay job failed: {_error_of(out.stdout, out.stderr, out.returncode)}")
    if not isinstance(result, dict):
        return _fail(base, "the confined replay job returned a malformed record")
    result["sandbox"] = confinement
    return result
