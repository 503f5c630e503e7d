/**
 * The embedded server's data directory under faults: one that cannot be written fails at once
 * with the fix (it used to retry a lock for a minute before EACCES), and a stale postmaster.pid
 * whose pid now belongs to another process is neither "already running" nor signalled by stop.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedServer, unwritableHint } from '../../src/branches/local/server.js';
import { isConsortError } from '../../src/core/errors.js';
import { processesRunning } from '../helpers/processes.js';
import { ownDataDir, query } from '../helpers/servers.js';

/** A directory nobody can write, root included (the tests run as root in CI containers). */
async function unwritableDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'consort-ro-'));
  if (process.getuid?.() === 0) {
    const r = spawnSync('chattr', ['+i', dir]);
    if (r.status !== 0) throw new Error(`chattr +i failed: ${r.stderr.toString()}`);
  } else {
    spawnSync('chmod', ['0555', dir]);
  }
  return dir;
}

async function writable(dir: string): Promise<void> {
  if (process.getuid?.() === 0) spawnSync('chattr', ['-i', dir]);
  else spawnSync('chmod', ['0755', dir]);
  await rm(dir, { recursive: true, force: true });
}

it('a data directory that cannot be written fails at once, naming it and the fix', async () => {
  const dir = await unwritableDir();
  try {
    const server = new EmbeddedServer(dir);
    const error = await server.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isConsortError(error, 'data-dir')).toBe(true);
    expect((error as Error).message).toContain(`data directory ${dir} is not writable`);
    expect((error as { hint?: string }).hint).toContain('CONSORT_DATA_DIR');
  } finally {
    await writable(dir);
  }
});

it('a data directory that cannot be created fails the same way', async () => {
  const parent = await unwritableDir();
  try {
    const error = await new EmbeddedServer(path.join(parent, 'data')).start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isConsortError(error, 'data-dir')).toBe(true);
  } finally {
    await writable(parent);
  }
});

it('a data directory under a file, or on a read-only disk, gets a fix that fits, not `chown`', async () => {
  // It said "Make it writable (e.g. `chown -R root …`)" whatever the cause: chown fixes neither.
  const parent = await mkdtemp(path.join(os.tmpdir(), 'consort-file-'));
  try {
    await writeFile(path.join(parent, 'file'), '');
    const dir = path.join(parent, 'file', 'data');
    const error = await new EmbeddedServer(dir).start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isConsortError(error, 'data-dir')).toBe(true);
    expect((error as Error).message).toContain(`data directory ${dir} is not writable`);
    const hint = (error as { hint?: string }).hint;
    expect(hint).toContain('A part of that path is a file, not a folder');
    expect(hint).not.toContain('chown');
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
  // The data directory itself a file, and one under /proc: Node's recursive mkdir spun there forever.
  for (const dir of [path.join(os.tmpdir(), `consort-file-${process.pid}`), `/proc/consort-data-${process.pid}`]) {
    if (!dir.startsWith('/proc')) await writeFile(dir, '');
    try {
      const error = await new EmbeddedServer(dir).start().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect({ dir, dataDirError: isConsortError(error, 'data-dir') }).toEqual({ dir, dataDirError: true });
      if (!dir.startsWith('/proc'))
        expect((error as { hint?: string }).hint).toContain('A part of that path is a file');
    } finally {
      if (!dir.startsWith('/proc')) await rm(dir, { force: true });
    }
  }
  expect(unwritableHint('EROFS', 'root', '/d')).toBe(
    'It is on a read-only file system: set CONSORT_DATA_DIR to a directory you can write to, on a writable one.',
  );
  expect(unwritableHint('EACCES', 'ada', '/d')).toContain('`chown -R ada /d`');
});

