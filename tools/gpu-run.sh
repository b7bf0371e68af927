#!/usr/bin/env bash
# The GPU bundle's run.sh (tools/gpu-bundle.mjs copies it there): on a machine without Node,
# unpacks Node, the app and the llama.cpp source into a work folder (kept between calls: an
# unchanged bundle is not unpacked again, and the build cache inside it survives), then runs
# tools/gpu-run.mjs with the remaining arguments.
#
#   bash gpu-bundle/run.sh [--work DIR] [gpu-run.mjs options: --flavour cuda|cpu --out DIR --steps ... --budget-s S --small]
#
# --work defaults to gpu-work/ beside the bundle folder. Results go to --out (default $OUT/strata-gpu).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="${STRATA_GPU_WORK:-$here/../gpu-work}"
args=()
while (( $# )); do
  case "$1" in
    --work) work="$2"; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
mkdir -p "$work"
work="$(cd "$work" && pwd)"
stamp="$(sha256sum "$here/manifest.json" | cut -c1-16)"
source_name="$(cat "$here/source-name")"
if [[ "$(cat "$work/.bundle" 2>/dev/null || true)" != "$stamp" ]]; then
  echo "[gpu-run] unpacking the bundle into $work" >&2
  rm -rf "$work/node" "$work/app" "$work/cache/src/$source_name"
  mkdir -p "$work/cache/src"
  tar xzf "$here/node.tar.gz" -C "$work"
  tar xzf "$here/app.tar.gz" -C "$work"
  tar xzf "$here/llama.cpp.tar.gz" -C "$work/cache/src"
  echo "$stamp" > "$work/.bundle"
fi
export PATH="$work/node/bin:$PATH"
export STRATA_CACHE_DIR="$work/cache"
exec "$work/node/bin/node" "$work/app/tools/gpu-run.mjs" ${args[@]+"${args[@]}"}
