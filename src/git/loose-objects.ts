/**
 * git's object store for the in-process commit (commit-objects.ts): objects hashed, loose objects
 * read, checked and written as git writes them, and the packs' indexes asked whether they hold an id.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  linkSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import { exists, give, realFolders } from './in-process.js';

export function hashObject(type: string, body: Buffer): string {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/** Loose objects read and written, and the packs' indexes asked whether they hold an id. */
export class ObjectStore {
  private packs: { fd: number; count: number; fanout: Buffer }[] | null = null;
  constructor(private readonly dir: string) {
    const stat = lstatSync(dir, { throwIfNoEntry: false });
    if (!stat?.isDirectory()) give('objects is not a folder');
  }

  private loosePath(id: string): string {
    return path.join(this.dir, id.slice(0, 2), id.slice(2));
  }

  /** A loose object's body, checked against its id and type; null when it is not loose. */
  readLoose(id: string, type: string): Buffer | null {
    let raw: Buffer;
    try {
      raw = inflateSync(readFileSync(this.loosePath(id)));
    } catch {
      return null;
    }
    const nul = raw.indexOf(0);
    const header = raw.subarray(0, nul).toString('latin1');
    const body = raw.subarray(nul + 1);
    if (header !== `${type} ${body.length}` || hashObject(type, body) !== id)
      give(`object ${id} does not match its name`);
    return body;
  }

  has(id: string): boolean {
    return exists(this.loosePath(id)) || this.packed(id);
  }

  /** Whether a pack's index (version 2) lists the id: a binary search on its sorted names. */
  private packed(id: string): boolean {
    const want = Buffer.from(id, 'hex');
    for (const pack of this.openPacks()) {
      const first = want[0]!;
      let lo = first === 0 ? 0 : pack.fanout.readUInt32BE((first - 1) * 4);
      let hi = pack.fanout.readUInt32BE(first * 4);
      const name = Buffer.alloc(20);
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (readSync(pack.fd, name, 0, 20, 8 + 1024 + mid * 20) !== 20) break;
        const c = name.compare(want);
        if (c === 0) return true;
        if (c < 0) lo = mid + 1;
        else hi = mid;
      }
    }
    return false;
  }

  private openPacks(): { fd: number; count: number; fanout: Buffer }[] {
    if (this.packs !== null) return this.packs;
    this.packs = [];
    const dir = path.join(this.dir, 'pack');
    let names: string[] = [];
    try {
      names = readdirSync(dir).filter((n) => /^pack-[0-9a-f]{40}\.idx$/.test(n));
    } catch {
      return this.packs;
    }
    for (const n of names) {
      let fd: number;
      try {
        fd = openSync(path.join(dir, n), constants.O_RDONLY | constants.O_NOFOLLOW);
      } catch {
        continue;
      }
      const head = Buffer.alloc(8 + 1024);
      // Version 2 only (magic \377tOc, version 2); an older index is never asked: its objects are then written loose again, which is harmless.
      if (
        readSync(fd, head, 0, head.length, 0) !== head.length ||
        head.readUInt32BE(0) !== 0xff744f63 ||
        head.readUInt32BE(4) !== 2
      ) {
        closeSync(fd);
        continue;
      }
      const fanout = head.subarray(8);
      this.packs.push({ fd, count: fanout.readUInt32BE(255 * 4), fanout });
    }
    return this.packs;
  }

  /** A loose object written as git does: deflated into a temporary file of its folder, then linked to its name. */
  write(id: string, type: string, body: Buffer): void {
    if (exists(this.loosePath(id))) return;
    realFolders(this.dir, id.slice(0, 2));
    const data = deflateSync(Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]), { level: 1 });
    const temp = path.join(this.dir, id.slice(0, 2), `tmp_obj_${randomBytes(6).toString('hex')}`);
    const fd = openSync(temp, 'wx', 0o444);
    try {
      writeSync(fd, data);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temp, this.loosePath(id));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
        unlinkSync(temp);
        throw e;
      }
    }
    unlinkSync(temp);
  }

  close(): void {
    for (const p of this.packs ?? []) closeSync(p.fd);
    this.packs = null;
  }
}