describe('a stale postmaster.pid naming another live process', () => {
  let dataDir: string;
  let other: ChildProcess;
  beforeAll(async () => {
    dataDir = await ownDataDir();
    // After a reboot the recorded pid is some other program's.
    other = spawn('sleep', ['300'], { stdio: 'ignore' });
    await mkdir(path.join(dataDir, 'pgdata'), { recursive: true });
    await writeFile(
      path.join(dataDir, 'pgdata', 'postmaster.pid'),
      `${other.pid}\n${path.join(dataDir, 'pgdata')}\n1700000000\n5432\n\n127.0.0.1\n`,
    );
  });
  afterAll(async () => {
    other.kill('SIGKILL');
    await new EmbeddedServer(dataDir).stop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('is not "running", stop signals nothing, and start starts the real server', async () => {
    const server = new EmbeddedServer(dataDir);
    expect((await server.status()).running).toBe(false);
    expect(await server.stop()).toBe(false);
    expect(other.exitCode).toBeNull();
    expect(other.signalCode).toBeNull();
    const info = await server.start();
    expect(info.startedNow).toBe(true);
    expect(info.pid).not.toBe(other.pid);
    expect(await query(info.url, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
    expect(await server.stop()).toBe(true);
    expect(other.exitCode).toBeNull();
  });
});

it('a server whose kept port another program took starts on another and says that saved URLs are stale', async () => {
  // It moved to a new port silently: the URL in .env (written by pairing) failed with ECONNREFUSED.
  const dataDir = await ownDataDir();
  const said: string[] = [];
  const server = new EmbeddedServer(dataDir, (line) => said.push(line));
  let squatter: net.Server | undefined;
  try {
    const first = await server.start();
    expect(await server.stop()).toBe(true);
    squatter = net.createServer();
    await new Promise<void>((resolve) => squatter!.listen(first.port, '127.0.0.1', resolve));
    said.length = 0;
    const again = await server.start();
    expect(again.port).not.toBe(first.port);
    expect(await query(again.url, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
    expect(said).toContainEqual(
      `Port ${first.port}, where it ran before, is taken by another program, so it listens on ${again.port} now. URLs saved before name the old port: \`consort pair\` rewrites .env, \`consort branch url <name>\` prints a branch's new one.`,
    );
  } finally {
    await new Promise((resolve) => (squatter ? squatter.close(resolve) : resolve(undefined)));
    await server.stop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}, 120_000);

/**
 * Replace a file the way a reader never sees half of it (PostgreSQL rewrites postmaster.pid in
 * place, without truncating, so a real reader never does either): a sibling, then a rename, keeping
 * the owner and mode the server gave it.
 */
async function writeAtomically(file: string, text: string): Promise<void> {
  const { uid, gid, mode } = await stat(file);
  const next = `${file}.next`;
  await writeFile(next, text, { mode: mode & 0o777 });
  await chown(next, uid, gid);
  await rename(next, file);
}

describe('a server another process is still starting', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await ownDataDir();
  });
  afterAll(async () => {
    await new EmbeddedServer(dataDir).stop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('is waited for until postmaster.pid says ready, not handed out while it refuses connections', async () => {
    await new EmbeddedServer(dataDir).start();
    // PostgreSQL writes postmaster.pid (pid alive) before it accepts connections; its 8th line
    // says `starting` until then. Put the running server back in that state, as a second
    // process sees it while the first one's pg_ctl waits.
    const pidFile = path.join(dataDir, 'pgdata', 'postmaster.pid');
    const lines = (await readFile(pidFile, 'utf8')).split('\n');
    expect(lines[7]?.trim()).toBe('ready');
    const ready = lines[7]!;
    lines[7] = 'starting';
    await writeAtomically(pidFile, lines.join('\n'));

    const events: string[] = [];
    const second = new EmbeddedServer(dataDir).start().then((info) => {
      events.push('start returned');
      return info;
    });
    // Let the second start() look (it reads the file and probes the pid) before the server is "ready".
    await new Promise((r) => setTimeout(r, 500));
    events.push('ready');
    lines[7] = ready;
    await writeAtomically(pidFile, lines.join('\n'));
    const info = await second;
    expect(events).toEqual(['ready', 'start returned']);
    expect(info.startedNow).toBe(false);
    expect(await query(info.url, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
  });
});

it("Ctrl-C during a first start's initdb leaves no password file in the temporary directory and no half-made pgdata; the next start just starts", async () => {
  // Before, the file initdb reads the password from was made in TMPDIR and removed in a `finally`
  // that Node's default SIGINT exit never runs: every interrupted first command left one there.
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'consort-initdb-int-'));
  const dataDir = path.join(tmp, 'data');
  const tmpdir = path.join(tmp, 'tmp');
  await mkdir(tmpdir);
  // As root, initdb runs as the postgres OS user, which must reach the data directory.
  await Promise.all([chmod(tmp, 0o755), chmod(tmpdir, 0o777)]);
  try {
    const child = spawn(process.execPath, [path.resolve('bin/consort.js'), 'db', 'start'], {
      env: { PATH: process.env.PATH, HOME: tmp, TMPDIR: tmpdir, CONSORT_DATA_DIR: dataDir, NO_COLOR: '1' },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    let ended = false;
    const closed = new Promise((resolve) => child.on('close', resolve)).then(() => (ended = true));
    // initdb is running (in a folder of its own beside pgdata), the password file made before it: interrupt now.
    const initdb = `--pgdata=${path.join(dataDir, '.pgdata-')}`;
    const initdbs = () => processesRunning((arg) => arg.startsWith(initdb));
    while (!ended && (await initdbs()) === 0) await new Promise((r) => setTimeout(r, 20));
    expect(ended).toBe(false);
    child.kill('SIGINT'); // as `timeout -s INT` sends it: to Consort alone (initdb runs on to its end)
    await closed;
    while ((await initdbs()) > 0) await new Promise((r) => setTimeout(r, 50));
    expect((await readdir(tmpdir)).filter((f) => f.startsWith('consort-initdb-'))).toEqual([]);
    // initdb finished on its own, but server.json (the password) was never written, and pgdata was
    // never made: the next start initialises afresh (it once said to remove pgdata by hand) and
    // removes what the interrupted one left.
    expect((await readdir(dataDir)).filter((f) => f === 'pgdata')).toEqual([]);
    const server = new EmbeddedServer(dataDir);
    await server.start();
    await server.stop();
    expect((await readdir(dataDir)).filter((f) => f.startsWith('.initdb-') || f.startsWith('.pgdata-'))).toEqual([]);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});

it('a start killed outright while it holds the start lock does not hold up the next start for a minute', async () => {
  const dataDir = await ownDataDir();
  const lock = path.join(dataDir, 'start.lock');
  const present = (file: string) =>
    stat(file).then(
      () => true,
      () => false,
    );
  try {
    const child = spawn(process.execPath, [path.resolve('bin/consort.js'), 'db', 'start'], {
      env: { PATH: process.env.PATH, HOME: os.tmpdir(), CONSORT_DATA_DIR: dataDir, NO_COLOR: '1' },
      stdio: 'ignore',
    });
    const closed = new Promise((resolve) => child.on('close', resolve));
    let ended = false;
    void closed.then(() => (ended = true));
    // Killed while the server it started comes up: it holds the lock then.
    while (!ended && !(await present(path.join(dataDir, 'pgdata', 'postmaster.pid'))))
      await new Promise((r) => setTimeout(r, 5));
    expect(ended).toBe(false);
    child.kill('SIGKILL');
    await closed;
    expect(await present(lock)).toBe(true);
    // The server it started comes up on its own; stopped, the next start needs the lock.
    const server = new EmbeddedServer(dataDir);
    while (!(await server.status()).running) await new Promise((r) => setTimeout(r, 20));
    await server.stop();
    const started = Date.now();
    const info = await server.start();
    expect(Date.now() - started).toBeLessThan(10_000); // it waited a minute for the dead start's lock
    expect(await query(info.url, 'SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
    await server.stop();
    expect(await present(lock)).toBe(false);
  } finally {
    await new EmbeddedServer(dataDir).stop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
}, 20_000);
