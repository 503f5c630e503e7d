/**
 * A real Chromium for the browser tests, driven by playwright-core. The binary comes from the npm
 * package @sparticuz/chromium (decompressed once per machine, see packagedChromium), so `npm ci` is
 * the whole setup; CONSORT_CHROMIUM points at another one (e.g. Debian's /usr/bin/chromium).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Chromium from '@sparticuz/chromium';
import lockfile from 'proper-lockfile';
import { chromium, type Browser } from 'playwright-core';
import { execFileAsync } from '../helpers/exec-file.js';

const run = execFileAsync;

// The package's flags are made for serverless hosts; these would weaken what the tests check.
const DROP = new Set([
  '--disable-web-security',
  '--allow-running-insecure-content',
  "--headless='shell'",
  '--disable-site-isolation-trials',
]);

/**
 * The package decompresses its binary (~200 MB) into the temp directory on first use. A run's
 * temp directory is its own (test/setup/global-setup.mjs), so the binary goes to the machine's
 * cache folder for test runs instead (CONSORT_TEST_KEEP_DIR), decompressed once per machine by a
 * child whose TMPDIR is that folder; and a second jest worker asking meanwhile would find the
 * file half-written: one worker at a time asks, under a lock.
 */
async function packagedChromium(): Promise<string> {
  const dir = process.env.CONSORT_TEST_KEEP_DIR ?? os.tmpdir();
  await mkdir(dir, { recursive: true });
  const marker = path.join(dir, 'consort-test-chromium.lock');
  await writeFile(marker, '', { flag: 'a' });
  const release = await lockfile.lock(marker, {
    retries: { retries: 120, minTimeout: 100, maxTimeout: 1000 },
    stale: 120_000,
  });
  try {
    const binary = path.join(dir, 'chromium');
    if (existsSync(binary)) return binary;
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const c = (await import('@sparticuz/chromium')).default; process.stdout.write(await c.executablePath());",
      ],
      { cwd: process.cwd(), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir(), TMPDIR: dir } },
    );
    return stdout;
  } finally {
    await release();
  }
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CONSORT_CHROMIUM ?? (await packagedChromium());
  return chromium.launch({ executablePath, headless: true, args: Chromium.args.filter((a) => !DROP.has(a)) });
}

/** Screenshots for the docs are written only when asked (CONSORT_SCREENSHOTS=1), never as a side effect of `npm test`. */
export const SCREENSHOTS = process.env.CONSORT_SCREENSHOTS === '1';
