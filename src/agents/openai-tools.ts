/**
 * The tools the `openai` backend offers its model: read and list files inside the workspace, write
 * files inside the role's `writes` scope, run the project's suite on the turn's branch and query
 * that branch read-only. A refusal is a message back to the model, never an exception: the model
 * can correct itself, and the conductor checks the resulting diff after the turn anyway.
 */
import { mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tool } from 'ai';
import type pg from 'pg';
import { z } from 'zod';
import { childEnv } from '../core/child-env.js';
import { matchesAny } from '../core/glob.js';
import { withClient } from '../db/sql.js';
import type { MigrationEngine } from '../migrations/engine.js';
import { applyMigrations } from '../migrations/runner.js';
import type { MigrationPlacement } from '../migrations/placement.js';
import { localProcessRunner } from '../process/runner.js';
import { branchEnv } from '../suite/pg-env.js';

export const MAX_READ_BYTES = 64 * 1024;
export const MAX_LIST_ENTRIES = 500;
export const MAX_SUITE_OUTPUT = 32 * 1024;
export const MAX_SQL_ROWS = 100;
const SQL_TIMEOUT_MS = 10_000;
const SKIP_DIRS = new Set(['.git', 'node_modules']);

export interface SuiteSettings {
  /** The project's suite command (config `suite.command`), run in the workspace. */
  command: string;
  /** The variable that receives the branch URL (config `suite.env`). */
  env: string;
  timeoutMs?: number;
  /**
   * The project's migrations (config `migrations.dir` relative to the workspace, and where they run and are recorded):
   * pending ones — such as one the agent just wrote — are applied to the turn's branch before the
   * suite runs, as the conductor's proof will apply them.
   */
  migrations?: { dir: string; placement: MigrationPlacement };
}

export interface ToolContext {
  workspace: string;
  writes: readonly string[];
  branchUrl: string;
  suite?: SuiteSettings;
  /** The engine the run applies the migrations in a directory with (the project's); default: the bundled one. */
  migrationEngine?: (dir: string) => Promise<MigrationEngine>;
  signal: AbortSignal;
}

type Resolved = { ok: true; abs: string; rel: string } | { ok: false; message: string };

function inside(root: string, abs: string): string | null {
  const rel = path.relative(root, abs);
  if (rel === '') return '';
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return rel.split(path.sep).join('/');
}

/** The nearest existing ancestor's real path: symlinks must not lead out of the workspace either. */
async function realAncestor(abs: string): Promise<string> {
  let current = abs;
  for (;;) {
    const real = await realpath(current).catch(() => null);
    if (real !== null) return path.join(real, path.relative(current, abs));
    const parent = path.dirname(current);
    if (parent === current) return abs;
    current = parent;
  }
}

export async function resolveInWorkspace(workspace: string, file: string): Promise<Resolved> {
  const root = await realpath(workspace);
  const abs = path.resolve(root, file);
  const rel = inside(root, abs);
  const real = rel === null ? null : inside(root, await realAncestor(abs));
  if (rel === null || real === null) return { ok: false, message: `refused: ${file} is outside the workspace` };
  return { ok: true, abs, rel };
}

async function listFiles(root: string, dir: string, out: string[]): Promise<boolean> {
  const entries = await readdir(path.join(root, dir), { withFileTypes: true });
  entries.sort((a, b) => a.name.localeCompare(b.name));
  for (const e of entries) {
    if (SKIP_DIRS.has(e.name)) continue;
    const rel = dir === '' ? e.name : `${dir}/${e.name}`;
    if (out.length >= MAX_LIST_ENTRIES) return false;
    if (e.isDirectory()) {
      if (!(await listFiles(root, rel, out))) return false;
    } else out.push(rel);
  }
  return true;
}

function bound(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[... ${text.length - max} characters dropped ...]`;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export async function readFileTool(ctx: ToolContext, file: string): Promise<string> {
  const r = await resolveInWorkspace(ctx.workspace, file);
  if (!r.ok) return r.message;
  try {
    return bound(await readFile(r.abs, 'utf8'), MAX_READ_BYTES);
  } catch (e) {
    return `error: cannot read ${r.rel}: ${message(e)}`;
  }
}

export async function listFilesTool(ctx: ToolContext, dir: string): Promise<string> {
  const r = await resolveInWorkspace(ctx.workspace, dir);
  if (!r.ok) return r.message;
  const info = await stat(r.abs).catch(() => null);
  if (!info?.isDirectory()) return `error: ${dir} is not a directory`;
  const out: string[] = [];
  const complete = await listFiles(r.abs, '', out);
  const prefix = r.rel === '' ? '' : `${r.rel}/`;
  const lines = out.map((f) => `${prefix}${f}`);
  if (!complete) lines.push(`[... more than ${MAX_LIST_ENTRIES} files; list a subdirectory ...]`);
  return lines.join('\n');
}

export async function writeFileTool(ctx: ToolContext, file: string, content: string): Promise<string> {
  const r = await resolveInWorkspace(ctx.workspace, file);
  if (!r.ok) return r.message;
  // Git's own files are not the project's: a hook written there would run at the conductor's next commit.
  if (r.rel.split('/').includes('.git')) return `refused: ${r.rel} is inside git's own files`;
  if (!matchesAny(r.rel, ctx.writes)) {
    return `refused: ${r.rel} is outside this role's write scope (${ctx.writes.join(', ') || 'nothing'})`;
  }
  try {
    await mkdir(path.dirname(r.abs), { recursive: true });
    await writeFile(r.abs, content);
    return `wrote ${r.rel} (${Buffer.byteLength(content)} bytes)`;
  } catch (e) {
    return `error: cannot write ${r.rel}: ${message(e)}`;
  }
}

