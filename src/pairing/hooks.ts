/**
 * Installing the pairing git hooks next to whatever is already there. Two ways, chosen by what
 * manages the repository's hooks:
 *  - `chain` (plain `.git/hooks`, a `core.hooksPath` directory, lefthook's scripts): an existing hook
 *    is renamed to `<hook>.pre-consort` and ours runs it first, keeping its exit status; uninstall
 *    renames it back, so it returns byte for byte with its mode.
 *  - `append` (husky, whose `.husky/_/*` are regenerated and find the user hook by `$0`): a marked
 *    block is appended to the user hook `.husky/<hook>`; the original bytes are kept under
 *    `.git/consort/hooks/` and restored on uninstall when the file was not edited since. The
 *    `.husky/` files are usually tracked, so the block names nothing of this machine: it runs
 *    `.git/consort/hooks/<hook>` (this clone's, untracked) when that is there, and that script
 *    holds this machine's Node and Consort. A committed block does nothing on a clone that did not
 *    install the hooks.
 * The hook itself only starts `hook-main.js`, which returns within milliseconds.
 */
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConsortError } from '../core/errors.js';
import { escapeRegExp } from '../core/regexp.js';
import { commonGitDir, git } from './git.js';
import { readLogTail, stateDir } from './state.js';

export const PAIRING_HOOKS = ['post-checkout', 'post-merge'] as const;
export type PairingHook = (typeof PAIRING_HOOKS)[number];
export type HookManager = 'husky' | 'lefthook' | 'core.hooksPath' | 'git';

const MARKER = 'consort-pairing-hook';
const BEGIN = '# >>> consort pairing (consort hooks install; remove with consort hooks uninstall) >>>';
const END = '# <<< consort pairing <<<';
const CHAINED = '.pre-consort';

export interface HookPlace {
  manager: HookManager;
  mode: 'chain' | 'append';
  /** The directory the hook files go in. */
  dir: string;
}

export interface HookRunner {
  node: string;
  entry: string;
}

/** The hook runner of this installation of Consort: this Node and the built hook-main.js beside this file. */
export function defaultRunner(): HookRunner {
  return { node: process.execPath, entry: fileURLToPath(new URL('./hook-main.js', import.meta.url)) };
}

const sq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * post-checkout's fast path, in plain sh so it costs a few small processes instead of a Node start
 * (which alone takes from ~40 ms on an idle machine to most of a second on a loaded one): when the
 * new git branch was paired before, its dotenv line (written by the background job to
 * `.git/consort/pairs/<branch>.env`: file, key, line) replaces the key's first assignment in the
 * dotenv file with the same rules as env-file.ts, through a temporary file and `mv`. Files it cannot
 * edit exactly that way (CRLF line ends, no final newline) are left to the Node job. Written for few
 * processes (git, tail, cp, awk, mv): on a busy machine every fork costs.
 */
// `${D}{…}` writes the shell's own `${…}` (parameter expansion) into the template.
const D = '$';
const FAST_PATH = String.raw`if [ "$3" = 1 ]; then (
  IFS='
'
  set -- $(git rev-parse --git-common-dir --abbrev-ref HEAD) && [ "$#" = 2 ] && [ "$2" != HEAD ] && c="$1/consort/pairs/$2.env" && [ -f "$c" ] || exit 0
  { IFS= read -r f && IFS= read -r k && IFS= read -r l; } < "$c" || exit 0
  [ -L "$f" ] && f=$(readlink -f "$f")
  case "$f" in */*) t="${D}{f%/*}/.${D}{f##*/}" ;; *) t=".$f" ;; esac
  t="$t.consort-$$.tmp"
  if [ -f "$f" ]; then
    if [ -s "$f" ]; then [ -z "$(tail -c 1 "$f")" ] || exit 0; fi
    cp -p "$f" "$t" || exit 0
    K="$k" L="$l" awk 'BEGIN { k = ENVIRON["K"]; l = ENVIRON["L"]; re = "^[ \t]*(export[ \t]+)?" k "[ \t]*="; done = 0; same = 0; bad = 0 }
      /\r$/ { bad = 1; exit }
      !done && $0 ~ re { match($0, /^[ \t]*(export[ \t]+)?/); n = substr($0, 1, RLENGTH) l; same = (n == $0); print n; done = 1; next }
      { print }
      END { if (bad) exit 3; if (!done) print l; else if (same) exit 4 }' "$f" > "$t" && mv -f "$t" "$f" || rm -f "$t"
  else
    (umask 077 && printf '%s\n' "$l" > "$t") && mv -f "$t" "$f"
  fi
) || true; fi`;

