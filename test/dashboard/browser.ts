/**
 * A real Chromium for the browser tests, driven by playwright-core. The binary comes from the npm
 * package @sparticuz/chromium (decompressed to the temp directory on first use), so `npm ci` is the
 * whole setup; CONSORT_CHROMIUM points at another one (e.g. Debian's /usr/bin/chromium).
 */
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Chromium from '@sparticuz/chromium';
import lockfile from 'proper-lockfile';
import { chromium, type Browser } from 'playwright-core';

// The package's flags are made for serverless hosts; these would weaken what the tests check.
const DROP = new Set([
  '--disable-web-security',
  '--allow-running-insecure-content',
  "--headless='shell'",
  '--disable-site-isolation-trials',
]);

/**
 * The package decompresses its binary into the temp directory on first use, and a second jest
 * worker asking meanwhile would find the file half-written: one worker at a time asks, under a lock.
 */
async function packagedChromium(): Promise<string> {
  const marker = path.join(os.tmpdir(), 'consort-test-chromium.lock');
  await writeFile(marker, '', { flag: 'a' });
  const release = await lockfile.lock(marker, {
    retries: { retries: 120, minTimeout: 100, maxTimeout: 1000 },
    stale: 120_000,
  });
  try {
    return await Chromium.executablePath();
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
