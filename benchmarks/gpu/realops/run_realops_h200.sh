#!/usr/bin/env bash
# One device call (issue 24): real operators of two public libraries never used here (ColossalAI's inference
# kernels, AlibabaPAI FLASHNN), recorded on the H200 by our driver (exercise_libs.py), then `tritonlens optimize`
# on each recorded library file: rewrites verified by replaying those launches (fresh inputs, original vs
# candidate), timed on the GPU. HALF the files per call, so a call stays under 9 minutes:
#   PART=1 bash benchmarks/gpu/realops/run_realops_h200.sh     (then PART=2; or FILES="path ..." for any set)
# Carry .gpu_carry (sources from fetch_libs.sh, and .gpu_carry/wheels/loguru-*.whl: FLASHNN imports loguru) and
# .whl (tritonlens). Everything lands under $OUT; the table (summarize.py) is printed last.
#   TOTAL_S (default 510): the whole call's budget; each file gets min(OPT_TIMEOUT, what is left / files left).
set -u
START=$(date +%s)
OUT=${OUT:-/tmp/tl-out}
REPO=$PWD
PART=${PART:-1}
TOTAL_S=${TOTAL_S:-510}
OPT_TIMEOUT=${OPT_TIMEOUT:-60}
CANDIDATES=${CANDIDATES:-6}
ROUNDS=${ROUNDS:-1}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1 || echo "pip install failed (continuing)"
# The libraries' own dependencies go into the runner environment itself: tritonlens's workers never inherit
# PYTHONPATH (the environment's packages only), so a dependency under /tmp/site would exist for `record` only.
python3 -m pip install -q --no-index --no-deps --no-cache-dir .gpu_carry/wheels/*.whl >/dev/null 2>&1 \
  || echo "library dependencies not installed into the environment (continuing)"
mkdir -p /tmp/tlpkg/tritonlens
for d in analysis server ascend_runner; do ln -sfn "$REPO/$d" /tmp/tlpkg/tritonlens/$d; done
WS=$(mktemp -d /tmp/realops-XXXX)
cp -r .gpu_carry/colossalai/src/. .gpu_carry/flashnn/src/. "$WS/"
printf "[project]\nname = 'realops'\n" > "$WS/pyproject.toml"
cp "$REPO/benchmarks/gpu/realops/exercise_libs.py" "$WS/"
export PYTHONPATH=/tmp/tlpkg:/tmp/site PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
export TRITONLENS_CUDA_PYTHON=$(command -v python3) TRITONLENS_CACHE_DIR=$WS/.cache
TL="python3 -m tritonlens.server.cli"
C=colossalai/kernel/triton
F=flashnn/triton_kernels
# every file with a recorded launch, split in two halves of about equal count
PART1="$C/context_attn_unpad.py $C/flash_decoding.py $C/fused_rotary_embedding.py $C/no_pad_rotary_embedding.py
  $C/kvcache_copy.py $C/rms_layernorm.py $C/softmax.py $C/rotary_cache_copy.py $C/llama_act_combine_kernel.py
  $F/dynamic_quant.py $F/layer_norm.py $F/layer_norm_dquant.py"
PART2="$F/flash_attn_v2.py $F/paged_attn.py $F/paged_attn_v1.py $F/paged_attn_v2.py $F/gemm_a8w8.py
  $F/gemm_a16w8.py $F/gemm_a16w4.py $F/rms_norm.py $F/rms_norm_dquant.py $F/rotary_embedding.py
  $F/fused_moe_fp16.py $F/fused_moe_a8w8.py $F/fused_moe_a16w4.py"
if [ -n "${FILES:-}" ]; then LIST=$FILES; elif [ "$PART" = 2 ]; then LIST=$PART2; else LIST=$PART1; fi
cd "$WS"
{ date -u; echo "part $PART"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, triton, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)'
} > "$OUT/env.txt" 2>&1
cp "$REPO/benchmarks/gpu/realops/manifest.csv" "$OUT/"
# One recording process per library: a fault in one library's operator (an illegal address is sticky for the
# process's CUDA context) must not lose the other library's launches.
for lib in colossalai flashnn; do
  timeout ${RECORD_TIMEOUT:-120} $TL record --backend cuda -- python3 exercise_libs.py --lib $lib >> "$OUT/record.txt" 2>&1
  echo "record $lib exit $?"
done
grep -E "^(ok|FAIL) |operators ran" "$OUT/record.txt"
tar czf "$OUT/launches.tgz" --exclude="*.lock" -C .tritonlens launches 2>/dev/null
set -- $LIST
left=$#
for f in "$@"; do
  name=$(echo "${f%.py}" | tr '/' '_')
  remaining=$(( TOTAL_S - ($(date +%s) - START) ))
  per=$(( remaining / left )); [ $per -gt $OPT_TIMEOUT ] && per=$OPT_TIMEOUT
  left=$(( left - 1 ))
  if [ $per -lt 15 ]; then echo "skip $f: ${remaining}s left"; echo "skipped: ${remaining}s left" > "$OUT/opt_$name.err"; continue; fi
  secs=$(( per - 8 ))  # the tool's start and report writing sit outside its own budget
  timeout $per $TL optimize "$f" --backend cuda --target sm_90 --runner "local:$(command -v python3)" \
    --budget "candidates=$CANDIDATES,rounds=$ROUNDS,seconds=$secs" --report "$OUT/opt_$name" --format text \
    > "$OUT/opt_$name.txt" 2> "$OUT/opt_$name.err"
  echo "optimize $f exit $? (timeout ${per}s)"; tail -2 "$OUT/opt_$name.err"
done
cd / && rm -rf "$WS"
python3 "$REPO/benchmarks/gpu/realops/summarize.py" "$OUT" --save "$OUT/summary" || echo "summarize failed"
# Few files come back from the device: the per-file outputs travel as one archive (summarize reads them first).
(cd "$OUT" && tar czf optimize-outputs.tgz opt_* && rm -rf opt_*)
