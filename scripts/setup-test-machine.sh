#!/usr/bin/env bash
# What `npm test` needs on this machine beyond `npm ci` (run by `pretest`, so `npm test` is the one
# command on a fresh Debian machine): installed once, skipped in well under a second afterwards.
#   - xfsprogs: test/action/reflink.test.ts mounts a loop XFS (the Action's reflink input);
#   - bubblewrap: untrusted commands (agents' turns, proofs' suites, the migration child) run under
#     it when installed, and test/security/isolate.test.ts expects it;
#   - Node 24 for the dist/ tests, and code-server + Chromium for test/vscode: setup-vscode-test.sh.
# Where apt-get is not available (another OS), it says what is missing and goes on: the tests that
# need a piece fail with the instruction, they are never skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
if ! command -v mkfs.xfs >/dev/null && [ ! -x /usr/sbin/mkfs.xfs ] && [ ! -x /sbin/mkfs.xfs ]; then missing+=(xfsprogs); fi
if ! command -v bwrap >/dev/null 2>&1; then missing+=(bubblewrap); fi
if ! command -v chromium >/dev/null || ! dpkg -s libkrb5-dev >/dev/null 2>&1; then missing+=(chromium libkrb5-dev); fi
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "[setup-test-machine] apt-get install ${missing[*]} (once per machine)" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "[setup-test-machine] missing ${missing[*]} and no apt-get: install them with your package manager (see CONTRIBUTING.md)" >&2
    exit 0
  fi
fi

# Node 24 (dist/ tests) and code-server (test/vscode): quick when already in place.
bash scripts/setup-vscode-test.sh
