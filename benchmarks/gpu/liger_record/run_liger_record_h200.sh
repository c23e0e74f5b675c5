#!/usr/bin/env bash
# One device call: real launches of a public kernel library (Liger-Kernel) recorded on the H200, then profiled.
# Liger's source is not in this repository: put a checkout's src/ folder at .gpu_carry/liger/src (git-ignored;
# `git --git-dir=<Liger mirror> archive HEAD src | tar x -C .gpu_carry/liger`) and carry .gpu_carry and .whl.
#   bash benchmarks/gpu/liger_record/run_liger_record_h200.sh        (on the H200)
# Levels 3-4 then run on any machine against the returned launch store (see docs/precision.md).
set -u
OUT=${OUT:-/tmp/tl-out}
REPO=$PWD
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >/dev/null 2>&1
mkdir -p /tmp/tlpkg/tritonlens
for d in analysis server ascend_runner; do ln -sfn "$REPO/$d" /tmp/tlpkg/tritonlens/$d; done
WS=$(mktemp -d /tmp/liger-XXXX)
cp -r .gpu_carry/liger/src/. "$WS/"
printf "[project]\nname = 'liger-record'\n" > "$WS/pyproject.toml"
export PYTHONPATH=/tmp/tlpkg:/tmp/site PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
export TRITONLENS_CUDA_PYTHON=$(command -v python3) TRITONLENS_CACHE_DIR=$WS/.cache
TL="python3 -m tritonlens.server.cli"
cp "$REPO/benchmarks/gpu/liger_record/exercise_liger.py" "$WS/"  # inside the workspace: it imports liger_kernel from there
SCRIPT=exercise_liger.py
cd "$WS"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'
  git --version >/dev/null 2>&1; } > "$OUT/env.txt" 2>&1
timeout 300 $TL record --backend cuda -- python3 "$SCRIPT" > "$OUT/record.txt" 2>&1
echo "record exit $?"; tail -30 "$OUT/record.txt"
tar czf "$OUT/launches.tgz" --exclude="*.lock" -C .tritonlens launches  # one file: the device returns a few files only
timeout ${PROFILE_TIMEOUT:-300} $TL profile "$SCRIPT" --harness script --backend cuda --ncu \
  --format json > "$OUT/profile.json" 2> "$OUT/profile.err"
echo "profile exit $?"; tail -5 "$OUT/profile.err"
python3 - "$OUT/profile.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as exc:
    print("profile json unreadable:", exc); sys.exit(0)
print(type(d).__name__, list(d)[:12] if isinstance(d, dict) else len(d))
PY
cd / && rm -rf "$WS"
