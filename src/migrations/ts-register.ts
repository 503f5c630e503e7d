/**
 * In the migrations' own process (apply-child.ts): register the project's TypeScript loader, as
 * ts-loader.ts chose it, for the engine's files. Apart from ts-loader.ts (which reads manifests with
 * zod and lockfiles through engine-pin.ts) so the child loads nothing of that before its first request.
 */
import { readFile } from 'node:fs/promises';
import { createRequire, register as registerHooks } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConsortError } from '../core/errors.js';
import type { MigrationEngine } from './engine.js';
import { projectRequire, SCRATCH_IN_MODULES } from './project-packages.js';

/** ts-node's default (`(?:^|/)node_modules/`), but not the check's scratch copies of the migrations. */
const TS_NODE_IGNORE = `(?:^|/)node_modules/(?!${SCRATCH_IN_MODULES.map((p) => p.replace(/[.]/g, '\\.')).join('/')}/)`;

type Registrar = (require: NodeJS.Require, workspace: string, esmEngine: boolean) => Promise<() => void>;

const REGISTRARS: Record<'tsx' | 'ts-node', Registrar> = {
  // The CommonJS hook for a `require()`ing runner (7.x), the ESM one for an `import()`ing one (8.x); both undo.
  async tsx(req, _workspace, esmEngine) {
    if (!esmEngine) return (req('tsx/cjs/api') as { register: () => () => void }).register();
    const esm = (await import(pathToFileURL(req.resolve('tsx/esm/api')).href)) as {
      register: () => () => Promise<void> | void;
    };
    const undo = esm.register();
    return () => {
      void undo();
    };
  },
  // As node-pg-migrate 7's `--tsconfig` does: ts-node's CommonJS hook with the project's tsconfig.
  // ts-node skips every file under a node_modules, and the check's copies of the migrations live in
  // one (SCRATCH_IN_MODULES): its default, except for those.
  async 'ts-node'(req, workspace, esmEngine) {
    const tsNode = req('ts-node') as { register: (o: object) => { enabled: (on: boolean) => boolean } };
    const tsconfig = path.join(workspace, 'tsconfig.json');
    const service = tsNode.register({
      transpileOnly: true,
      ignore: [TS_NODE_IGNORE],
      ...(await readFile(tsconfig).then(
        () => ({ project: tsconfig }),
        () => ({}),
      )),
    });
    // An import()ing runner needs ts-node's ESM hooks, which Node cannot remove again.
    if (esmEngine) registerHooks('ts-node/esm', pathToFileURL(path.join(workspace, '/')));
    return () => {
      service.enabled(false);
    };
  },
};

/** In the migrations' own process (apply-child.ts): register the project's loader for the engine's files. */
export async function registerProjectLoader(engine: Pick<MigrationEngine, 'dir' | 'tsLoader'>): Promise<void> {
  const wanted = engine.tsLoader;
  if (!wanted) return;
  const req =
    wanted.from !== undefined
      ? createRequire(path.join(wanted.from, 'package.json'))
      : await projectRequire({ dir: wanted.workspace, root: wanted.root ?? wanted.workspace }, wanted.name);
  if (!req)
    throw new ConsortError('config', `The project's ${wanted.name} cannot be loaded from ${wanted.workspace}.`, {
      hint: `Install it (npm i -D ${wanted.name}).`,
    });
  const esmEngine = (await packageType(engine.dir)) === 'module';
  await REGISTRARS[wanted.name](req, wanted.workspace, esmEngine);
  if (wanted.name === 'tsx' && !esmEngine) startTsxCompiler(req);
}

/** The `type` of the package at `dir` (its package.json's), or undefined when it has none or cannot be read. */
export async function packageType(dir: string): Promise<string | undefined> {
  const text = await readFile(path.join(dir, 'package.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    const type = typeof parsed === 'object' && parsed !== null ? (parsed as { type?: unknown }).type : undefined;
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}

/**
 * tsx's CommonJS hook compiles each migration with esbuild's synchronous API, whose first call
 * starts esbuild's worker thread and binary (a quarter of a second on a busy runner). Started here,
 * while the parent is still making branches, instead of inside the first migration's require().
 * Best effort: if it cannot start, the migration's own load reports why.
 */
function startTsxCompiler(req: NodeJS.Require): void {
  try {
    const fromTsx = createRequire(req.resolve('tsx/package.json'));
    (fromTsx('esbuild') as { transformSync: (code: string, options: object) => unknown }).transformSync('export {};', {
      loader: 'ts',
      format: 'cjs',
    });
  } catch {
    // the first migration's load starts it (and reports a failure)
  }
}
