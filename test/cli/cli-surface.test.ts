/**
 * The CLI and its documentation agree (issue 16, "README and behaviour agree"): `--json` after
 * every command and not before it, the flags docs/cli.md lists for `check` are the ones `--help`
 * shows, with the defaults the docs name; and a stage with two problems is counted as one
 * failing stage with two problems, never as "1 blocking problem".
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { buildProgram, COMMAND_NAMES, globalOptionsOf, runCli, suggestionsFor } from '../../src/cli/main.js';
import { CONFIG_FILES } from '../../src/config/load.js';
import { renderCheckMarkdown } from '../../src/report/markdown.js';
import { renderCheckTerminal } from '../../src/report/terminal.js';
import { makeReport, passingStages } from '../fixtures/reports/build.js';
import { captureCli } from '../helpers/cli.js';

const io = { out: () => undefined, err: () => undefined };
const env = { PATH: process.env.PATH ?? '' };

function leaves(cmd: Command, prefix: string[] = []): [string[], Command][] {
  return cmd.commands.flatMap((c) =>
    c.commands.length === 0 ? [[[...prefix, c.name()], c] as [string[], Command]] : leaves(c, [...prefix, c.name()]),
  );
}

const cli = (args: string[]) => captureCli(args, env);

it('every command takes --json after its name, and --json before the command is a usage error (exit 2)', async () => {
  const all = leaves(buildProgram(io, env));
  expect(all.length).toBeGreaterThan(15);
  const without = all.filter(([, c]) => !c.options.some((o) => o.long === '--json')).map(([name]) => name.join(' '));
  expect(without).toEqual([]);
  const before = await cli(['--json', 'branch', 'list']);
  expect(before.code).toBe(2);
  expect(before.stderr).toMatch(/unknown option '--json'/);
});

it.each([
  [['dashboard', '--port', 'abc'], /--port takes a port number/],
  [['hooks', 'status', '--lines', 'abc'], /--lines takes a whole number/],
  [['branch', 'pool', 'main', '--size', '1000'], /--size takes a whole number from 0 to 64/],
  [['branch', 'pool', 'main', '--size', '-1'], /--size takes a whole number/],
  [['branch', 'create', 'x', '--ttl', '0s'], /must be positive\.\nWrite a length of time above zero/],
  [['-C', '/nonexistent-consort-dir', 'branch', 'list'], /no such directory/],
  [
    ['feature', 'new', 'x', '--from', '/nonexistent-consort-request.md'],
    /Cannot read the feature request .*: no such file/,
  ],
])('a bad value is a usage error (exit 2) that says what is wrong, before anything starts: %j', async (args, says) => {
  const r = await cli(args);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(says);
  expect(r.stderr).not.toMatch(/Initialising|Starting embedded/);
});

it('pair --export with --json is a usage error with a JSON error object, not an export line on stdout', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'consort-pair-export-'));
  try {
    const r = await cli(['-C', dir, 'pair', '--export', '--json']);
    expect(r.code).toBe(2);
    expect(r.stdout).not.toMatch(/^export /m);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'invalid-input', exitCode: 2 } });
    expect(r.stderr).toMatch(/--export and --json/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it("check's flags in docs/cli.md are the ones --help shows, and each default the docs name shows in --help", async () => {
  const doc = await readFile(path.join(process.cwd(), 'docs', 'cli.md'), 'utf8');
  const table = doc.slice(doc.indexOf('| flag | meaning |'));
  const rows = [...table.slice(0, table.indexOf('\n\n')).matchAll(/^\| (`--[^|]+) \| (.+) \|$/gm)];
  const documented = new Map<string, string>();
  for (const [, flags, meaning] of rows)
    for (const [, flag] of flags!.matchAll(/`(--[\w-]+)/g)) documented.set(flag!, meaning!);

  const check = buildProgram(io, env).commands.find((c) => c.name() === 'check')!;
  const help = check.helpInformation();
  const shown = check.options.map((o) => o.long!).filter((l) => l !== '--help');
  expect([...documented.keys()].sort()).toEqual(shown.sort());
  for (const [flag, meaning] of documented) {
    if (!/default/.test(meaning)) continue;
    const option = check.options.find((o) => o.long === flag)!;
    // The option's help entry (its description may wrap onto more lines).
    const entry = help.slice(help.indexOf(`  ${flag}`)).split(/\n {2}-/)[0]!;
    expect({ flag, saysDefault: /default/.test(entry) || option.defaultValue !== undefined }).toEqual({
      flag,
      saysDefault: true,
    });
  }
});

it('every --config option that names its default names every file loadConfig reads, .github/consort.yaml too', () => {
  const every = (cmd: Command, prefix: string[] = []): [string[], Command][] =>
    cmd.commands.flatMap((c) => [
      [[...prefix, c.name()], c] as [string[], Command],
      ...every(c, [...prefix, c.name()]),
    ]);
  const configs = every(buildProgram(io, env)).flatMap(([name, c]) =>
    c.options.filter((o) => o.long === '--config').map((o) => ({ command: name.join(' '), says: o.description })),
  );
  expect(configs.map((c) => c.command)).toEqual(expect.arrayContaining(['check', 'run', 'pair']));
  for (const { command, says } of configs.filter((c) => /default/.test(c.says)))
    expect({ command, missing: CONFIG_FILES.filter((f) => !says.includes(f)) }).toEqual({ command, missing: [] });
});

it('the global --namespace names its defaults in --help as docs/cli.md does, in the same order', async () => {
  const doc = await readFile(path.join(process.cwd(), 'docs', 'cli.md'), 'utf8');
  const defaults = ['database.namespace', 'CONSORT_NAMESPACE', 'project folder'];
  const namespace = buildProgram(io, env).options.find((o) => o.long === '--namespace')!;
  const documented = doc.slice(doc.indexOf('`--namespace <name>`')).split('`-C, --cwd')[0]!;
  for (const text of [namespace.description, documented.replace(/\s+/g, ' ')]) {
    const at = defaults.map((d) => text.indexOf(d));
    expect({ text, at }).toEqual({ text, at: [...at].sort((a, b) => a - b) });
    expect(at).not.toContain(-1);
  }
});

it('a plan stage with two problems is one failing stage with two problems, in the terminal and the comment', () => {
  const problem = (n: number) => ({
    kind: 'order-conflict' as const,
    file: `migrations/170000000000${n}_x${n}.sql`,
    name: `170000000000${n}_x${n}`,
    newestOnBase: '1700000000009_base',
    suggestedName: `170000000001${n}_x${n}`,
    suggestedFile: `migrations/170000000001${n}_x${n}.sql`,
  });
  const skipped = <T extends { status: string; summary: string }>(s: T): T => ({
    ...s,
    status: 'skipped',
    summary: 'not run: fix the migration plan first',
  });
  const stages = passingStages();
  const report = makeReport({
    conclusion: 'failure',
    stages: {
      plan: {
        ...stages.plan,
        status: 'failed',
        summary: '2 problems with the migration history',
        problems: [problem(1), problem(2)],
      },
      baseline: skipped(stages.baseline),
      migrations: skipped(stages.migrations),
      lint: { ...skipped(stages.lint), findings: [] },
      reversibility: { ...skipped(stages.reversibility), migrations: [] },
      schemaDiff: skipped(stages.schemaDiff),
      suite: skipped(stages.suite),
    },
  });
  for (const text of [renderCheckTerminal(report), renderCheckMarkdown(report)]) {
    expect(text).toContain('1 failing stage');
    expect(text).toContain('2 problems with the migration history');
    expect(text).not.toMatch(/1 blocking problem/);
  }
});

it("consort --help's line for branch names every branch subcommand", () => {
  const branch = buildProgram(io, env).commands.find((c) => c.name() === 'branch')!;
  const said = branch.description();
  const missing = branch.commands
    .map((c) => c.name())
    .filter((n) => n !== 'help' && !new RegExp(`\\b${n}\\b`).test(said));
  expect(missing).toEqual([]);
});

it("consort --help shows each command's required arguments as required, as the command's own usage does", async () => {
  // It listed `approve [options] [feature] [gate]`: both are required (approve's usage says so).
  let help = '';
  expect(await runCli(['--help'], { out: (s) => (help += s), err: (s) => (help += s) }, env)).toBe(0);
  const lines = help.split('\n').map((l) => l.trim());
  for (const cmd of buildProgram(io, env).commands.filter((c) => c.name() !== 'help')) {
    const line = lines.find((l) => l.startsWith(`${cmd.name()} `) || l === cmd.name());
    expect({ command: cmd.name(), listed: line !== undefined }).toEqual({ command: cmd.name(), listed: true });
    const args = cmd.registeredArguments.map((a) => a.name());
    for (const [, required] of cmd.usage().matchAll(/<([\w-]+)>/g))
      if (args.includes(required!))
        expect({ command: cmd.name(), line }).toEqual({
          command: cmd.name(),
          line: expect.stringContaining(`<${required}>`),
        });
  }
  expect(lines).toContainEqual(expect.stringMatching(/^approve \[options\] <feature> <gate> {2}approve a gate/));
  // Still wrapped to 80 columns: a longer term left the descriptions too narrow to wrap at all.
  expect(help.split('\n').filter((l) => l.length > 80)).toEqual([]);
});

it('COMMAND_NAMES lists exactly the top-level commands', () => {
  expect([...COMMAND_NAMES].sort()).toEqual(
    buildProgram(io, env)
      .commands.map((c) => c.name())
      .sort(),
  );
});

it('run through npx, suggested commands read `npx consort …`; JSON, paths and other words are left alone', async () => {
  const said: string[] = [];
  const npx = suggestionsFor({ out: (s) => said.push(s), err: (s) => said.push(s) }, { npm_command: 'exec' });
  npx.err('Stop it with: consort db stop');
  npx.err('See /var/cache/consort/main-1/log; `consort db stop` then `consort db start` retries.');
  npx.err('consort: the consort-db package; consort is fine; npx consort branch list');
  npx.out('{ "hint": "consort db stop" }');
  expect(said).toEqual([
    'Stop it with: npx consort db stop',
    'See /var/cache/consort/main-1/log; `npx consort db stop` then `npx consort db start` retries.',
    'consort: the consort-db package; consort is fine; npx consort branch list',
    '{ "hint": "consort db stop" }',
  ]);
  // Run by npm in a script too (npm run demo); installed globally and run directly, left as it is.
  const script: string[] = [];
  suggestionsFor({ out: (s) => script.push(s), err: (s) => script.push(s) }, { npm_command: 'run-script' }).err(
    'Stop it with: consort db stop',
  );
  expect(script).toEqual(['Stop it with: npx consort db stop']);
  const plain: string[] = [];
  suggestionsFor({ out: (s) => plain.push(s), err: (s) => plain.push(s) }, {}).err('Stop it with: consort db stop');
  expect(plain).toEqual(['Stop it with: consort db stop']);
  // Through runCli: help names the command as the user typed it.
  let help = '';
  await runCli(
    ['branch', '--help'],
    { out: (s) => (help += s), err: (s) => (help += s) },
    { ...env, npm_command: 'exec' },
  );
  expect(help).toContain('Usage: npx consort branch');
  // The top-level help too, as its commands' do.
  let top = '';
  await runCli(['--help'], { out: (s) => (top += s), err: (s) => (top += s) }, { ...env, npm_command: 'exec' });
  expect(top).toMatch(/^Usage: npx consort \[options\] \[command\]$/m);
});

it('suggested commands carry the provider options the command was given, so they act on the same branches', () => {
  const said: string[] = [];
  const io = { out: (s: string) => said.push(s), err: (s: string) => said.push(s) };
  suggestionsFor(io, { npm_command: 'exec' }, [
    '--provider',
    'postgres',
    '--namespace',
    'shop',
    'check',
    '--pr',
    '7',
  ]).out('✗ Database checks failed · database branch pr-7 · consort branch url pr-7');
  // Installed globally and run directly; options after the command (commander reads them there
  // too), `--opt=value`, a value that needs quoting; nothing after `--`; -C goes along.
  suggestionsFor(io, {}, [
    '-C',
    'app',
    'branch',
    'url',
    'x',
    '--namespace',
    "bob's",
    '--provider=neon',
    '--',
    '--namespace',
    'n',
  ]).err('List branches with `consort branch list`; npx consort db stop');
  suggestionsFor(io, {}, ['--provider', 'postgres', 'branch', '--help']).out('Usage: consort branch [options]');
  expect(said).toEqual([
    '✗ Database checks failed · database branch pr-7 · npx consort --provider postgres --namespace shop branch url pr-7',
    "List branches with `consort -C app --namespace 'bob'\\''s' --provider neon branch list`; npx consort -C app --namespace 'bob'\\''s' --provider neon db stop",
    'Usage: consort branch [options]',
  ]);
});

it('suggested commands carry the -C <dir> the command was given: pasted in the same shell, they act on the same project', async () => {
  // They dropped it: `consort -C ../shop check` suggested `consort branch url check-…`, which in
  // the folder the user stayed in looks at another project's server (or starts one).
  expect(globalOptionsOf(['-C', 'app', 'check', '--json', 'r.json'])).toBe('-C app');
  expect(globalOptionsOf(['--cwd', '../my shop', 'branch', 'list'])).toBe("-C '../my shop'");
  expect(globalOptionsOf(['--cwd=app', 'branch', 'list'])).toBe('-C app');
  expect(globalOptionsOf(['-Capp', 'branch', 'list'])).toBe('-C app');
  // Through runCli: a real suggestion (approve's usage hint, printed before anything is read).
  let said = '';
  const code = await runCli(['-C', 'my shop', 'approve'], { out: (s) => (said += s), err: (s) => (said += s) }, env);
  expect(code).toBe(2);
  expect(said).toContain("consort -C 'my shop' approve <feature> <gate> --as <name>");
});

it('the reference rows of dashboard, run and approve list every option their --help shows', async () => {
  // docs/cli.md's dashboard row left out --as and --no-branches; docs/tdd-lane.md's run and approve rows --json.
  const docs = (await readFile('docs/cli.md', 'utf8')) + (await readFile('docs/tdd-lane.md', 'utf8'));
  const program = buildProgram(io, env);
  for (const name of ['dashboard', 'run', 'approve']) {
    const row = docs.split('\n').find((l) => l.startsWith(`| \`consort ${name} `));
    expect(row).toBeDefined();
    const cmd = program.commands.find((c) => c.name() === name)!;
    const missing = cmd.options.map((o) => o.long!).filter((flag) => !row!.includes(flag));
    expect({ name, missing }).toEqual({ name, missing: [] });
  }
});
