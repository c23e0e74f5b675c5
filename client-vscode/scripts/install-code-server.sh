#!/usr/bin/env bash
# Installs code-server (a real VS Code served to a browser) and headless Chromium for the e2e test, offline
# apart from the npm and Debian registries. Cached OUTSIDE the repo (default /opt/tritonlens-code-server);
# a second run is a no-op. Needs root for apt-get (skipped when the packages are already there).
set -euo pipefail

CS_VERSION="${CODE_SERVER_VERSION:-4.100.3}"   # 4.100.x still accepts Node 20
CS_HOME="${TRITONLENS_CODE_SERVER_HOME:-/opt/tritonlens-code-server}"
CS_BIN="$CS_HOME/node_modules/.bin/code-server"

if [ -x "$CS_BIN" ] && [ -x /usr/bin/chromium ]; then
  echo "code-server $CS_VERSION and chromium already installed ($CS_BIN)"
  exit 0
fi

need_apt=()
for pkg in chromium libkrb5-dev libxkbfile-dev libsecret-1-dev libx11-dev ripgrep; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ "${#need_apt[@]}" -gt 0 ]; then
  echo "apt-get install: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get -o DPkg::Lock::Timeout=900 update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -q "${need_apt[@]}"
fi

if [ ! -x "$CS_BIN" ]; then
  command -v node-gyp >/dev/null || npm install -g --no-audit --no-fund node-gyp@12.4.0
  # @vscode/ripgrep downloads a binary at install time; serve Debian's rg from its download cache instead.
  tmp="$(mktemp -d)"
  cp "$(command -v rg)" "$tmp/rg"
  tar -C "$tmp" -czf "$tmp/rg.tgz" rg
  for v in 1.15.9 1.15.10 1.15.11 1.15.12 1.15.13 1.15.14; do
    mkdir -p "/tmp/vscode-ripgrep-cache-$v"
    cp "$tmp/rg.tgz" "/tmp/vscode-ripgrep-cache-$v/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
  done
  mkdir -p "$CS_HOME"
  cd "$CS_HOME"
  [ -f package.json ] || echo '{"name":"tritonlens-code-server","private":true}' > package.json
  npm_config_yes=true npm install --unsafe-perm --no-audit --no-fund "code-server@$CS_VERSION"
fi
"$CS_BIN" --version