/** Applies pending migrations to the turn's branch; a line for the model, or an error that stops the suite. */
async function migrateBranch(
  ctx: ToolContext,
  m: { dir: string; placement: MigrationPlacement },
): Promise<{ ok: boolean; line: string }> {
  const dir = path.join(ctx.workspace, m.dir);
  if (
    !(await stat(dir).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    return { ok: true, line: '' };
  let engine: MigrationEngine | undefined;
  try {
    engine = await ctx.migrationEngine?.(dir);
  } catch (e) {
    return { ok: false, line: `no node-pg-migrate to apply them with: ${message(e)}` };
  }
  const r = await applyMigrations({
    databaseUrl: ctx.branchUrl,
    dir,
    direction: 'up',
    ...m.placement,
    relativeTo: ctx.workspace,
    ...(engine ? { engine } : {}),
  });
  const applied = r.applied.map((a) => a.name);
  if (!r.ok) {
    const where = r.failed.name
      ? `${r.failed.name}${r.failed.file ? ` (${r.failed.file}${r.failed.error.line ? `:${r.failed.error.line}` : ''})` : ''}`
      : m.dir;
    return {
      ok: false,
      line: `migrations failed at ${where}: ${r.failed.error.message}${applied.length ? ` (applied before it: ${applied.join(', ')})` : ''}`,
    };
  }
  return { ok: true, line: applied.length ? `migrations applied to this turn's branch: ${applied.join(', ')}\n` : '' };
}

export async function runSuiteTool(ctx: ToolContext): Promise<string> {
  if (!ctx.suite) return 'error: no suite is configured for this agent';
  const { command, env, timeoutMs } = ctx.suite;
  const migrated = ctx.suite.migrations ? await migrateBranch(ctx, ctx.suite.migrations) : { ok: true, line: '' };
  if (!migrated.ok) return `suite not run: ${migrated.line}`;
  const run = await localProcessRunner.run({
    command,
    cwd: ctx.workspace,
    env: childEnv(branchEnv(ctx.branchUrl, [...new Set(['DATABASE_URL', env])])),
    timeoutMs: timeoutMs ?? 5 * 60_000,
    maxOutputBytes: MAX_SUITE_OUTPUT,
    signal: ctx.signal,
  });
  const how = run.timedOut
    ? 'timed out'
    : run.aborted
      ? 'aborted'
      : run.exitCode === 0
        ? 'passed (exit 0)'
        : `failed (exit ${run.exitCode ?? run.signal ?? '?'})`;
  return `${migrated.line}suite ${how}\n${run.output}`;
}

/**
 * One statement in a `BEGIN READ ONLY` transaction that is always rolled back. The extended query
 * protocol refuses several statements in one string, so `COMMIT; DELETE ...` cannot step out of it,
 * and a first query takes the snapshot, after which the transaction cannot be made read-write.
 */
export async function querySqlTool(ctx: ToolContext, sql: string): Promise<string> {
  try {
    return await withClient(
      ctx.branchUrl,
      async (client) => {
        await client.query('BEGIN READ ONLY');
        try {
          await client.query(`SET LOCAL statement_timeout = ${SQL_TIMEOUT_MS}`);
          await client.query('SELECT 1');
          // `queryMode` is honoured by pg but missing from its types.
          const query: pg.QueryConfig & { queryMode: 'extended' } = { text: sql, queryMode: 'extended' };
          const result = await client.query(query);
          const rows = (result.rows as unknown[]).slice(0, MAX_SQL_ROWS);
          const more =
            result.rows.length > MAX_SQL_ROWS ? `\n[... ${result.rows.length - MAX_SQL_ROWS} more rows ...]` : '';
          return bound(
            `${result.command ?? 'OK'} ${result.rowCount ?? 0}\n${JSON.stringify(rows, null, 1)}${more}`,
            MAX_READ_BYTES,
          );
        } finally {
          await client.query('ROLLBACK').catch(() => undefined);
        }
      },
      { applicationName: 'consort-agent' },
    );
  } catch (e) {
    return `error: ${message(e)}`;
  }
}

export function agentTools(ctx: ToolContext) {
  return {
    read_file: tool({
      description: 'Read a text file of the repository (path relative to the repository root).',
      inputSchema: z.object({ path: z.string() }),
      execute: ({ path: file }) => readFileTool(ctx, file),
    }),
    list_files: tool({
      description: 'List the files under a directory of the repository (relative path; "." for the root).',
      inputSchema: z.object({ path: z.string().default('.') }),
      execute: ({ path: dir }) => listFilesTool(ctx, dir),
    }),
    write_file: tool({
      description: `Create or replace a file (relative path). Only paths matching your write scope are allowed: ${ctx.writes.join(', ')}.`,
      inputSchema: z.object({ path: z.string(), content: z.string() }),
      execute: ({ path: file, content }) => writeFileTool(ctx, file, content),
    }),
    run_suite: tool({
      description: "Run the project's test suite against this turn's database branch and return its output.",
      inputSchema: z.object({}),
      execute: () => runSuiteTool(ctx),
    }),
    query_sql: tool({
      description:
        "Run one read-only SQL statement on this turn's database branch (rolled back; at most 100 rows returned).",
      inputSchema: z.object({ sql: z.string() }),
      execute: ({ sql }) => querySqlTool(ctx, sql),
    }),
  };
}
