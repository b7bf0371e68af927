#!/usr/bin/env bash
# Builds the darwin-arm64 (Apple silicon, Metal) engine and packs its VSIX. PREPARED, NOT SUPPORTED:
# it needs a Mac (Xcode's command-line tools: clang, the macOS SDK, the Metal compiler), which the
# project's machines are not, so it has never run; docs/server.md#platforms says what is known and what is
# not. Run on an Apple-silicon Mac, from the repository root, after `npm install --ignore-scripts`:
#
#   bash scripts/build-macos.sh                 -> native/build-darwin-arm64/, vsix/strata-<version>-darwin-arm64.vsix
#   STRATA_CODESIGN_ID="Developer ID Application: NAME (TEAM)" bash scripts/build-macos.sh   (signed)
#
# What it does, and why:
# - llama.cpp with ggml's Metal backend (GGML_METAL=ON) and its shaders embedded in the library
#   (GGML_METAL_EMBED_LIBRARY=ON: no default.metallib file to find at run time), the CPU backend
#   built for Apple's cores (GGML_CPU_ALL_VARIANTS=ON gives apple_m1, apple_m2_m3, apple_m4,
#   picked at run time like the Linux variants), BLAS through Accelerate (GGML_BLAS=ON,
#   GGML_BLAS_VENDOR=Apple), backends loaded at run time (GGML_BACKEND_DL=ON) so the addon finds
#   them beside itself (@loader_path, macOS's $ORIGIN).
# - the addon (native/) against those libraries; Node-API symbols resolve in the host process at
#   load time (-undefined dynamic_lookup, what node-gyp passes on macOS).
# - signing: every .dylib and strata.node must be signed for a VSIX installed from the Marketplace
#   to load them without Gatekeeper's quarantine prompt (hardened runtime; the Metal backend
#   needs no entitlement). Unsigned (ad-hoc) builds run from a local checkout only.
#
# Known open points, to settle on a Mac before macOS is claimed: the addon's CMake file links the
# Linux/Windows library names (lib*.so / *.dll) and needs a .dylib branch; backends.cpp lists
# libggml-cpu-*.so and needs the .dylib suffix (and dladdr works as on Linux); the engine's memory
# probe reads /proc/meminfo (macOS: sysctl hw.memsize and host_statistics64) and falls back to
# "unknown"; the extension's start-up check and the package script need darwin-arm64 added to
# their platform lists (extension/platform/check.ts, scripts/build-native.mjs PLATFORMS).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(uname -s)-$(uname -m)" != "Darwin-arm64" ]; then
  echo "build-macos.sh runs on an Apple-silicon Mac (this is $(uname -s)-$(uname -m))" >&2
  exit 1
fi
command -v xcrun >/dev/null || { echo "needs Xcode's command-line tools: xcode-select --install" >&2; exit 1; }
xcrun -sdk macosx metal -v >/dev/null 2>&1 || { echo "needs the Metal compiler (Xcode, or xcodebuild -downloadComponent MetalToolchain)" >&2; exit 1; }

cache="${STRATA_CACHE_DIR:-$HOME/Library/Caches/strata}"
src="$(STRATA_CACHE_DIR="$cache" node -e "import('./scripts/build-native.mjs').then(m => console.log(m.ensureSource()))")"
build="$cache/native/darwin-arm64-metal/build"
out="native/build-darwin-arm64"
jobs="$(sysctl -n hw.ncpu)"

cmake -G Ninja -S "$src" -B "$build" \
  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DCMAKE_OSX_ARCHITECTURES=arm64 \
  -DCMAKE_OSX_DEPLOYMENT_TARGET=13.3 \
  -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON -DCMAKE_INSTALL_RPATH=@loader_path -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON \
  -DGGML_BACKEND_DL=ON -DGGML_NATIVE=OFF -DGGML_CPU_ALL_VARIANTS=ON -DGGML_OPENMP=OFF -DGGML_RPC=ON \
  -DGGML_METAL=ON -DGGML_METAL_EMBED_LIBRARY=ON -DGGML_BLAS=ON -DGGML_BLAS_VENDOR=Apple \
  -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_OPENSSL=OFF
cmake --build "$build" --target llama ggml -j "$jobs"

mkdir -p "$out/vocab"
cp "$build"/bin/*.dylib "$out/"
cmake -G Ninja -S native -B "$build-addon" -DCMAKE_BUILD_TYPE=Release -DCMAKE_OSX_ARCHITECTURES=arm64 \
  -DLLAMA_SRC="$src" -DLLAMA_LIB_DIR="$out" -DSTRATA_BACKEND_DL=ON \
  -DNODE_API_INCLUDE="$PWD/node_modules/node-api-headers/include" -DNODE_ADDON_API_INCLUDE="$PWD/node_modules/node-addon-api" \
  -DCMAKE_SHARED_LINKER_FLAGS="-undefined dynamic_lookup" -DCMAKE_INSTALL_RPATH=@loader_path -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON
cmake --build "$build-addon" -j "$jobs"
cp "$build-addon/strata.node" "$out/"
for v in starcoder qwen2; do cp "$src/models/ggml-vocab-$v.gguf" "$out/vocab/"; done
node -e "const fs=require('fs');fs.writeFileSync('$out/build-manifest.json',JSON.stringify({platform:'darwin-arm64',files:fs.readdirSync('$out').filter(f=>f.endsWith('.dylib'))},null,2))"

# Signing: Developer ID with the hardened runtime when given, else ad hoc (runs on this Mac only).
id="${STRATA_CODESIGN_ID:--}"
for f in "$out"/*.dylib "$out/strata.node"; do
  codesign --force --timestamp --options runtime --sign "$id" "$f"
done
echo "built $out (signed with: $id). Packing needs darwin-arm64 in scripts/build-native.mjs PLATFORMS (see above)."
