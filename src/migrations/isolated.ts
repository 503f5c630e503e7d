/**
 * Run a repository's migration code where it cannot read Consort's secrets: a child Node process
 * (apply-child.ts) with a complete environment built from the allow-list (src/core/child-env.ts),
 * which applies the migrations exactly as this process would and sends the ApplyResult back over
 * IPC. The child's own output is kept only to explain a child that dies without answering. It
 * starts in a PID namespace of its own where one can be made (src/process/isolate.ts): it cannot
 * read Consort's `/proc/<ppid>/environ`, and whatever a migration started ends with it (else every
 * process carrying its marker is killed once it exits).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv, isCredentialName, isNeverPassed } from '../core/child-env.js';
import { projectDotenv, type ProjectDotenv } from './dotenv.js';
import type { ExpandRules } from './dotenv-expand.js';
import { ConsortError, type ErrorCode } from '../core/errors.js';
import { isolation } from '../process/isolate.js';
import type { MigrationEngine } from './engine.js';
import type { ApplyOptions, ApplyResult } from './runner.js';

export interface ApplyRequest {
  /** null: only load the engine (and the TypeScript loader), so the first real request finds them ready. */
  options: Omit<ApplyOptions, 'engine'> | null;
  /** The engine to load in the child (null: the bundled one). */
  engine: Omit<MigrationEngine, 'runner'> | null;
  /** Keep the connection for the next request on the same URL (see MigrationSession.apply). */
  keep?: boolean;
  /** With `options: null`: also load this directory's migrations as the engine will (apply-child.ts). */
  preload?: string;
  /** With `preload`: the tree that directory is in (its root; default: the directory itself). */
  tree?: string;
  /** The project's `.env` variables (migrations/dotenv.ts): set where the child's environment lacks them. */
  dotenv?: Record<string, string>;
  /** Then expand their `${VAR}` references by the project's dotenv-expand's rules (migrations/dotenv-expand.ts). */
  expandDotenv?: ExpandRules;
}

/** An apply, or: end the connection kept for this URL (null: every kept one). */
export type ChildRequest = ApplyRequest | { release: string | null };

/** The answer to a request, or (`running`) word of the migration it started: MigrationSession.apply's onRunning. */
export type ChildReply = { id?: number } & (
  | { running: string }
  | { ok: true; result: ApplyResult | null }
  | { ok: false; error: { code: ErrorCode | null; message: string; hint?: string } }
);

/** A request as sent: numbered, so replies to requests running side by side find their caller. */
export type ChildMessage = ChildRequest & { id: number };

const TAIL = 4000;
/** Request keys that are no database: a warm-up, and a release of every kept connection. */
const WARM = '\0warm';
const EVERY = '\0every';

/**
 * The child's script: next to this module when built (lib/, or dist/ where the Action's bundle has
 * it as its own file), else the built copy in lib/ (this module run from src/ by the tests).
 */
function childScript(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [
    path.join(here, 'apply-child.js'),
    path.join(here, '..', '..', 'lib', 'src', 'migrations', 'apply-child.js'),
  ];
  const found = candidates.find((c) => existsSync(c));
  if (!found) {
    throw new ConsortError(
      'internal',
      `Cannot find the migration runner's child script (looked at ${candidates.join(', ')}).`,
      {
        hint: 'Build Consort (npm run build), or reinstall it: lib/src/migrations/apply-child.js is missing.',
      },
    );
  }
  return found;
}

function childEngine(engine: MigrationEngine | undefined): ApplyRequest['engine'] {
  return engine
    ? {
        version: engine.version,
        source: engine.source,
        dir: engine.dir,
        ...(engine.entry ? { entry: engine.entry } : {}),
        ...(engine.tsLoader ? { tsLoader: engine.tsLoader } : {}),
        ...(engine.tsconfigPaths ? { tsconfigPaths: engine.tsconfigPaths } : {}),
      }
    : null;
}