function runLine(runner: HookRunner, hook: PairingHook): string {
  // Never fails or holds up the git command: the Node part runs in the background, and a missing
  // Consort (moved, uninstalled) just skips pairing.
  const node = `[ -f ${sq(runner.entry)} ] && (${sq(runner.node)} ${sq(runner.entry)} ${hook} "$@" </dev/null >/dev/null 2>&1 &) || true`;
  return hook === 'post-checkout' ? `${FAST_PATH}\n${node}` : node;
}

function chainScript(runner: HookRunner, hook: PairingHook): string {
  return [
    '#!/bin/sh',
    `# ${MARKER}: pairs the database branch with the git branch (consort hooks install).`,
    `# \`consort hooks uninstall\` removes it and restores ${hook}${CHAINED} (the hook that was here before), if any.`,
    'status=0',
    `prev="$(dirname "$0")/${hook}${CHAINED}"`,
    'if [ -x "$prev" ]; then "$prev" "$@" || status=$?; fi',
    runLine(runner, hook),
    'exit $status',
    '',
  ].join('\n');
}

/** The block appended to a husky hook: the same on every machine (see the top of this file). */
function appendBlock(hook: PairingHook): string {
  const run = `(consort_hook="$(git rev-parse --git-common-dir 2>/dev/null)/consort/hooks/${hook}" && [ -x "$consort_hook" ] && exec "$consort_hook" "$@") || true`;
  return `${BEGIN}\n${run}\n${END}\n`;
}

/** This clone's script the husky block runs: `.git/consort/hooks/<hook>`. */
const cloneRunner = (gitDir: string, hook: PairingHook): string => path.join(stateDir(gitDir), 'hooks', hook);

function cloneRunnerScript(runner: HookRunner, hook: PairingHook): string {
  return [
    '#!/bin/sh',
    `# ${MARKER}: run by the consort block in the husky hook ${hook} of this clone (consort hooks install).`,
    runLine(runner, hook),
    '',
  ].join('\n');
}

async function readMaybe(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
}

