/**
 * docs/action.md's inputs and outputs tables are generated from action.yml and must be current;
 * every workflow snippet names the Action by the repository package.json gives.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileAsync } from '../helpers/exec-file.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = path.join(ROOT, 'scripts', 'gen-action-docs.mjs');
const exec = execFileAsync;

interface Generator {
  renderTables(yml: string): { inputs: string; outputs: string };
  updateDoc(doc: string, tables: { inputs: string; outputs: string }): string;
}

it('docs/action.md lists every input and output of action.yml, as the generator writes them', async () => {
  await expect(
    exec(process.execPath, [SCRIPT, '--check'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' } }),
  ).resolves.toBeDefined();
  const doc = await readFile(path.join(ROOT, 'docs', 'action.md'), 'utf8');
  const yml = await readFile(path.join(ROOT, 'action.yml'), 'utf8');
  for (const name of [...yml.matchAll(/^ {2}([a-z][a-z-]*):\s*$/gm)].map((m) => m[1]!))
    expect(doc).toContain(`| \`${name}\` |`);
});

it('a changed default makes the document stale', async () => {
  const gen = (await import(SCRIPT)) as Generator;
  const yml = await readFile(path.join(ROOT, 'action.yml'), 'utf8');
  const doc = await readFile(path.join(ROOT, 'docs', 'action.md'), 'utf8');
  expect(gen.updateDoc(doc, gen.renderTables(yml))).toBe(doc);
  const changed = yml.replace(/\n {4}default: check\n/, '\n    default: verify\n');
  expect(changed).not.toBe(yml);
  expect(gen.updateDoc(doc, gen.renderTables(changed))).not.toBe(doc);
  expect(gen.renderTables('inputs:\n  x:\n    description: "a | b"\n    required: true\n').inputs).toContain(
    '| `x` | required | a \\| b |',
  );
});

it('README and docs name the Action and the repository as package.json does, with no placeholder left', async () => {
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { repository: { url: string } };
  const repo = /github\.com\/([\w.-]+\/[\w.-]+?)(?:\.git)?$/.exec(pkg.repository.url)?.[1];
  expect(repo).toBe('consort/consort');
  const vscode = JSON.parse(await readFile(path.join(ROOT, 'vscode', 'package.json'), 'utf8')) as {
    repository: { url: string };
  };
  expect(vscode.repository.url).toBe(`https://github.com/${repo}`);
  const docs = [
    'README.md',
    'CONTRIBUTING.md',
    ...(await readdir(path.join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
  ];
  let uses = 0;
  for (const file of docs) {
    const text = await readFile(path.join(ROOT, file), 'utf8');
    expect({ file, placeholders: text.match(/<owner>|<this repository>/g) ?? [] }).toEqual({ file, placeholders: [] });
    for (const m of text.matchAll(/uses: ([\w.-]+\/consort)(@\S+)?/g)) {
      uses += 1;
      expect({ file, ref: `${m[1]}${m[2] ?? ''}` }).toEqual({ file, ref: `${repo}@v1` });
    }
  }
  expect(uses).toBeGreaterThanOrEqual(4); // README, docs/action.md (2), docs/tdd-lane.md (2)
});

it("README's install from a clone names the tarball npm pack writes and the repository package.json gives", async () => {
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
    repository: { url: string };
  };
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const tarballs = [...readme.matchAll(/consort-db-[\w.-]+?\.tgz/g)].map((m) => m[0]);
  expect(tarballs.length).toBeGreaterThanOrEqual(2);
  for (const t of tarballs) expect(t).toBe(`${pkg.name}-${pkg.version}.tgz`);
  expect(readme).toContain(`git clone ${pkg.repository.url.replace(/^git\+/, '')}`);
});
