/** docs/action.md's inputs and outputs tables are generated from action.yml and must be current. */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = path.join(ROOT, 'scripts', 'gen-action-docs.mjs');
const exec = promisify(execFile);

interface Generator {
  renderTables(yml: string): { inputs: string; outputs: string };
  updateDoc(doc: string, tables: { inputs: string; outputs: string }): string;
}

it('docs/action.md lists every input and output of action.yml, as the generator writes them', async () => {
  await expect(exec(process.execPath, [SCRIPT, '--check'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' } })).resolves.toBeDefined();
  const doc = await readFile(path.join(ROOT, 'docs', 'action.md'), 'utf8');
  const yml = await readFile(path.join(ROOT, 'action.yml'), 'utf8');
  for (const name of [...yml.matchAll(/^ {2}([a-z][a-z-]*):\s*$/gm)].map((m) => m[1]!)) expect(doc).toContain(`| \`${name}\` |`);
});

it('a changed default makes the document stale', async () => {
  const gen = (await import(SCRIPT)) as Generator;
  const yml = await readFile(path.join(ROOT, 'action.yml'), 'utf8');
  const doc = await readFile(path.join(ROOT, 'docs', 'action.md'), 'utf8');
  expect(gen.updateDoc(doc, gen.renderTables(yml))).toBe(doc);
  const changed = yml.replace(/\n {4}default: check\n/, '\n    default: verify\n');
  expect(changed).not.toBe(yml);
  expect(gen.updateDoc(doc, gen.renderTables(changed))).not.toBe(doc);
  expect(gen.renderTables('inputs:\n  x:\n    description: "a | b"\n    required: true\n').inputs).toContain('| `x` | required | a \\| b |');
});