/**
 * One child process that answers requests for as long as it is kept open: the PR lane keeps one for
 * a side's migrations instead of starting Node, node-pg-migrate and a TypeScript loader again for
 * every step. Requests on different databases run side by side in it (the PR branch's migrations,
 * reversibility's steps and the suite's branch each wait on their own database most of the time, as
 * the SQL-only path in Consort's own process does); requests on one database go one at a time, in
 * order. It is the repository's code either way; a child a migration ended (process.exit, a crash)
 * is replaced by a fresh one on the next request.
 */
export class MigrationChild {
  private child: ChildProcess | undefined;
  private output = '';
  /** Requests wait here, `first` ones ahead of the others, until nothing runs on their database. */
  private readonly waiting: { first: boolean; key: string; go: () => Promise<void> }[] = [];
  /** The databases (request keys) with a request in the child: one each. */
  private readonly busy = new Set<string>();
  private readonly idle: (() => void)[] = [];
  private nextId = 0;
  /** `close` was called: a preload asked after it is dropped. */
  private closing = false;
  /** A request on a database was made: a preload asked after it is dropped. */
  private asked = false;

  /**
   * `env`: variables the migration code sees besides the basics (ApplyOptions' `env`). `tree`: the
   * folder whose migrations it applies (a proof's tree, a sandbox's workspace); no other proof's
   * tree is in its sight (src/process/isolate.ts).
   */
  constructor(
    private readonly env: Readonly<Record<string, string>> = {},
    private readonly tree?: string,
  ) {}

  /** Start the process now and load `engine` in it, so the first `apply` does not wait for either. */
  warm(engine?: MigrationEngine): Promise<void> {
    return this.request({ options: null, engine: childEngine(engine) }, WARM).then(
      () => undefined,
      () => undefined, // the apply that follows reports what is wrong
    );
  }

  /**
   * Load `dir`'s migrations in the child as `engine` will (MigrationSession.preload), before the
   * first request that needs them: a warm-up, so every request on a database waits for it.
   */
  async preload(engine: MigrationEngine | undefined, dir: string, relativeTo?: string): Promise<void> {
    // Late: the run ended before its files were on disk (no child is started again for it), or a
    // request that loads them came first (a warm-up waits for every running request and holds back
    // those behind it: a long migration on one branch would stall the others' steps).
    if (this.closing || this.asked) return;
    // The files' top-level code runs now: it sees the .env the apply will.
    const dotenv = relativeTo === undefined ? undefined : await this.dotenvOf(relativeTo, dir);
    if (this.closing || this.asked) return;
    await this.request(
      {
        options: null,
        engine: childEngine(engine),
        preload: path.resolve(dir),
        ...(relativeTo === undefined ? {} : { tree: path.resolve(relativeTo) }),
        ...dotenvRequest(dotenv),
      },
      WARM,
    ).catch(() => undefined); // the apply that follows reports what is wrong
  }

  /** The `.env` variables of the tree at `root` for `dir`'s migrations, read once per tree and folder. */
  private readonly dotenvs = new Map<string, Promise<ProjectDotenv>>();
  private dotenvOf(root: string, dir: string): Promise<ProjectDotenv> {
    const key = `${path.resolve(root)}\0${path.resolve(dir)}`;
    let found = this.dotenvs.get(key);
    if (!found) {
      found = projectDotenv(root, dir).catch(() => ({ vars: {} }));
      this.dotenvs.set(key, found);
    }
    return found;
  }