export async function hookPlace(root: string): Promise<HookPlace> {
  const gitDir = await commonGitDir(root).catch((cause) => {
    throw new ConsortError('invalid-input', `${root} is not a git repository.`, {
      hint: 'Run consort hooks in a git working tree (git init first).',
      cause,
    });
  });
  const configured = (await git(root, ['config', '--get', 'core.hooksPath'], { userHooksPath: true })).stdout;
  if (configured === '') {
    const dir = path.join(gitDir, 'hooks');
    const lefthook =
      /lefthook/.test((await readMaybe(path.join(dir, 'post-checkout'))) ?? '') ||
      (await exists(path.join(root, 'lefthook.yml')));
    return { manager: lefthook ? 'lefthook' : 'git', mode: 'chain', dir };
  }
  const dir = path.resolve(root, configured.replace(/^~(?=\/)/, process.env.HOME ?? '~'));
  // husky 9 points core.hooksPath at .husky/_ (generated); husky 8 at .husky. User hooks live in .husky/.
  if (path.basename(dir) === '_' && path.basename(path.dirname(dir)) === '.husky')
    return { manager: 'husky', mode: 'append', dir: path.dirname(dir) };
  if (path.basename(dir) === '.husky') return { manager: 'husky', mode: 'append', dir };
  return { manager: 'core.hooksPath', mode: 'chain', dir };
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

const originalCopy = (gitDir: string, hook: string): string => path.join(stateDir(gitDir), 'hooks', `${hook}.orig`);
const NO_ORIGINAL = `${MARKER}: no file\n`;

export type InstallOutcome = 'installed' | 'updated' | 'unchanged';

export async function installHooks(
  root: string,
  runner: HookRunner = defaultRunner(),
): Promise<{ place: HookPlace; hooks: { hook: PairingHook; file: string; outcome: InstallOutcome }[] }> {
  const place = await hookPlace(root);
  const gitDir = await commonGitDir(root);
  await mkdir(place.dir, { recursive: true });
  const hooks = [];
  for (const hook of PAIRING_HOOKS) {
    const file = path.join(place.dir, hook);
    const current = await readMaybe(file);
    let outcome: InstallOutcome;
    if (place.mode === 'chain') {
      const script = chainScript(runner, hook);
      if (current === script) outcome = 'unchanged';
      else {
        outcome = current?.includes(MARKER) ? 'updated' : 'installed';
        if (current !== undefined && outcome === 'installed') await rename(file, `${file}${CHAINED}`);
        await writeFile(file, script);
      }
    } else {
      const block = appendBlock(hook);
      const script = cloneRunnerScript(runner, hook);
      const own = cloneRunner(gitDir, hook);
      const ownCurrent = await readMaybe(own);
      if (ownCurrent !== script) {
        await mkdir(path.dirname(own), { recursive: true });
        await writeFile(own, script, { mode: 0o755 });
        await chmod(own, 0o755);
      }
      // A block already there (committed by a teammate) with no script of this clone's yet: installed here now.
      if (current?.includes(block))
        outcome = ownCurrent === script ? 'unchanged' : ownCurrent === undefined ? 'installed' : 'updated';
      else if (current?.includes(BEGIN)) {
        outcome = 'updated';
        await writeFile(
          file,
          current.replace(new RegExp(`${escapeRegExp(BEGIN)}\\n[\\s\\S]*?${escapeRegExp(END)}\\n?`), block),
        );
      } else {
        outcome = 'installed';
        await mkdir(path.dirname(originalCopy(gitDir, hook)), { recursive: true });
        await writeFile(originalCopy(gitDir, hook), current ?? NO_ORIGINAL);
        const base = current ?? '';
        await writeFile(file, `${base}${base === '' || base.endsWith('\n') ? '' : '\n'}${block}`);
      }
    }
    // A husky hook keeps its mode (husky 9 does not need one); ours and new files must be executable.
    if (place.mode === 'chain' || current === undefined) await chmod(file, (await stat(file)).mode | 0o111);
    hooks.push({ hook, file, outcome });
  }
  return { place, hooks };
}

export type UninstallOutcome = 'removed' | 'restored' | 'not-installed';

export async function uninstallHooks(
  root: string,
): Promise<{ place: HookPlace; hooks: { hook: PairingHook; file: string; outcome: UninstallOutcome }[] }> {
  const place = await hookPlace(root);
  const gitDir = await commonGitDir(root);
  const hooks = [];
  for (const hook of PAIRING_HOOKS) {
    const file = path.join(place.dir, hook);
    const current = await readMaybe(file);
    let outcome: UninstallOutcome = 'not-installed';
    if (place.mode === 'chain' && current?.includes(MARKER)) {
      if (await exists(`${file}${CHAINED}`)) {
        await rename(`${file}${CHAINED}`, file);
        outcome = 'restored';
      } else {
        await rm(file);
        outcome = 'removed';
      }
    } else if (place.mode === 'append' && current?.includes(BEGIN)) {
      outcome = await removeBlock(file, current, await readMaybe(originalCopy(gitDir, hook)));
      await rm(originalCopy(gitDir, hook), { force: true });
    }
    if (place.mode === 'append') await rm(cloneRunner(gitDir, hook), { force: true });
    hooks.push({ hook, file, outcome });
  }
  return { place, hooks };
}

const BLOCK = new RegExp(`${escapeRegExp(BEGIN)}\\n[\\s\\S]*?${escapeRegExp(END)}\\n?`);

/** Put back the saved original when the file is exactly original + our block; else cut only the block. */
async function removeBlock(file: string, current: string, saved: string | undefined): Promise<UninstallOutcome> {
  const block = BLOCK.exec(current)?.[0] ?? '';
  const original = saved === NO_ORIGINAL ? '' : saved;
  const separator = original === undefined || original === '' || original.endsWith('\n') ? '' : '\n';
  if (original !== undefined && current === `${original}${separator}${block}`) {
    if (saved === NO_ORIGINAL) await rm(file);
    else await writeFile(file, original);
    return saved === NO_ORIGINAL ? 'removed' : 'restored';
  }
  // Edited since install: remove our block (and the newline we added before it), keep the rest.
  await writeFile(file, current.replace(new RegExp(`\\n?${BLOCK.source}`), ''));
  return 'removed';
}

export interface HookStatus {
  manager: HookManager;
  mode: 'chain' | 'append';
  dir: string;
  hooks: { hook: PairingHook; file: string; installed: boolean; chained: string | null; runnerPresent: boolean }[];
  log: string[];
  lastRun: unknown;
}

export async function hooksStatus(root: string, logLines = 20): Promise<HookStatus> {
  const place = await hookPlace(root);
  const gitDir = await commonGitDir(root);
  const hooks = [];
  for (const hook of PAIRING_HOOKS) {
    const file = path.join(place.dir, hook);
    const content = (await readMaybe(file)) ?? '';
    const installed = place.mode === 'chain' ? content.includes(MARKER) : content.includes(BEGIN);
    // husky's block runs this clone's script, which names the runner (a block from before names it itself).
    const own = place.mode === 'append' ? ((await readMaybe(cloneRunner(gitDir, hook))) ?? '') : '';
    const entry = /\[ -f '([^']+)' \]/.exec(`${own}\n${content}`)?.[1];
    hooks.push({
      hook,
      file,
      installed,
      chained: installed && place.mode === 'chain' && (await exists(`${file}${CHAINED}`)) ? `${file}${CHAINED}` : null,
      runnerPresent: entry !== undefined && (await exists(entry)),
    });
  }
  const lastRun = await readFile(path.join(stateDir(gitDir), 'last-run.json'), 'utf8').then(
    (t) => JSON.parse(t) as unknown,
    () => null,
  );
  return { ...place, hooks, log: await readLogTail(gitDir, logLines), lastRun };
}
