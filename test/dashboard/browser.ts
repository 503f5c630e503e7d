/**
 * A real Chromium for the browser tests, driven by playwright-core. The binary comes from the npm
 * package @sparticuz/chromium (decompressed to the temp directory on first use), so `npm ci` is the
 * whole setup; CONSORT_CHROMIUM points at another one (e.g. Debian's /usr/bin/chromium).
 */
import Chromium from '@sparticuz/chromium';
import { chromium, type Browser } from 'playwright-core';

// The package's flags are made for serverless hosts; these would weaken what the tests check.
const DROP = new Set([
  '--disable-web-security',
  '--allow-running-insecure-content',
  "--headless='shell'",
  '--disable-site-isolation-trials',
]);

export async function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CONSORT_CHROMIUM ?? (await Chromium.executablePath());
  return chromium.launch({ executablePath, headless: true, args: Chromium.args.filter((a) => !DROP.has(a)) });
}

/** Screenshots for the docs are written only when asked (CONSORT_SCREENSHOTS=1), never as a side effect of `npm test`. */
export const SCREENSHOTS = process.env.CONSORT_SCREENSHOTS === '1';
