#!/usr/bin/env bash
# One device call: the issue-21 gate on the H200 (gate_on_gpu.py: confined LLM candidates, three processes), then
# `tritonlens bench` on three team tasks through that gate (TASKS), to compare with bench/results/h200/.
# Wheels of pygls/lsprotocol/cattrs/attrs in .whl/ (see run_bench_h200.sh).
set -u
OUT=${OUT:-/tmp/tl-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >/dev/null 2>&1
mkdir -p /tmp/tlpkg/tritonlens
for d in analysis server ascend_runner; do ln -sfn "$PWD/$d" /tmp/tlpkg/tritonlens/$d; done
export PYTHONPATH=/tmp/tlpkg:/tmp/site PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export TRITONLENS_CUDA_PYTHON=$(command -v python3) TRITONLENS_CACHE_DIR=/tmp/tl-cache
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; command -v bwrap unshare; id -u; } 2>&1 | tee "$OUT/env.txt"
python3 -c 'import sys; sys.path.insert(0, "ascend_runner/worker"); import sandbox_exec as s; print("sandbox mechanism:", s.mechanism())' 2>&1 | tee -a "$OUT/env.txt"
timeout 240 python3 benchmarks/gpu/gate_on_gpu.py "$OUT/gate_on_gpu.json" 2>&1 | tail -8
WORK=/tmp/tl-bench; mkdir -p $WORK
timeout ${BENCH_S:-200} python3 -m tritonlens.server.cli bench ${TASKS:-bench/reduction/column_sum.py bench/scan/cumsum.py bench/transpose/transpose.py} \
  --backend cuda --target sm_90 --runner "local:$(command -v python3)" --budget candidates=4,rounds=2,seconds=25 \
  --rep-ms 50 --repeats 4 --time-budget $(( ${BENCH_S:-200} - 40 )) --report $WORK/report --state $WORK/bench-state.json \
  > $WORK/bench.out 2> $WORK/bench.err
echo "bench exit $?"; grep "tritonlens bench:" $WORK/bench.err | tail -8; tail -25 $WORK/bench.out
cp $WORK/bench-state.json $WORK/bench.err "$OUT/" 2>/dev/null; cp $WORK/report/bench-report.md "$OUT/" 2>/dev/null
