/**
 * A project's own node-pg-migrate that differs from Consort's bundled one, as a project pinned to
 * 7.x has: `node_modules/node-pg-migrate` in the project with a version of its own, whose runner
 * writes a line to a file each time it runs and then applies with the bundled runner (the SQL is
 * node-pg-migrate's). The migrations' child process imports it from the project, so the file tells
 * which engine applied what.
 */
import { createRequire } from 'node:module';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface FakeEngine {
  version: string;
  /** The package's directory (`<project>/node_modules/node-pg-migrate`). */
  dir: string;
  /** One line per run of its runner: `<direction> <migrations directory>`. */
  uses(): Promise<string[]>;
}

export async function fakeProjectEngine(project: string, version = '7.9.1-project'): Promise<FakeEngine> {
  const dir = path.join(project, 'node_modules', 'node-pg-migrate');
  const log = path.join(project, 'node_modules', '.engine-uses');
  const bundled = pathToFileURL(createRequire(import.meta.url).resolve('node-pg-migrate')).href;
  await mkdir(dir, { recursive: true });
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'node-pg-migrate', version, type: 'module', main: 'index.js' }),
  );
  await writeFile(
    path.join(dir, 'index.js'),
    [
      "import { appendFileSync } from 'node:fs';",
      `import { runner as bundled } from ${JSON.stringify(bundled)};`,
      'export async function runner(options) {',
      `  appendFileSync(${JSON.stringify(log)}, options.direction + ' ' + options.dir + '\\n');`,
      '  return bundled(options);',
      '}',
      '',
    ].join('\n'),
  );
  await writeFile(log, '');
  return {
    version,
    dir,
    uses: async () => (await readFile(log, 'utf8')).split('\n').filter(Boolean),
  };
}
