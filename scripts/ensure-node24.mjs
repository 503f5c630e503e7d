#!/usr/bin/env node
/**
 * npm run setup:node24 (also run by `pretest`) — makes sure a Node 24 binary is at hand for the tests that
 * run the committed dist/ as GitHub's runners do (action.yml: `runs.using: node24`). The machine's own
 * Node is used when it is already 24; otherwise the official binary ships in the registry package
 * `node-<platform>-<arch>` and is installed once into the user's cache ($XDG_CACHE_HOME/consort/node24, shared by every clone). Prints the binary's path;
 * `--no-install` only looks (tests use it: they never download).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const NODE24_VERSION = '24.22.3';
const platform = process.platform === 'win32' ? 'win' : process.platform;
const pkg = `node-${platform}-${process.arch}`;
const prefix = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'consort', 'node24');
const bin = path.join(prefix, 'node_modules', pkg, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');

if (process.env.CONSORT_NODE24) {
  console.log(process.env.CONSORT_NODE24);
} else if (process.versions.node.split('.')[0] === '24') {
  console.log(process.execPath);
} else {
  if (!existsSync(bin) && process.argv.includes('--no-install')) {
    console.error(
      `No Node 24 binary at ${bin}: run \`npm run setup:node24\` (or set CONSORT_NODE24 to a Node 24 binary).`,
    );
    process.exit(1);
  }
  if (!existsSync(bin)) {
    await mkdir(prefix, { recursive: true });
    console.error(`Installing Node ${NODE24_VERSION} (${pkg}) into ${prefix} for the dist/ tests…`);
    // A minimal, allow-listed environment: npm needs PATH, HOME and its own config, nothing else of ours.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) =>
        /^(PATH|HOME|USERPROFILE|APPDATA|SYSTEMROOT|TMPDIR|TEMP|TMP|LANG|LC_ALL|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|HTTPS?_PROXY|NO_PROXY|npm_config_(registry|cache|userconfig|proxy|https_proxy|noproxy|strict_ssl|cafile))$/i.test(
          k,
        ),
      ),
    );
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--no-save',
        '--no-audit',
        '--no-fund',
        '--no-package-lock',
        '--loglevel=error',
        `${pkg}@${NODE24_VERSION}`,
      ],
      // npm's own output goes to stderr: stdout is this script's answer (callers capture it).
      { stdio: ['ignore', 2, 'inherit'], env, shell: process.platform === 'win32' },
    );
  }
  console.log(bin);
}
