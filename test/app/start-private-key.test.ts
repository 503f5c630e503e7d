/**
 * A wrong private key stops the App at start, saying so, before it starts anything. It started,
 * listened and logged "listening", and then failed every webhook when it signed its first token.
 */
import { generateKeyPairSync } from 'node:crypto';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { assertPrivateKey, parseAppSettings } from '../../app/settings.js';
import { startApp } from '../../app/start.js';
import { isConsortError } from '../../src/core/errors.js';
import { privateKey, WEBHOOK_SECRET } from './helpers/github.js';

it('startApp refuses a key that is not one (here the public key), before it starts a server or a database', async () => {
  const { publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'consort-app-key-'));
  await chmod(dataDir, 0o755); // the postgres OS user reaches it when the tests run as root
  try {
    const settings = parseAppSettings(
      {
        APP_ID: '1',
        PRIVATE_KEY_PATH: '/keys/app.pem',
        WEBHOOK_SECRET,
        CONSORT_APP_DATA_DIR: dataDir,
        // Everything else a start needs, so only the key can stop it: a free port, quiet logs,
        // and a GitHub on loopback that never answers (tests reach no network).
        PORT: '0',
        LOG_LEVEL: 'fatal',
        GHE_HOST: '127.0.0.1:9',
        GHE_PROTOCOL: 'http',
      },
      () => publicKey,
    );
    const error = await startApp(settings).then(
      (app) => app.close().then(() => 'started'),
      (e: unknown) => e,
    );
    expect(isConsortError(error, 'config')).toBe(true);
    expect(error).toMatchObject({
      message: expect.stringMatching(
        /^The App's private key \(PRIVATE_KEY or PRIVATE_KEY_PATH\) is not a PEM private key: /,
      ),
      hint: expect.stringContaining('-----BEGIN RSA PRIVATE KEY-----'),
    });
    // Nothing was started: the embedded store would have made its folder here.
    expect(await readdir(dataDir)).toEqual([]);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

it('a real key (PKCS#1, as GitHub makes it, or PKCS#8) passes; text that only looks like one does not', () => {
  expect(() => assertPrivateKey(privateKey())).not.toThrow();
  const pkcs8 = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  }).privateKey;
  expect(() => assertPrivateKey(pkcs8)).not.toThrow();
  expect(() => assertPrivateKey('-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----')).toThrow(
    /not a PEM private key/,
  );
});
