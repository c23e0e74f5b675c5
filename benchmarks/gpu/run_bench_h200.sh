#!/usr/bin/env bash
# One device call of `tritonlens bench` on the lent H200 (see bench/results/h200/README.md for the calls made).
# Resumes from bench/results/h200/bench-state.json (committed after each call), runs what fits in TIME_BUDGET
# seconds, and returns the updated state and report in $OUT. Wheels of pygls/lsprotocol/cattrs/attrs in .whl/.
#   TASKS="bench/" BUDGET=candidates=8,rounds=2,seconds=40 TIME_BUDGET=480 JOBS=4 bash benchmarks/gpu/run_bench_h200.sh
# JOBS tasks run at once (compiles and correctness side by side, every timing alone under the device lock).
# GRACE seconds (default 90) after TIME_BUDGET the tasks still in flight are cancelled (not recorded).
set -u
OUT=${OUT:-/tmp/tl-out}
WORK=/tmp/tl-bench
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
RESULTS=${RESULTS:-bench/results/h200}  # the state to resume from (bench/results/h200-blind for bench/blind/)
mkdir -p "$OUT" "$WORK"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >/dev/null 2>&1
mkdir -p /tmp/tlpkg/tritonlens
for d in analysis server ascend_runner; do ln -sfn "$PWD/$d" /tmp/tlpkg/tritonlens/$d; done
export PYTHONPATH=/tmp/tlpkg:/tmp/site PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export TRITONLENS_CUDA_PYTHON=$(command -v python3) TRITONLENS_CACHE_DIR=$WORK/cache
# the state lives in $OUT from the start: a call cut by the device's own limit still returns every finished task
[ -f "$RESULTS/bench-state.json" ] && cp "$RESULTS/bench-state.json" "$OUT/"
{
  date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c 'import torch, triton, numpy, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__, "numpy", numpy.__version__)'
  echo "tasks: ${TASKS:-bench/}  budget: ${BUDGET:-candidates=8,rounds=2,seconds=40}  time budget: ${TIME_BUDGET:-480} s  jobs: ${JOBS:-1}  grace: ${GRACE:-90} s  extra: ${EXTRA:-}"
} >> "$OUT/env.txt" 2>&1
tail -3 "$OUT/env.txt"
timeout $(( ${TIME_BUDGET:-480} + ${GRACE:-90} )) python3 -m tritonlens.server.cli bench ${TASKS:-bench/} --backend cuda --target sm_90 \
  --runner "local:$(command -v python3)" --budget "${BUDGET:-candidates=8,rounds=2,seconds=40}" --rep-ms 50 \
  --time-budget "${TIME_BUDGET:-480}" --jobs "${JOBS:-1}" --report "$WORK/report" --state "$OUT/bench-state.json" ${EXTRA:-} \
  > "$WORK/bench.out" 2> "$OUT/bench.err"
echo "bench exit $?"; grep "tritonlens bench:" "$OUT/bench.err" | tail -50; tail -30 "$WORK/bench.out"
tar -czf "$OUT/report.tar.gz" -C "$WORK" report
