#!/usr/bin/env bash
# Reproduce the carried library sources (git-ignored, never committed) from the fetched bare mirrors, at the
# commits pinned in manifest.csv: .gpu_carry/<lib>/src/<path> for each distinct (repo, commit, path) row.
#   bash benchmarks/gpu/realops/fetch_libs.sh [MIRRORS_DIR]     (default /work/.mirror; <owner>+<name>/repo)
# Only the operator modules are carried (plus the package files they import); colossalai/ and colossalai/kernel/
# stay implicit namespace packages, so none of ColossalAI's heavy package __init__ runs and nothing is stubbed.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
MIRRORS=${1:-/work/.mirror}
lib_of() {  # the carry folder of a repository
  case "$1" in
    hpcaitech/ColossalAI) echo colossalai ;;
    AlibabaPAI/FLASHNN) echo flashnn ;;
    *) echo "unknown repo $1" >&2; return 1 ;;
  esac
}
tail -n +2 "$HERE/manifest.csv" | cut -d, -f1-3 | sort -u | while IFS=, read -r repo commit path; do
  lib=$(lib_of "$repo")
  git_dir="$MIRRORS/${repo%%/*}+${repo##*/}/repo"
  dest="$ROOT/.gpu_carry/$lib/src/$path"
  mkdir -p "$(dirname "$dest")"
  git --git-dir="$git_dir" show "$commit:$path" > "$dest"
done
for lib in colossalai flashnn; do
  [ -d "$ROOT/.gpu_carry/$lib/src" ] && echo "$lib: $(find "$ROOT/.gpu_carry/$lib/src" -name '*.py' | wc -l) files, $(du -sh "$ROOT/.gpu_carry/$lib/src" | cut -f1)"
done
