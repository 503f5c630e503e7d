/**
 * The isolation untrusted commands run in (src/process/isolate.ts): bubblewrap is found when it is
 * installed (.ci/run installs it), and a folder given as read-only — the proofs' pristine
 * dependency copy during an agent's `command` turn — cannot be changed under it, by root either;
 * cache folders inside stay writable. Without bubblewrap the command still runs (util-linux
 * `unshare`, or the marker sweep), and only file modes guard such a folder.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { commandBackend } from '../../src/agents/command.js';
import type { AgentTurnRequest } from '../../src/ports/agent-backend.js';
import { childEnv } from '../../src/core/child-env.js';
import { hideFromIsolated, isolationKind } from '../../src/process/isolate.js';
import { localProcessRunner } from '../../src/process/runner.js';
import { quoteIdent, withClient, withDatabase } from '../../src/db/sql.js';
import { applyMigrations } from '../../src/migrations/runner.js';
import { ownLocalTestProvider, SYSTEM_PG_URL } from '../helpers/servers.js';

let dir: string;
let locked: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'consort-isolate-'));
  locked = path.join(dir, 'pristine');
  await mkdir(path.join(locked, '.cache'), { recursive: true });
  await writeFile(path.join(locked, 'dep.js'), 'original\n');
});

afterEach(() => rm(dir, { recursive: true, force: true }));

const TRY_WRITES = (out: string) =>
  `node -e "const fs=require('fs');const r={};for(const f of ['dep.js','.cache/c']){try{fs.writeFileSync('${locked}/'+f,'x');r[f]='written'}catch(e){r[f]=e.code}}fs.writeFileSync('${out}',JSON.stringify(r))"`;

it('finds bubblewrap when it is installed (its shell is pid 2, under its own init)', () => {
  expect(spawnSync('bwrap', ['--version']).status).toBe(0); // .ci/run installs it
  expect(isolationKind({})).toBe('bwrap');
  expect(isolationKind({ CONSORT_ISOLATION: 'sweep' })).toBe('sweep');
});

it.each([
  ['bwrap', { 'dep.js': 'EROFS', '.cache/c': 'written' }],
  // Without bubblewrap nothing is bound: the modes (clean-tree.ts) are the guard, and these files are writable.
  ['unshare', { 'dep.js': 'written', '.cache/c': 'written' }],
  ['sweep', { 'dep.js': 'written', '.cache/c': 'written' }],
] as const)('a read-only folder under %s isolation', async (kind, expected) => {
  const out = path.join(dir, `${kind}.json`);
  const pinned = process.env.CONSORT_ISOLATION;
  process.env.CONSORT_ISOLATION = kind;
  try {
    const r = await localProcessRunner.run({
      command: TRY_WRITES(out),
      cwd: dir,
      env: childEnv(),
      isolate: true,
      readOnly: [locked],
      writable: [path.join(locked, '.cache')],
      timeoutMs: 20_000,
      maxOutputBytes: 10_000,
    });
    expect(r.exitCode).toBe(0);
  } finally {
    if (pinned === undefined) delete process.env.CONSORT_ISOLATION;
    else process.env.CONSORT_ISOLATION = pinned;
  }
  expect(JSON.parse(await readFile(out, 'utf8'))).toEqual(expected);
});

it("a command agent's turn cannot change the folders its request names read-only", async () => {
  const out = path.join(dir, 'agent.json');
  const request: AgentTurnRequest = {
    role: 'driver',
    step: 'green',
    feature: 'f001',
    item: 'T1',
    instructions: '',
    contextPack: { pack: {} as AgentTurnRequest['contextPack']['pack'], json: '{}', markdown: '' },
    workspace: dir,
    writes: [],
    branchUrl: 'postgresql://agent:pw@127.0.0.1:5432/f001',
    readOnly: [locked],
    model: null,
    budget: { timeoutMs: 20_000 },
  };
  const pinned = process.env.CONSORT_ISOLATION;
  process.env.CONSORT_ISOLATION = 'bwrap';
  try {
    const result = await commandBackend({ command: TRY_WRITES(out) }).runTurn(request);
    expect(result.exit).toEqual({ kind: 'done' });
  } finally {
    if (pinned === undefined) delete process.env.CONSORT_ISOLATION;
    else process.env.CONSORT_ISOLATION = pinned;
  }
  expect(JSON.parse(await readFile(out, 'utf8'))).toMatchObject({ 'dep.js': 'EROFS' });
  expect(await readFile(path.join(locked, 'dep.js'), 'utf8')).toBe('original\n');
});

it("hides the local provider's data directory (its server.json holds the superuser password) from isolated commands", async () => {
  // createLocalProvider registers its data directory; here one of the test's own, with a stand-in secret.
  const dataDir = path.join(dir, 'data');
  await mkdir(dataDir);
  await writeFile(path.join(dataDir, 'server.json'), '{"password":"superuser-secret"}\n');
  hideFromIsolated(dataDir);
  const run = (readOnly: string[]) =>
    localProcessRunner.run({
      command: `cat ${dataDir}/server.json; ls -A ${dataDir}; echo done`,
      cwd: dir,
      env: childEnv(),
      isolate: true,
      readOnly,
      timeoutMs: 20_000,
      maxOutputBytes: 10_000,
    });
  const r = await run([]);
  expect(r.exitCode).toBe(0);
  expect(r.output).not.toContain('superuser-secret');
  // An empty directory in its place: no such file, nothing listed.
  expect(r.output.trim().split('\n')).toEqual([expect.stringMatching(/server\.json: No such file/), 'done']);
  // A command given a folder inside it keeps that folder (and so sees the directory): hiding never breaks a run.
  await mkdir(path.join(dataDir, 'given'));
  expect((await run([path.join(dataDir, 'given')])).output).toContain('superuser-secret');
});

it('the local provider registers its data directory: an isolated command cannot read its superuser password', async () => {
  const t = await ownLocalTestProvider();
  try {
    const state = path.join(t.dataDir!, 'server.json');
    const password = (JSON.parse(await readFile(state, 'utf8')) as { password: string }).password;
    expect(password.length).toBeGreaterThan(8);
    const r = await localProcessRunner.run({
      command: `cat ${state}; echo done`,
      cwd: dir,
      env: childEnv(),
      isolate: true,
      timeoutMs: 20_000,
      maxOutputBytes: 10_000,
    });
    expect(r.output).not.toContain(password);
    expect(r.output).toMatch(/No such file/);
  } finally {
    await t.cleanup();
  }
}, 120_000);

it("a protected folder (the TDD lane's git directory) is read-only to every isolated command, the migration child's included, until released", async () => {
  const gitDir = path.join(dir, 'repo.git');
  await mkdir(gitDir);
  await writeFile(path.join(gitDir, 'config'), '[core]\n');
  const said = path.join(dir, 'said');
  // A migration an agent wrote, trying to plant a clean filter in the repository's config.
  const migrations = path.join(dir, 'migrations');
  await mkdir(migrations);
  await writeFile(
    path.join(migrations, '1700000000000_plant.js'),
    `exports.up = () => { const fs = require('fs'); let r = 'written'; try { fs.appendFileSync(${JSON.stringify(path.join(gitDir, 'config'))}, '[filter "x"]\\n'); } catch (e) { r = e.code; } fs.appendFileSync(${JSON.stringify(said)}, r + '\\n'); };\nexports.down = () => {};\n`,
  );
  const db = `isolate_${process.pid}_${Date.now()}`;
  await withClient(SYSTEM_PG_URL, (c) => c.query(`CREATE DATABASE ${quoteIdent(db)}`));
  const migrate = () =>
    applyMigrations({
      databaseUrl: withDatabase(SYSTEM_PG_URL, db),
      dir: migrations,
      relativeTo: dir,
      direction: 'up',
      migrationsTable: 'pgmigrations',
    });
  const shell = () =>
    localProcessRunner.run({
      command: `echo '[alias]' >> ${gitDir}/config && echo written >> ${said} || echo refused >> ${said}`,
      cwd: dir,
      env: childEnv(),
      isolate: true,
      timeoutMs: 20_000,
      maxOutputBytes: 10_000,
    });
  const pinned = process.env.CONSORT_ISOLATION;
  process.env.CONSORT_ISOLATION = 'bwrap';
  try {
    const release = localProcessRunner.protect!([gitDir]);
    try {
      expect((await migrate()).ok).toBe(true);
      await shell();
    } finally {
      release();
    }
    expect(await readFile(said, 'utf8')).toBe('EROFS\nrefused\n');
    expect(await readFile(path.join(gitDir, 'config'), 'utf8')).toBe('[core]\n');
    // Released: the same command writes (the protection held, the command itself was able).
    await shell();
    expect(await readFile(said, 'utf8')).toBe('EROFS\nrefused\nwritten\n');
  } finally {
    if (pinned === undefined) delete process.env.CONSORT_ISOLATION;
    else process.env.CONSORT_ISOLATION = pinned;
    await withClient(SYSTEM_PG_URL, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(db)} WITH (FORCE)`));
  }
}, 60_000);
