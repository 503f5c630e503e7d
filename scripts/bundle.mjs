#!/usr/bin/env node
/**
 * npm run bundle [-- <outdir>] — the GitHub Action as one ESM file, dist/index.js (and
 * dist/apply-child.js, the process a repository's JS/TS migrations run in, dist/launcher-child.js,
 * the helper that starts Consort's own git commands, and dist/post.js, the post step that unmounts
 * the reflink XFS), plus
 * dist/licenses.txt with the license of every package inside it. GitHub runs dist/ without
 * node_modules, so everything is bundled except what cannot be: the native platform packages
 * (embedded PostgreSQL, Squawk), which are resolved or installed at run time and never imported
 * statically, and pg-native, the optional native driver pg only tries to load on request.
 * The built-in role prompts are copied to dist/roles/. The output is deterministic: `git diff --exit-code dist/` after a rebuild is the check-dist gate.
 */
import { build } from 'esbuild';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.resolve(root, process.argv[2] ?? 'dist');
const manifest = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));

await mkdir(outdir, { recursive: true });
const options = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24', // action.yml: runs.using node24, as GitHub's runners run it
  minify: true,
  legalComments: 'none', // they are all in licenses.txt, with the full license texts
  charset: 'utf8',
  // Bundled CommonJS packages call require() for Node's built-ins; ESM has no require of its own.
  banner: {
    js: "import { createRequire as __consortCreateRequire } from 'node:module';\nconst require = __consortCreateRequire(import.meta.url);",
  },
  // The pinned tool versions, read from package.json here because dist/ ships without it.
  define: {
    __CONSORT_MANIFEST__: JSON.stringify({
      version: manifest.version,
      dependencies: manifest.dependencies,
      peerDependencies: manifest.peerDependencies,
    }),
  },
  external: ['pg-native'],
  metafile: true,
  logLevel: 'warning',
};
const result = await build({
  ...options,
  entryPoints: ['src/action/index.ts'],
  outfile: path.join(outdir, 'index.js'),
});
// A repository's JS/TS migrations run in a child process of their own (src/migrations/isolated.ts looks next to index.js).
const child = await build({
  ...options,
  entryPoints: ['src/migrations/apply-child.ts'],
  outfile: path.join(outdir, 'apply-child.js'),
});
Object.assign(result.metafile.inputs, child.metafile.inputs);
// The post step (action.yml runs.post): unmounts the reflink XFS; loads the rest only when there is one.
const post = await build({
  ...options,
  entryPoints: ['src/action/post.ts'],
  outfile: path.join(outdir, 'post.js'),
});
Object.assign(result.metafile.inputs, post.metafile.inputs);
// The helper that starts Consort's own git commands (src/process/launcher.ts looks next to index.js).
const launcher = await build({
  ...options,
  entryPoints: ['src/process/launcher-child.ts'],
  outfile: path.join(outdir, 'launcher-child.js'),
});
Object.assign(result.metafile.inputs, launcher.metafile.inputs);

/** node_modules/<name or @scope/name>/… → the package's directory, relative to the root. */
function packageDirOf(input) {
  const parts = input.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return null;
  const size = parts[at + 1]?.startsWith('@') ? 2 : 1;
  return parts.slice(0, at + 1 + size).join('/');
}

const LICENSE_FILE = /^(licen[cs]e|copying)(\.(md|txt|markdown))?$/i;

/** Some packages state their license only in the README: take its License section. */
async function licenseFromReadme(dir, entries, declared) {
  const readme = entries.find((f) => /^readme(\.(md|markdown|txt))?$/i.test(f));
  const text = readme ? await readFile(path.join(root, dir, readme), 'utf8') : '';
  const section = /^#+\s*licen[cs]e\b[^\n]*\n([\s\S]*?)(?=^#+\s|(?![\s\S]))/im.exec(text)?.[1]?.trim();
  return section
    ? `(from the package's README)\n\n${section}`
    : `(no license text in the package; package.json declares ${declared ?? 'no license'})`;
}
const dirs = [...new Set(Object.keys(result.metafile.inputs).map(packageDirOf).filter(Boolean))];
const packages = [];
for (const dir of dirs) {
  const pkg = JSON.parse(await readFile(path.join(root, dir, 'package.json'), 'utf8'));
  const entries = (await readdir(path.join(root, dir))).sort();
  const file = entries.find((f) => LICENSE_FILE.test(f));
  const text = file
    ? (await readFile(path.join(root, dir, file), 'utf8')).trim()
    : await licenseFromReadme(dir, entries, pkg.license);
  packages.push({
    id: `${pkg.name}@${pkg.version}`,
    license: typeof pkg.license === 'string' ? pkg.license : 'see text',
    text,
  });
}
packages.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
const unique = packages.filter((p, i) => i === 0 || p.id !== packages[i - 1].id);
const header = `Third-party software bundled in dist/index.js (${unique.length} packages), with their licenses.\nGenerated by scripts/bundle.mjs; do not edit.\n`;
const body = unique
  .map((p) => `${'='.repeat(78)}\n${p.id} (${p.license})\n${'='.repeat(78)}\n\n${p.text}\n`)
  .join('\n');
await writeFile(path.join(outdir, 'licenses.txt'), `${header}\n${body}`);

// The built-in role prompts the TDD lane reads at run time (src/lanes/tdd/policy.ts looks next to index.js).
await mkdir(path.join(outdir, 'roles'), { recursive: true });
for (const file of (await readdir(path.join(root, 'roles'))).filter((f) => f.endsWith('.md')).sort()) {
  await writeFile(path.join(outdir, 'roles', file), await readFile(path.join(root, 'roles', file)));
}

const size = (await readFile(path.join(outdir, 'index.js'))).length;
console.log(
  `${path.relative(root, outdir) || '.'}/index.js: ${(size / 1024).toFixed(0)} KiB, ${unique.length} bundled packages (licenses.txt)`,
);
