#!/usr/bin/env bash
# One device call on the lent H200: environment facts, the gpu-marked runner tests, the profiling benchmark
# (measured ceilings, ncu source views), and `tritonlens profile` end to end. Everything lands in $OUT as
# results.tar.gz (the device tool returns at most 8 files), unpacked into benchmarks/gpu/results/runN/.
set -u
OUT=${OUT:-/tmp/tl-out}
WORK=/tmp/tl-results
mkdir -p "$OUT" "$WORK"
export PYTHONUNBUFFERED=1 TRITONLENS_CUDA_PYTHON=$(command -v python3) TRITONLENS_CACHE_DIR=$WORK/cache
# tritonlens.* names map onto the repository folders (setup.py does this for an installed checkout).
mkdir -p /tmp/tlpkg/tritonlens
for d in analysis server ascend_runner; do ln -sfn "$PWD/$d" /tmp/tlpkg/tritonlens/$d; done
export PYTHONPATH=/tmp/tlpkg
{
  date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  python3 -c 'import torch, triton, numpy, sys; print(sys.version.split()[0], torch.__version__, triton.__version__, numpy.__version__)'
  command -v ncu && ncu --version | tail -1
} > "$WORK/env.txt" 2>&1
cat "$WORK/env.txt"
python3 -m pytest -q --noconftest -p no:cacheprovider -m gpu tests/runner/test_run_gpu.py 2>&1 | tee "$WORK/pytest_gpu.log" | tail -4
python3 benchmarks/gpu/bench_profile.py "$WORK" 2>&1 | tee "$WORK/bench.log"
# The CLI end to end: a fresh profile of the naive transpose with ceilings measured and ncu on its launch.
python3 -m tritonlens.server.cli profile benchmarks/gpu/kb_copy.py --backend cuda --runner "local:$(command -v python3)" \
  --ncu --measure-ceilings > "$WORK/cli_profile.txt" 2> "$WORK/cli_profile.err"
echo "cli exit $?"; cat "$WORK/cli_profile.txt" "$WORK/cli_profile.err"
rm -rf "$WORK/cache"
tar -czf "$OUT/results.tar.gz" -C "$WORK" .
cp "$WORK/bench.log" "$OUT/"
ls -la "$WORK"
