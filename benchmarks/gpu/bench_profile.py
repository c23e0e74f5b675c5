"""H200 benchmark: profile memory-bound kernels through the runner worker and keep everything for the docs.

Run by benchmarks/gpu/run_h200.sh on the device machine (python3 there holds torch + triton). Writes into
OUT (argv[1]): profile_add.json, profile_transpose.json, verify_transpose.json (ncu CSV text split out into
ncu_*_source.csv / ncu_*_details.txt, which tests/profiling/ parses).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKER = ROOT / "ascend_runner" / "worker" / "run_job.py"
MODULE = str(ROOT / "benchmarks" / "gpu" / "kb_copy.py")
MATMUL = str(ROOT / "benchmarks" / "gpu" / "kb_matmul.py")


def job(kind: str, payload: dict, env: dict[str, str]) -> dict:
    started = time.time()
    proc = subprocess.run(
        [sys.executable, str(WORKER), kind, "cuda"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=420,
        env={**os.environ, **env},
    )
    if not proc.stdout.strip():
        return {"ok": False, "errors": [proc.stderr[-3000:]]}
    out = json.loads(proc.stdout)
    print(f"{kind} {env}: {time.time() - started:.1f} s wall", flush=True)
    return out


def split_ncu(result: dict, out: Path, name: str) -> None:
    ncu = result.get("ncu") or {}
    for key, suffix in (("source_csv", "source.csv"), ("details", "details.txt")):
        text = ncu.pop(key, None)
        if text:
            (out / f"ncu_{name}_{suffix}").write_text(text)
            ncu[key + "_file"] = f"ncu_{name}_{suffix}"


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    harness = {"mode": "kernelbench", "path": MODULE}
    common = {"harness": harness, "timing": {"warmup_ms": 25, "rep_ms": 200}}
    add = job("profile", {**common, "measure_ceilings": True, "ncu": True}, {"TL_BENCH_CASE": "add"})
    split_ncu(add, out, "add")
    (out / "profile_add.json").write_text(json.dumps(add, indent=1))
    tr = job("profile", {**common, "ncu": True}, {"TL_BENCH_CASE": "transpose"})
    split_ncu(tr, out, "transpose")
    (out / "profile_transpose.json").write_text(json.dumps(tr, indent=1))
    verify = {
        name: job(
            "verify",
            {"harness": harness, "candidate": name, "seeds": [0, 1, 2]},
            {"TL_BENCH_CASE": "transpose"},
        )
        for name in ("ModelNew", "ModelTiled")
    }
    (out / "verify_transpose.json").write_text(json.dumps(verify, indent=1))
    mm_harness = {"mode": "kernelbench", "path": MATMUL}
    mm = job(
        "profile", {"harness": mm_harness, "timing": {"warmup_ms": 25, "rep_ms": 200}, "snapshot": True}, {}
    )
    (out / "profile_matmul.json").write_text(json.dumps(mm, indent=1))
    mm_verify = job("verify", {"harness": mm_harness, "seeds": [0, 1, 2]}, {})
    (out / "verify_matmul.json").write_text(json.dumps(mm_verify, indent=1))
    ceil = add.get("ceilings", {})
    print(f"device: {add.get('device', {}).get('name')}  ceilings: {json.dumps(ceil)}")
    for label, res in (("add", add), ("transpose_naive", tr), ("matmul", mm)):
        for launch in res.get("launches", []):
            t = (launch.get("time_ms") or {}).get("median")
            nbytes = sum(a.get("nbytes") or 0 for a in launch["args"] if a["kind"] == "tensor")
            gbps = nbytes / (t * 1e-3) / 1e9 if t else None
            print(
                f"{label}: {launch['kernel']} grid={launch['grid']} median={t} ms footprint={nbytes} B -> {gbps} GB/s"
            )
        print(f"{label}: errors={res.get('errors')} ncu_error={(res.get('ncu') or {}).get('error')}")
    for name, res in {**verify, "matmul": mm_verify}.items():
        print(
            f"verify {name}: passed={res.get('passed')} speedup={res.get('speedup')} errors={res.get('errors')}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
