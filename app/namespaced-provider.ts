/**
 * One cloud project (Lakebase or Neon), many repositories: every branch the App makes for a
 * repository is named `<namespace>-<name>` in the project (`gh<repository id>-pr-12`), so `pr-12`
 * of one repository never meets `pr-12` of another, and each repository sees only its own
 * branches. `main` is the project's default branch, the parent every repository forks from.
 *
 * Every method of the provider underneath is passed through, `verifyUrl` included: the URL a
 * check writes to is proven to reach its own branch, never its parent, whatever wraps it.
 */
import { ROOT_BRANCH } from '../src/core/names.js';
import { ConsortError } from '../src/core/errors.js';
import type { BranchProvider, BranchRecord, CreateBranchOptions } from '../src/ports/branch-provider.js';

export function namespacedProvider(inner: BranchProvider, namespace: string): BranchProvider {
  const prefix = `${namespace}-`;
  const outer = (name: string): string => (name === ROOT_BRANCH ? name : `${prefix}${name}`);
  const mine = (name: string): boolean => name === ROOT_BRANCH || name.startsWith(prefix);
  const local = (name: string): string => (name === ROOT_BRANCH ? name : name.slice(prefix.length));
  const record = (r: BranchRecord): BranchRecord => ({
    ...r,
    name: local(r.name),
    parent: r.parent === null ? null : local(r.parent),
  });
  const options = (o: CreateBranchOptions): CreateBranchOptions => {
    if (o.name === ROOT_BRANCH)
      throw new ConsortError(
        'invalid-input',
        `"${ROOT_BRANCH}" is the project's default branch; Consort never creates it.`,
      );
    return { ...o, name: outer(o.name), ...(o.parent !== undefined ? { parent: outer(o.parent) } : {}) };
  };
  const provider: BranchProvider = {
    name: inner.name,
    capabilities: () => inner.capabilities(),
    create: async (o) => record(await inner.create(options(o))),
    ensure: async (o) => {
      const { branch, outcome } = await inner.ensure(options(o));
      return { branch: record(branch), outcome };
    },
    get: async (name) => {
      const r = await inner.get(outer(name));
      return r ? record(r) : undefined;
    },
    list: async () => (await inner.list()).filter((b) => mine(b.name)).map(record),
    delete: async (name, o) => (await inner.delete(outer(name), o)).map(local),
    reset: async (name, o) => record(await inner.reset(outer(name), o)),
    connectionUri: (name) => inner.connectionUri(outer(name)),
    // The service's gc sweeps the whole project; report only this repository's part of it.
    gc: async (now) => {
      const r = await inner.gc(now);
      return {
        deleted: r.deleted.filter(mine).map(local),
        repaired: r.repaired,
        kept: r.kept.filter((k) => mine(k.name)).map((k) => ({ ...k, name: local(k.name) })),
      };
    },
    // Shared by every repository of the project: closed once, by the App.
    close: async () => undefined,
  };
  if (inner.confinedUri) {
    const confined = inner.confinedUri.bind(inner);
    provider.confinedUri = (name) => confined(outer(name));
  }
  if (inner.verifyUrl) {
    const verify = inner.verifyUrl.bind(inner);
    provider.verifyUrl = (name, url) => verify(outer(name), url);
  }
  return provider;
}