  /** `first`: ahead of the requests waiting without it (the check's critical path: reversibility's steps). */
  async apply(
    options: ApplyOptions,
    how: { keep?: boolean; first?: boolean; onRunning?: (name: string) => void } = {},
  ): Promise<ApplyResult> {
    // The child was started with its environment: nothing of it travels with a request but the
    // project's .env, which node-pg-migrate's CLI loads into the running process too.
    const { engine, env: _env, ...rest } = options;
    const dotenv = rest.relativeTo === undefined ? undefined : await this.dotenvOf(rest.relativeTo, rest.dir);
    const result = await this.request(
      {
        options: {
          ...rest,
          dir: path.resolve(rest.dir),
          ...(rest.relativeTo ? { relativeTo: path.resolve(rest.relativeTo) } : {}),
        },
        engine: childEngine(engine),
        ...(how.keep ? { keep: true } : {}),
        ...dotenvRequest(dotenv),
      },
      rest.databaseUrl,
      how.first === true,
      how.onRunning,
    );
    if (result === null) throw new ConsortError('internal', 'The migration process answered without a result.');
    return result;
  }

  /** End the connection the child keeps for `databaseUrl` (every one without it); no child, nothing kept. */
  async release(databaseUrl?: string): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null || !child.connected) return;
    await this.request({ release: databaseUrl ?? null }, databaseUrl ?? EVERY, true).catch(() => undefined);
  }

  /**
   * End the process now, whatever runs in it: the requests in flight reject (their callers were
   * told which migration each had started). Let go of (the child exits at once unless a migration
   * holds its event loop), then killed a second later. The next request starts a fresh child.
   */
  stop(): void {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const kill = setTimeout(() => child.kill('SIGKILL'), 1000);
    kill.unref();
    child.once('exit', () => clearTimeout(kill));
    if (child.connected) child.disconnect();
    else child.kill('SIGKILL');
  }

  /** End the process (it exits even if a migration left a timer or a connection open). */
  async close(): Promise<void> {
    this.closing = true;
    if (this.busy.size > 0 || this.waiting.length > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (child.connected) child.disconnect();
    else child.kill();
    await exited;
  }

  /** `key`: the database the request works on (EVERY: all of them; WARM: none, the child's start). */
  private request(
    request: ChildRequest,
    key: string,
    first = false,
    onRunning?: (name: string) => void,
  ): Promise<ApplyResult | null> {
    if (key !== WARM && key !== EVERY) this.asked = true;
    return new Promise((resolve, reject) => {
      const entry = { first, key, go: () => this.send(request, onRunning).then(resolve, reject) };
      const at = first ? this.waiting.findIndex((w) => !w.first) : -1;
      if (at >= 0) this.waiting.splice(at, 0, entry);
      else this.waiting.push(entry);
      this.next();
    });
  }

  /**
   * Send every waiting request whose database is free, in order. A warm-up (the child starting and
   * loading its engine, which every request would wait for there anyway) and a release of every
   * kept connection run alone, and nothing passes them.
   */
  private next(): void {
    for (let i = 0; i < this.waiting.length;) {
      const entry = this.waiting[i]!;
      const alone = entry.key === EVERY || entry.key === WARM;
      const free = alone
        ? this.busy.size === 0
        : !this.busy.has(entry.key) && !this.busy.has(EVERY) && !this.busy.has(WARM);
      if (free) {
        this.waiting.splice(i, 1);
        this.busy.add(entry.key);
        void entry.go().finally(() => {
          this.busy.delete(entry.key);
          this.next();
        });
        if (alone) break;
        continue;
      }
      if (alone) break;
      i++;
    }
    if (this.busy.size === 0 && this.waiting.length === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  private start(): ChildProcess {
    // NODE_OPTIONS is the operator's (a TypeScript loader such as `--import tsx`, which TS migrations
    // needed in process too); the child is the repository's code either way, so it carries no secret.
    // The caller's project settings (this.env: migrationEnv) go under the isolation's own variables;
    // the credential-looking ones among them are those the project passes its code (suite.passEnv),
    // never the runner's or Consort's own.
    // In a PID namespace where one can be made; whatever a migration started ends with the child.
    // It applies one proof's migrations from that proof's tree, and sees no other proof's: GREEN's
    // JS migration could otherwise leave a file in RED's tree proven beside it, or in another
    // attempt's (src/process/isolate.ts).
    const sandbox = isolation(undefined, this.tree === undefined ? {} : { seesProofTree: this.tree });
    const passed = Object.keys(this.env).filter((k) => isCredentialName(k) && !isNeverPassed(k));
    // The TypeScript loaders compile in memory only. Their disk caches are every process's of the
    // user — tsx's `<tmp>/tsx-<uid>` (a week), jiti's (node-pg-migrate 9) the `node_modules/.cache/jiti`
    // of the folder this child starts in (the pull request's checkout, the TDD work tree), else
    // `<tmp>/jiti` — keyed by a migration's path (and text), and read back with the code unchecked: a TDD
    // agent that knows the path of RED's proof tree could put code of its own under its migrations'
    // keys, and the proof would apply that instead of the commit's (test/security/compile-cache.test.ts).
    const env = childEnv(
      { ...this.env, ...sandbox.env, TSX_DISABLE_CACHE: '1', JITI_FS_CACHE: 'false' },
      { secrets: ['NODE_OPTIONS', ...passed] },
    );
    const [program, args] = sandbox.argv(`exec ${shellQuote(process.execPath)} ${shellQuote(childScript())}`);
    const child = spawn(program, args, { env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    child.once('exit', () => sandbox.sweep());
    this.output = '';
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-TAIL);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('error', () => undefined); // reported by the request that was waiting
    // One listener per request in flight (a few at most: one per database).
    child.setMaxListeners(0);
    return child;
  }

  private async send(request: ChildRequest, onRunning?: (name: string) => void): Promise<ApplyResult | null> {
    let child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null || !child.connected)
      child = this.child = this.start();
    const live = child;
    const id = ++this.nextId;
    const reply = await new Promise<ChildReply | undefined>((resolve, reject) => {
      const onMessage = (m: unknown): void => {
        if ((m as { id?: unknown } | null)?.id !== id) return;
        if ('running' in (m as ChildReply)) return void onRunning?.((m as { running: string }).running);
        done();
        resolve(m as ChildReply);
      };
      const onExit = (): void => {
        done();
        resolve(undefined);
      };
      const onError = (e: Error): void => {
        done();
        reject(e);
      };
      const done = (): void => {
        live.off('message', onMessage);
        live.off('exit', onExit);
        live.off('error', onError);
      };
      live.on('message', onMessage);
      live.once('exit', onExit);
      live.once('error', onError);
      live.send({ ...request, id } satisfies ChildMessage);
    });
    if (reply === undefined) {
      // Let the output of a child that died arrive before quoting it.
      await new Promise((resolve) => setImmediate(resolve));
      throw new ConsortError(
        'internal',
        `The migration process ended without a result: ${this.output.trim() || 'no output'}`,
        {
          hint: 'A migration may have ended the process (process.exit) or crashed Node; run it alone to see.',
        },
      );
    }
    if ('running' in reply) throw new ConsortError('internal', 'The migration process answered out of turn.');
    if (reply.ok) return reply.result;
    const { code, message, hint } = reply.error;
    if (code === null) throw new Error(message);
    throw new ConsortError(code, message, hint === undefined ? {} : { hint });
  }
}

/** A request's `.env` part: nothing when the file gives nothing. */
function dotenvRequest(dotenv: ProjectDotenv | undefined): Pick<ApplyRequest, 'dotenv' | 'expandDotenv'> {
  if (dotenv === undefined || Object.keys(dotenv.vars).length === 0) return {};
  return { dotenv: dotenv.vars, ...(dotenv.expand ? { expandDotenv: dotenv.expand } : {}) };
}

/** Apply once, in a child of its own. */
export async function applyInChild(options: ApplyOptions): Promise<ApplyResult> {
  const child = new MigrationChild(options.env, options.relativeTo ?? options.dir);
  try {
    return await child.apply(options);
  } finally {
    await child.close();
  }
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}
