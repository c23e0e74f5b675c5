#!/usr/bin/env bash
# Device-side driver (copied into the repo as benchmarks/gpu/run_optimize_h200.sh): env facts, a profile of the
# scalar-K matmul draft with measured ceilings + ncu, then `tritonlens optimize` over the first drafts.
set -u
# Usage (device tool, with wheels of pygls, lsprotocol, cattrs, attrs carried in .whl/):
#   TARGETS="FILES" BUDGET=candidates=N,rounds=N,seconds=S bash benchmarks/gpu/run_optimize_h200.sh
OUT=${OUT:-/tmp/tl-out}
WORK=/tmp/tl-work
BUDGET=${BUDGET:-candidates=10,rounds=2,seconds=45}
mkdir -p "$OUT" "$WORK"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >/dev/null 2>&1
mkdir -p /tmp/tlpkg/tritonlens
for d in analysis server ascend_runner; do ln -sfn "$PWD/$d" /tmp/tlpkg/tritonlens/$d; done
export PYTHONPATH=/tmp/tlpkg:/tmp/site PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export TRITONLENS_CUDA_PYTHON=$(command -v python3) TRITONLENS_CACHE_DIR=$WORK/cache
PY=$(command -v python3)
{
  date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  python3 -c 'import torch, triton, numpy, sys; print(sys.version.split()[0], torch.__version__, triton.__version__, numpy.__version__)'
  command -v ncu && ncu --version | tail -1
  echo "budget: $BUDGET"
} > "$WORK/env.txt" 2>&1
cat "$WORK/env.txt"
if [ "${PROFILE:-1}" = 1 ]; then
  timeout 240 python3 -m tritonlens.server.cli profile bench/matmul/matmul.py --backend cuda --runner "local:$PY" \
    --measure-ceilings --ncu > "$WORK/profile_matmul.txt" 2> "$WORK/profile_matmul.err"
  echo "profile exit $?"; tail -40 "$WORK/profile_matmul.txt"; tail -5 "$WORK/profile_matmul.err"
fi
timeout ${OPT_TIMEOUT:-420} python3 -m tritonlens.server.cli optimize ${TARGETS:-bench/} --backend cuda --target sm_90 \
  --runner "local:$PY" --budget "$BUDGET" --report "$WORK/optimize" --format text > "$WORK/optimize.txt" 2> "$WORK/optimize.err"
echo "optimize exit $?"; tail -60 "$WORK/optimize.txt"; tail -20 "$WORK/optimize.err"
rm -rf "$WORK/cache"
tar -czf "$OUT/results.tar.gz" -C "$WORK" .
