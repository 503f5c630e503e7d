/**
 * The proofs' pristine dependency install is read-only to every agent's turn and every suite
 * (bound read-only under bubblewrap; its files' modes elsewhere). Without an npm lockfile it is a
 * copy beside the repository (`<repo>-consort-deps-…`), and its owner may make it writable again
 * (`chmod`), which modes do not stop. The migration child — which runs agents' JS migrations when a
 * proof applies them — is neither a turn nor a suite: until 2026-12-05 it saw the copy as its
 * modes left it, and a driver's migration that made its `pg` writable and patched it (only where
 * the tree holds that migration, so RED's tree beside GREEN still failed) had the feature built
 * with no code that stores a phone. The copy is now read-only to every isolated command of the run
 * (`ProcessRunner.protect`, under bubblewrap).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileAsync } from '../helpers/exec-file.js';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/migration-patches-deps-agent.mjs', import.meta.url));
const shop = useShopWithAgent(AGENT, 'quick');
const PG = createRequire(import.meta.url).resolve('pg');

it("a migration's code cannot rewrite the proofs' pristine dependencies", async () => {
  const dir = shop.repo.dir;
  // The shop's own install (ignored, no lockfile): a `pg` that is the real one.
  await mkdir(path.join(dir, 'node_modules', 'pg'), { recursive: true });
  await writeFile(path.join(dir, 'node_modules', 'pg', 'package.json'), '{"name":"pg","main":"index.js"}\n');
  await writeFile(
    path.join(dir, 'node_modules', 'pg', 'index.js'),
    `module.exports = require(${JSON.stringify(PG)});\n`,
  );
  await writeFile(path.join(dir, '.gitignore'), 'junit.xml\nnode_modules/\n');
  await execFileAsync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qam', 'ignore node_modules'], {
    cwd: dir,
  });
  const { r, lines } = await runNewFeature(dir, shop.t.provider, 'phones');
  const log = lines.join('\n');
  if (r.stop === 'done') console.log(log);
  // Until 2026-12-05 GREEN was proven and the lane ran to `done`.
  expect(r.stop).not.toBe('done');
  expect(log).not.toContain('GREEN proven for T1');
  expect(log).toContain('GREEN rejected for T1 (failing)');
}, 180_000);
