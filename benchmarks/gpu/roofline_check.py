"""Check and summarize benchmarks/gpu/roofline_h200.sh's results: what the profile of the scalar-K matmul first
draft says (bound, FLOPs and where they came from, the ceilings used and their source, TL210) and whether the
ceilings were measured by default. Prints the summary; exit 1 when an expectation does not hold.

    python benchmarks/gpu/roofline_check.py RESULTS_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(folder: Path) -> int:
    try:
        data = json.loads((folder / "profile_matmul_rank1.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        err = (folder / "profile_matmul_rank1.err").read_text(encoding="utf-8", errors="replace")[-2000:]
        print(f"no profile result: {exc}\n{err}")
        return 1
    report = data.get("report") or {}
    device = report.get("device") or {}
    launches = report.get("launches") or []
    findings = report.get("findings") or []
    checks: list[tuple[str, bool]] = []
    print(f"device: {device.get('name')}")
    print(f"bandwidth ceiling: {device.get('memory_bandwidth')}")
    for name, label in (device.get("rates") or {}).items():
        print(f"  {name}: {label}")
    measured = (data.get("result") or data).get("ceilings") or {}
    print(f"measured this run: {json.dumps(measured)}")
    checks.append(("ceilings measured by default (no --measure-ceilings)", bool(measured.get("copy_gbps"))))
    checks.append(
        ("bandwidth ceiling in use is the measured one", "measured" in str(device.get("memory_bandwidth")))
    )
    for la in launches:
        print(
            f"launch {la.get('index')}: {la.get('kernel')} grid {la.get('grid')} median {la.get('time_ms')} ms; "
            f"FLOPs {la.get('flops')} ({la.get('flop_source')}), tensor cores {la.get('tensor_cores')}, "
            f"intensity {la.get('intensity')} vs ridge {la.get('ridge')} -> {la.get('bound')}-bound; "
            f"compute ceiling {la.get('flop_ceiling')}"
        )
    for f in findings:
        print(f"{f.get('code')} {f.get('message')} [gain: {f.get('estimated_gain')}]")
    matmul = [la for la in launches if la.get("kernel") == "matmul_kernel"]
    checks.append(("FLOPs counted from the IR", any(la.get("flop_source") == "ir" for la in matmul)))
    checks.append(("classified compute-bound", any(la.get("bound") == "compute" for la in matmul)))
    checks.append(
        ("TL210 compute-bound without tensor cores", any(f.get("code") == "TL210" for f in findings))
    )
    checks.append(("no memory-bound verdict (TL202)", not any(f.get("code") == "TL202" for f in findings)))
    ok = True
    for what, passed in checks:
        print(f"[{'ok' if passed else 'FAILED'}] {what}")
        ok = ok and passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
