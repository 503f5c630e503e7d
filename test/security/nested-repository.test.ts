/**
 * A git repository an agent makes inside its scope is not a folder of files: git stages it as a
 * gitlink, and from then on every `git status` of the superproject runs `git status` inside it to
 * ask whether it is dirty — with that repository's own config, which the agent wrote (a clean
 * filter, run for a file whose stat changed). That is a command of the agent's run by the
 * conductor's git, outside the turn's sandbox. The scope check now refuses such a repository in
 * every step (git lists it as `dir/`), the refused turn's revert removes it, and the conductor's
 * `git status` never asks a gitlink (`--ignore-submodules=all`).
 */
import { access, readFile, rm } from 'node:fs/promises';
import { readlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useShopWithAgent } from '../helpers/shop-agent.js';
import { runNewFeature } from '../helpers/tdd.js';

const AGENT = fileURLToPath(new URL('../fixtures/agents/nested-repo-agent.mjs', import.meta.url));
const shop = useShopWithAgent(AGENT, 'quick');

it("a git repository an agent makes in its scope never runs its config's commands in the conductor's git", async () => {
  const marker = path.join(path.dirname(shop.repo.dir), `${path.basename(shop.repo.dir)}-escaped`);
  await rm(marker, { force: true });
  const { r, lines } = await runNewFeature(shop.repo.dir, shop.t.provider, 'phones');
  const ran = await readFile(marker, 'utf8').catch(() => null);
  if (ran !== null)
    console.log(`the filter ran in ${ran} (this process: ${readlinkSync('/proc/self/ns/pid')})\n${lines.join('\n')}`);
  // Until 2026-12-05 it ran, twice, in this process's PID namespace: the conductor's own git.
  expect(ran).toBeNull();
  expect(lines.join('\n')).toContain('src/vendor/ (a git repository of its own');
  expect(r.stop).not.toBe('done');
  await expect(access(path.join(shop.repo.dir, 'src', 'vendor', '.git'))).rejects.toThrow();
}, 180_000);
