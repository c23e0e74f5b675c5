#!/usr/bin/env bash
# Everything CI runs for the VS Code client, with the time each step takes:
#   npm ci, typecheck (tsc --noEmit), unit tests (vitest, mocked vscode), package (.vsix), packaging test,
#   end-to-end test in a real VS Code (code-server + headless Chromium; installs both on first use, cached
#   outside the repo). TRITONLENS_SKIP_E2E=1 skips the e2e step; TRITONLENS_SKIP_NPM_CI=1 reuses node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -a TIMINGS=()
step() {
  local name="$1"
  shift
  echo "== client-vscode: $name"
  local t0=$SECONDS
  "$@"
  TIMINGS+=("$(printf '%-14s %4ds' "$name" $((SECONDS - t0)))")
}

summary() {
  echo "== client-vscode timings"
  printf '  %s\n' "${TIMINGS[@]}"
}
trap summary EXIT

if [ "${TRITONLENS_SKIP_NPM_CI:-0}" = 1 ] && [ -d node_modules ]; then
  echo "== client-vscode: npm ci skipped (TRITONLENS_SKIP_NPM_CI=1)"
else
  step "npm ci" npm ci --no-audit --no-fund
fi
step "typecheck" npx tsc --noEmit -p .
step "unit tests" npx vitest run
step "package" npm run package
step "package test" node scripts/check-vsix.mjs dist/tritonlens.vsix
if [ "${TRITONLENS_SKIP_E2E:-0}" = 1 ]; then
  echo "== client-vscode: e2e skipped (TRITONLENS_SKIP_E2E=1)"
else
  step "e2e" node test/e2e/run-e2e.mjs
fi
