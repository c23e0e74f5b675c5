#!/usr/bin/env bash
# Issue 11 on the lent H200: profile the scalar-K matmul first draft (bench/matmul/matmul.py: rank-1 updates over
# K, no tl.dot) through `tritonlens profile` with an empty ceilings cache, so the profile measures the copy and
# bf16 matmul ceilings by default (no --measure-ceilings flag) and the roofline counts FLOPs from the TTIR.
# A second profile then runs from the cache (no measurement) with Nsight Compute on the launch.
# Results: $OUT/roofline.tar.gz (unpack into benchmarks/gpu/results/roofline/) and $OUT/summary.txt.
#   device command (repository root):  OUT=$OUT bash benchmarks/gpu/roofline_h200.sh
set -u
OUT=${OUT:-/tmp/tl-out}
WORK=/tmp/tl-roofline
rm -rf "$WORK"; mkdir -p "$OUT" "$WORK"
export PYTHONUNBUFFERED=1 TRITONLENS_CUDA_PYTHON=$(command -v python3) TRITONLENS_CACHE_DIR=$WORK/cache
mkdir -p /tmp/tlpkg/tritonlens
for d in analysis server ascend_runner; do ln -sfn "$PWD/$d" /tmp/tlpkg/tritonlens/$d; done
export PYTHONPATH=/tmp/tlpkg
RUNNER="local:$(command -v python3)"
{
  date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  python3 -c 'import torch, triton, sys; print(sys.version.split()[0], torch.__version__, triton.__version__)'
} > "$WORK/env.txt" 2>&1
cat "$WORK/env.txt"
# 1) empty cache: the profile measures the ceilings by default
timeout 420 python3 -m tritonlens.server.cli profile bench/matmul/matmul.py --backend cuda --runner "$RUNNER" \
  --format json > "$WORK/profile_matmul_rank1.json" 2> "$WORK/profile_matmul_rank1.err"
echo "profile exit $?"
cp "$WORK/cache/ceilings.json" "$WORK/ceilings_cache.json" 2>/dev/null
# 2) the same profile as text from the cache, with ncu on the launch
timeout 420 python3 -m tritonlens.server.cli profile bench/matmul/matmul.py --backend cuda --runner "$RUNNER" \
  --ncu > "$WORK/profile_matmul_rank1_ncu.txt" 2> "$WORK/profile_matmul_rank1_ncu.err"
echo "ncu profile exit $?"
python3 benchmarks/gpu/roofline_check.py "$WORK" | tee "$WORK/summary.txt"
rm -rf "$WORK/cache"
tar -czf "$OUT/roofline.tar.gz" -C "$WORK" .
cp "$WORK/summary.txt" "$OUT/"
