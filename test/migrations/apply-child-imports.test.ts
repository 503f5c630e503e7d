/**
 * The migrations' child process (apply-child.ts) starts before the PR lane's first migration
 * request and is waited for by it: everything it imports before that request is on the check's
 * critical path. Its static imports stay within what applying needs (pg, Consort's runner); the
 * engine resolution (zod, yaml, npm), the bundled node-pg-migrate and the rest of Consort are
 * imported on use only (engine-load.ts, ts-register.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

/** Static value imports (`import type` and all-`type` specifier lists left out), from `entry` down. */
function staticGraph(entry: string): { files: string[]; packages: Set<string> } {
  const files: string[] = [];
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.includes(file)) return;
    files.push(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^(import|export)\s+([^;]*?)\s+from\s+'([^']+)';/gms)) {
      const [, , clause, spec] = m as unknown as [string, string, string, string];
      if (/^type\s/.test(clause)) continue;
      const names = /^\{([\s\S]*)\}$/.exec(clause.trim())?.[1];
      if (
        names !== undefined &&
        names
          .split(',')
          .map((n) => n.trim())
          .filter(Boolean)
          .every((n) => n.startsWith('type '))
      )
        continue;
      if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
      else if (!spec.startsWith('node:')) packages.add(spec);
    }
    for (const m of text.matchAll(/^import\s+'([^']+)';/gm)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
      else if (!spec.startsWith('node:')) packages.add(spec);
    }
  };
  visit(entry);
  return { files: files.map((f) => path.relative(src, f)), packages };
}

describe("the migration child's imports", () => {
  const graph = staticGraph(path.join(src, 'migrations/apply-child.ts'));

  it('loads no package before its first request but pg', () => {
    expect([...graph.packages].sort()).toEqual(['pg']);
  });

  it('loads neither the engine resolution nor the TypeScript loader choice (they are the parent’s)', () => {
    expect(graph.files).not.toContain('migrations/engine.ts');
    expect(graph.files).not.toContain('migrations/engine-pin.ts');
    expect(graph.files).not.toContain('migrations/ts-loader.ts');
    expect(graph.files).toEqual(expect.arrayContaining(['migrations/runner.ts', 'migrations/ts-register.ts']));
  });

  it('sees through a type-only import (the walker itself)', () => {
    // runner.ts imports MigrationEngine from engine.ts as a type only, and engine.ts reaches zod.
    expect(staticGraph(path.join(src, 'migrations/engine.ts')).packages).toContain('zod');
  });
});
