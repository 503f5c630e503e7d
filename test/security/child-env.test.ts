/**
 * Least privilege for every child: a cheating agent that dumps its environment, reads every
 * /proc/<pid>/environ it can (its parent's first) and leaves a `setsid` daemon behind finds no
 * credential, and its daemon does not outlive the turn.
 */
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv, isCredentialName } from '../../src/core/child-env.js';
import { isolationKind } from '../../src/process/isolate.js';
import { execFileAsync } from '../helpers/exec-file.js';

const exec = execFileAsync;
const SPY = fileURLToPath(new URL('../fixtures/security/env-spy.mjs', import.meta.url));
const RUNNER = fileURLToPath(new URL('../fixtures/security/run-command-turn.mjs', import.meta.url));

/** What the Action's and the App's processes hold (values unique enough to grep for). */
const SECRETS: Record<string, string> = {
  GITHUB_TOKEN: 'ghs_secret_github_token_1',
  GH_TOKEN: 'ghs_secret_gh_token_2',
  ACTIONS_RUNTIME_TOKEN: 'secret_actions_runtime_3',
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'secret_id_token_request_4',
  'INPUT_GITHUB-TOKEN': 'secret_hyphenated_input_5',
  INPUT_ANTHROPIC_API_KEY: 'secret_input_model_key_6',
  NEON_API_KEY: 'secret_neon_key_7',
  DATABRICKS_TOKEN: 'secret_databricks_8',
  DATABRICKS_CLIENT_SECRET: 'secret_databricks_client_9',
  PRIVATE_KEY: 'secret_app_private_key_10',
  WEBHOOK_SECRET: 'secret_webhook_11',
  ANTHROPIC_API_KEY: 'secret_other_model_key_12',
  CONSORT_POSTGRES_URL: 'postgresql://postgres:secret_admin_13@127.0.0.1/postgres',
  NODE_OPTIONS: '--title=secret_node_options_14',
};
const OWN_KEY = 'secret_agents_own_key_15';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-envspy-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('childEnv', () => {
  it('passes the allow-listed basics and what the caller sets, nothing else', () => {
    const env = childEnv(
      { DATABASE_URL: 'postgresql://x', PGUSER: undefined },
      { inherit: { PATH: '/bin', HOME: '/h', LC_ALL: 'C', FOO: 'bar', PGUSER: 'admin', ...SECRETS } },
    );
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', LC_ALL: 'C', DATABASE_URL: 'postgresql://x' });
  });

  it('drops credentials even when a caller sets them, unless it names them', () => {
    expect(childEnv({ GITHUB_TOKEN: 'x', OPENAI_API_KEY: 'k' }, { inherit: {} })).toEqual({});
    expect(childEnv({}, { inherit: { OPENAI_API_KEY: 'k', GITHUB_TOKEN: 'x' }, secrets: ['OPENAI_API_KEY'] })).toEqual({
      OPENAI_API_KEY: 'k',
    });
    // A caller's own allow-list (the App's suite variables) passes, credentials never.
    expect(childEnv({}, { inherit: { FOO: '1', GITHUB_TOKEN: 'x', BAR: '2' }, pass: ['FOO', 'GITHUB_TOKEN'] })).toEqual(
      { FOO: '1' },
    );
    for (const name of Object.keys(SECRETS)) expect(isCredentialName(name)).toBe(true);
    for (const name of ['PATH', 'DATABASE_URL', 'PGPASSWORD', 'CONSORT_ROLE'])
      expect(isCredentialName(name)).toBe(false);
  });
});

async function turnFrom(isolation: string): Promise<{
  seen: { env: Record<string, string>; parent: string | null; environs: Record<string, string> };
  late: string;
}> {
  const out = path.join(dir, `${isolation}.json`);
  const late = path.join(dir, `${isolation}.late`);
  // The turn runs from a process whose real environment holds the credentials, as in the Action.
  const { stdout } = await exec(process.execPath, [RUNNER, dir, `node ${SPY} ${out} ${late}`], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...SECRETS,
      OPENAI_API_KEY: OWN_KEY,
      CONSORT_ISOLATION: isolation,
    },
  });
  expect(JSON.parse(stdout)).toEqual({ kind: 'done' });
  return { seen: JSON.parse(await readFile(out, 'utf8')), late };
}

const survived = (file: string) =>
  new Promise<boolean>((resolve) =>
    setTimeout(
      () =>
        void access(file).then(
          () => resolve(true),
          () => resolve(false),
        ),
      3000,
    ),
  );

describe('a command agent that goes looking for credentials', () => {
  it('sees only the basics, the turn, its branch and its own model key', async () => {
    const { seen } = await turnFrom('sweep');
    for (const [name, value] of Object.entries(SECRETS)) {
      expect(seen.env[name]).toBeUndefined();
      expect(JSON.stringify(seen.env)).not.toContain(value);
    }
    expect(seen.env.OPENAI_API_KEY).toBe(OWN_KEY);
    expect(seen.env).toMatchObject({
      CONSORT_ROLE: 'driver',
      DATABASE_URL: 'postgresql://agent:pw@127.0.0.1:5432/f001',
    });
  }, 30_000);

  it('does not leave a setsid daemon behind, even without a PID namespace (marker sweep)', async () => {
    const { late } = await turnFrom('sweep');
    expect(await survived(late)).toBe(false);
  }, 30_000);

  const namespaced = isolationKind({}) === 'sweep' ? it.failing : it;
  // On a machine without user namespaces this documents the gap (it.failing) instead of passing vacuously.
  namespaced(
    `in a PID namespace (${isolationKind({})}) cannot read its ancestors' environments, and nothing it started survives`,
    async () => {
      const { seen, late } = await turnFrom(isolationKind({}));
      const everything = `${seen.parent ?? ''}${Object.values(seen.environs).join('')}`;
      for (const value of Object.values(SECRETS)) expect(everything).not.toContain(value);
      expect(Object.keys(seen.environs).length).toBeGreaterThan(0);
      expect(await survived(late)).toBe(false);
    },
    30_000,
  );

  it('without isolation the same agent would read them from /proc (the attack is real)', async () => {
    if (process.platform !== 'linux') return;
    const out = path.join(dir, 'plain.json');
    await exec(
      process.execPath,
      [
        '-e',
        `require('child_process').execFileSync('sh', ['-c', 'node ${SPY} ${out} /dev/null'], { env: { PATH: process.env.PATH } })`,
      ],
      {
        env: { PATH: process.env.PATH, ...SECRETS },
      },
    );
    const seen = JSON.parse(await readFile(out, 'utf8')) as { environs: Record<string, string> };
    expect(Object.values(seen.environs).join('')).toContain(SECRETS.GITHUB_TOKEN);
  }, 30_000);
});
