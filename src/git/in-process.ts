/**
 * What the modules of the in-process commit (commit-objects.ts) share: giving up — to `git commit`
 * (Fallback), or altogether (Refusal) — and the small checks on git's files every one of them makes.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import path from 'node:path';

/** Thrown inside to give up before the ref is moved; caught in commitIndex. */
class Fallback extends Error {}
export const give = (reason: string): never => {
  throw new Fallback(reason);
};

/** Thrown inside when giving up to `git commit` would not do either: it would write through a link, or a broken tree. */
export class Refusal extends Error {}
export const refuse = (reason: string): never => {
  throw new Refusal(reason);
};

export const ID = /^[0-9a-f]{40}$/;

export function exists(p: string): boolean {
  return lstatSync(p, { throwIfNoEntry: false }) !== undefined;
}

/** Every folder of `rel` under `base` a real folder (made when missing); a symlink or file on the way gives up. */
export function realFolders(base: string, rel: string): void {
  let at = base;
  for (const part of rel.split(/[\\/]/).filter((p) => p !== '' && p !== '.')) {
    at = path.join(at, part);
    const stat = lstatSync(at, { throwIfNoEntry: false });
    if (stat === undefined) mkdirSync(at, { mode: 0o777 });
    else if (!stat.isDirectory()) give(`${path.relative(base, at)} is not a folder`);
  }
}
