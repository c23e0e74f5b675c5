#!/usr/bin/env bash
# One device call: level 5 on a file that is NOT in KernelBench form. `tritonlens record` runs the example's own
# __main__ on the GPU (its real launches go to the workspace's launch store), then `tritonlens optimize` verifies
# every candidate by replaying those launches against the original kernel and times them on the GPU.
#   BACKEND=cuda bash benchmarks/gpu/run_replay_h200.sh          (on the H200; wheels of pygls & co. in .whl/)
#   BACKEND=interpret PY=.envs/cuda/bin/python bash benchmarks/gpu/run_replay_h200.sh   (the same flow on a CPU)
set -u
OUT=${OUT:-/tmp/tl-out}
REPO=$PWD
WS=$(mktemp -d /tmp/tl-replay-XXXX)
BACKEND=${BACKEND:-cuda}
mkdir -p "$OUT"
if [ "$BACKEND" = cuda ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >/dev/null 2>&1
  mkdir -p /tmp/tlpkg/tritonlens
  for d in analysis server ascend_runner; do ln -sfn "$REPO/$d" /tmp/tlpkg/tritonlens/$d; done
  export PYTHONPATH=/tmp/tlpkg:/tmp/site
  PY=$(command -v python3); TL="python3 -m tritonlens.server.cli"
else
  PY=${PY:-python3}; TL="$REPO/.venv/bin/tritonlens"
fi
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 TRITONLENS_CUDA_PYTHON=$PY TRITONLENS_CACHE_DIR=$WS/.cache
cp examples/naive_softmax.py "$WS/" && printf "[project]\nname = 'replay-demo'\n" > "$WS/pyproject.toml"
cd "$WS"
{ date -u; command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  "$PY" -c 'import torch, triton, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'
  echo "backend $BACKEND"; } > "$OUT/env.txt" 2>&1
$TL record --backend "$BACKEND" -- "$PY" naive_softmax.py > "$OUT/record.txt" 2>&1
echo "record exit $?"; tail -5 "$OUT/record.txt"
timeout ${OPT_TIMEOUT:-400} $TL optimize naive_softmax.py --backend "$BACKEND" --target sm_90 --runner "local:$PY" \
  --budget "${BUDGET:-candidates=8,rounds=2,seconds=60}" --report "$OUT/optimize" --format text > "$OUT/optimize.txt" 2> "$OUT/optimize.err"
echo "optimize exit $?"; tail -40 "$OUT/optimize.txt"; tail -5 "$OUT/optimize.err"
cp -r .tritonlens/launches "$OUT/launches" 2>/dev/null
cd / && rm -rf "$WS"
