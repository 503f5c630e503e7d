/**
 * git's global configuration, pinned for a TDD run. The conductor's git calls read `~/.gitconfig`
 * (and what it includes, and the excludes and attributes files it names) from the home folder every
 * child gets, and untrusted code of the run can write there: a suite, or a migration applied to a
 * branch forked ahead while no turn guard watches. A clean filter planted in `~/.gitconfig` would
 * run in the conductor's next `git add`, outside any sandbox. So at the run's start the global
 * configuration is read once, includes resolved, and written to a file of its own in a folder
 * isolated commands cannot see, with copies of the excludes and attributes files it names; from
 * then on every git call of the process reads that file as its global configuration
 * (GIT_CONFIG_GLOBAL, src/git/safe.ts).
 */
import { chmod, copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConsortError } from '../core/errors.js';
import { foundProgram } from '../process/host-programs.js';
import { hideFromIsolated } from '../process/isolate.js';
import { git } from './exec.js';
import { pinGlobalFile } from './safe.js';

/**
 * The copies pins hold now. Hidden from isolated commands under bubblewrap only: without it a suite
 * (the same user) can write them, so the guard compares them with git's global files (guard.ts).
 */
const copies = new Set<string>();

/** The configuration files and excludes and attributes copies of the pins held now (absolute paths). */
export function pinnedCopies(): string[] {
  return [...copies];
}

/** Keys the pin leaves out: includes (their entries are listed already) and the files it copies. */
function dropped(key: string): boolean {
  if (key === 'include.path' || (key.startsWith('includeif.') && key.endsWith('.path'))) return true;
  return key === 'core.excludesfile' || key === 'core.attributesfile';
}

const quoted = (text: string): string =>
  `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;

/**
 * Entries as git's configuration file syntax, in order: `section.sub.section.name` is `name` in
 * `[section "sub.section"]` (git lowercases section and name, keeps the subsection's case); every
 * value quoted, with git's escapes.
 */
export function configText(entries: readonly (readonly [string, string])[]): string {
  let out = '';
  for (const [key, value] of entries) {
    const first = key.indexOf('.');
    const last = key.lastIndexOf('.');
    const section = key.slice(0, first);
    // A subsection knows two escapes only (\\ and \"), and holds no newline.
    const sub = key
      .slice(first + 1, last)
      .replace(/\\/g, '\\\\')
      .replace(/"/g, '\\"');
    const header = first === last ? `[${section}]` : `[${section} "${sub}"]`;
    out += `${header}\n\t${key.slice(last + 1)} = ${quoted(value)}\n`;
  }
  return out;
}

/** `git config --list -z`: `key\nvalue\0`, or `key\0` for a key without a value (true). */
export function parseConfigList(text: string): [string, string][] {
  return text
    .split('\0')
    .filter(Boolean)
    .map((entry) => {
      const nl = entry.indexOf('\n');
      return nl < 0 ? [entry, 'true'] : [entry.slice(0, nl), entry.slice(nl + 1)];
    });
}

/**
 * Keys whose value is a command git starts through the shell, by PATH (a clean filter from
 * `git lfs install`, a textconv, an ssh command, a gpg program).
 */
const COMMAND_KEY =
  /^(filter\..+\.(clean|smudge|process)|diff\..+\.(textconv|command)|merge\..+\.driver|core\.sshcommand|gpg(\..+)?\.program)$/;

/**
 * A command's leading program by the absolute path PATH named when Consort started
 * (src/process/host-programs.ts), not whatever git's PATH names when it runs it: untrusted code of
 * the run can plant a `git-lfs` in `~/.local/bin`, and an agent can commit the `.gitattributes`
 * that applies the filter to any file the conductor adds.
 */
export function pinnedCommand(key: string, value: string): string {
  if (!COMMAND_KEY.test(key)) return value;
  const m = /^(\s*)([A-Za-z0-9._+-]+)(?=\s|$)/.exec(value);
  if (m === null) return value;
  const found = foundProgram(m[2]!);
  if (found === null) return value;
  const word = /^[A-Za-z0-9._+/-]+$/.test(found) ? found : `'${found.replace(/'/g, `'\\''`)}'`;
  return `${m[1]}${word}${value.slice(m[0].length)}`;
}

/**
 * Read the global configuration as git sees it from `top` and pin it for every git call of this
 * process; the returned release unpins it and removes the copies.
 */
export async function pinGlobalConfig(top: string): Promise<() => Promise<void>> {
  const home = process.env.HOME || os.homedir();
  const real = { realGlobalConfig: true, env: { HOME: home } } as const;
  // GIT_CONFIG_GLOBAL is git 2.32's: an older git ignores it and reads the home folder's files
  // live, so the pin would hold nothing. Fail rather than pretend.
  const version = /^git version (\d+)\.(\d+)/.exec((await git(top, ['version'], real)).stdout);
  if (version === null || Number(version[1]) * 1000 + Number(version[2]) < 2032) {
    throw new ConsortError(
      'tools-unavailable',
      `A TDD run needs git 2.32 or newer (${version === null ? 'no git version found' : `git ${version[1]}.${version[2]} found`}): older versions read ~/.gitconfig live, which the run's untrusted code can write.`,
      { hint: 'Install git 2.32 or newer.' },
    );
  }
  const listed = await git(top, ['config', '--global', '--includes', '--list', '-z'], real);
  // Exit 1 with nothing listed: there is no global configuration.
  const entries =
    listed.code === 0
      ? parseConfigList(listed.stdout)
          .filter(([key]) => !dropped(key))
          .map(([key, value]): [string, string] => [key, pinnedCommand(key, value)])
      : [];
  const folder = await mkdtemp(path.join(os.tmpdir(), 'consort-gitconfig-'));
  await chmod(folder, 0o700);
  hideFromIsolated(folder);
  // The files git reads by default when no key names them (XDG_CONFIG_HOME never reaches git's children).
  const defaults = { excludesfile: '.config/git/ignore', attributesfile: '.config/git/attributes' };
  for (const [name, fallback] of Object.entries(defaults)) {
    const named = await git(top, ['config', '--global', '--includes', '--path', '--get', `core.${name}`], real);
    const source = named.code === 0 ? path.resolve(home, named.stdout.trim()) : path.join(home, fallback);
    const copy = path.join(folder, name);
    const kept = await copyFile(source, copy).then(
      () => true,
      () => false,
    );
    entries.push([`core.${name}`, kept ? copy : '/dev/null']);
    if (kept) copies.add(copy);
  }
  const file = path.join(folder, 'gitconfig');
  await writeFile(file, configText(entries), { mode: 0o600 });
  copies.add(file);
  const unpin = pinGlobalFile(file);
  return async () => {
    unpin();
    for (const name of [...Object.keys(defaults), 'gitconfig']) copies.delete(path.join(folder, name));
    await rm(folder, { recursive: true, force: true });
  };
}
