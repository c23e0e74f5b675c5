#!/usr/bin/env bash
# One device call: level 5 on a public library's own files. Liger-Kernel's launches are recorded on the H200 by
# our driver (exercise_liger.py), then `tritonlens optimize` proposes rewrites of Liger's modules and verifies each
# by replaying those recorded launches (fresh inputs, original vs candidate), timing both on the GPU.
# Liger's source is carried at .gpu_carry/liger/src (git-ignored; see run_liger_record_h200.sh), with .whl.
#   FILES="rope.py cross_entropy.py" bash benchmarks/gpu/liger_record/run_liger_optimize_h200.sh
set -u
OUT=${OUT:-/tmp/tl-out}
REPO=$PWD
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >/dev/null 2>&1
mkdir -p /tmp/tlpkg/tritonlens
for d in analysis server ascend_runner; do ln -sfn "$REPO/$d" /tmp/tlpkg/tritonlens/$d; done
WS=$(mktemp -d /tmp/liger-XXXX)
cp -r .gpu_carry/liger/src/. "$WS/"
printf "[project]\nname = 'liger-optimize'\n" > "$WS/pyproject.toml"
cp "$REPO/benchmarks/gpu/liger_record/exercise_liger.py" "$WS/"
export PYTHONPATH=/tmp/tlpkg:/tmp/site PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
export TRITONLENS_CUDA_PYTHON=$(command -v python3) TRITONLENS_CACHE_DIR=$WS/.cache
TL="python3 -m tritonlens.server.cli"
cd "$WS"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'; } > "$OUT/env.txt" 2>&1
timeout 200 $TL record --backend cuda -- python3 exercise_liger.py > "$OUT/record.txt" 2>&1
echo "record exit $?"; tail -3 "$OUT/record.txt"
for f in ${FILES:-rope.py cross_entropy.py}; do
  name=${f%.py}
  timeout ${OPT_TIMEOUT:-240} $TL optimize "liger_kernel/ops/$f" --backend cuda --target sm_90 --runner "local:$(command -v python3)" \
    --budget "${BUDGET:-candidates=8,rounds=2,seconds=150}" --report "$OUT/optimize_$name" --format text \
    > "$OUT/optimize_$name.txt" 2> "$OUT/optimize_$name.err"
  echo "optimize $f exit $?"; tail -25 "$OUT/optimize_$name.txt"; tail -3 "$OUT/optimize_$name.err"
done
cd / && rm -rf "$WS"
