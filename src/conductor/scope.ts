/**
 * The scope check after every turn: the paths a turn changed must lie inside its role's `writes`,
 * and a few rules hold whatever the configuration says, because they are what makes a green
 * result mean something:
 *
 * - the conductor's own records (state, gates, turns, events, cycles), of every feature, are never an agent's to write;
 * - during the build only the navigator's RED turn may change test files, and it may change nothing else;
 * - test files frozen at RED may not change in GREEN, REFACTOR or REVIEW (by path or by content hash);
 * - the test harness (runner configs, setup files, module doubles, snapshots, fixtures, package.json's
 *   runner keys, data files a frozen test reads) is test-owned: only the navigator changes it, in RED;
 * - Consort's configuration, migrations already on the base and the seed are no agent's to change;
 * - nor is a `node_modules` (an agent that stops ignoring it would commit the runner the proof runs),
 *   nor compiled Python (`__pycache__/`, `*.pyc`: an unchecked-hash `.pyc` is imported in place of its source);
 * - no agent's module stands beside another of the same name (`src/sum.js` beside `src/sum.ts`: the
 *   runner loads one, the build the other);
 * - no agent's link leads out of the workspace or into `.git` (the proof would run what it leads to),
 *   nor from a test-owned path to one that is not (the driver could change what the test reads);
 * - a REVIEW turn writes its review file and nothing else;
 * - no git repository of an agent's own inside the workspace (a gitlink's config runs in the conductor's git);
 * - nothing outside the workspace, nothing under `.git/` and none of git's global files in the home folder
 *   (`~/.gitconfig`…; src/git/guard.ts reports those);
 * - what no role may write is judged in either case (`JEST.CONFIG.JS`, `Node_Modules/`, `.GitHub/Consort.yml`,
 *   `test/Sum.test.js` beside a frozen `test/sum.test.js`): a case-insensitive file system (macOS, Windows)
 *   opens such a name as the harness file, the dependency or the configuration, or checks it out over the test.
 */
import { matchesAny } from '../core/glob.js';
import type { FileChange } from './events.js';
import type { Role } from './roles.js';
import type { Policy, TurnStep } from './state.js';

export interface Refusal {
  path: string;
  why: string;
}

export const CONDUCTOR_FILES = [
  'state.json',
  'state.json.*',
  'gates.json',
  'turns.jsonl',
  'events.jsonl',
  'cycles/**',
  'transcripts/**',
];

/**
 * A proof links the pristine install at `node_modules` only where the commit has nothing there
 * (src/lanes/tdd/clean-tree.ts): one an agent commits (`.gitignore` is the driver's) would be run
 * instead, a patched runner with it. Neither a folder of that name nor a link.
 */
export const DEPENDENCY_PATHS = ['**/node_modules', '**/node_modules/**'];

/**
 * Compiled Python. A `.pyc` in `__pycache__` written with unchecked-hash invalidation (PEP 552,
 * `py_compile … invalidation_mode=UNCHECKED_HASH`) is imported in place of its `.py` whatever the
 * source says, and a sourceless `x.pyc` is imported where no `x.py` is: a driver that stops ignoring
 * `__pycache__` commits a stub nobody reads in the diff, and the proof runs it.
 */
export const COMPILED_PATHS = ['**/__pycache__', '**/__pycache__/**', '**/*.pyc', '**/*.pyo'];

export interface ScopeInput {
  policy: Policy;
  role: Role;
  step: TurnStep;
  item: string | null;
  changes: readonly FileChange[];
  /** Frozen test files and their hashes at RED. */
  frozen: Readonly<Record<string, string>>;
  /** Their hashes after the turn. */
  hashes: Readonly<Record<string, string | null>>;
  /** Paths whose test-owned content changed, as the driver found (package.json runner keys, data files a frozen test reads). */
  testOwned?: readonly string[];
  /** Changed paths that are links out of the workspace or into `.git` (src/lanes/tdd/harness.ts linksLeaving). */
  links?: readonly string[];
  /** Where each changed link inside the workspace leads (a folder with a trailing `/`; src/lanes/tdd/harness.ts linkTargets). */
  linkTargets?: Readonly<Record<string, string>>;
  /** Changed modules that stand beside another of the same name (src/lanes/tdd/harness.ts modulesShadowing). */
  shadows?: readonly string[];
}

const BUILD_STEPS: ReadonlySet<TurnStep> = new Set(['red', 'green', 'refactor', 'review']);

export function reviewFile(policy: Policy, item: string): string {
  return `${policy.featureDir}/reviews/${item}.json`;
}

/** Matched in either case: see the header. */
const ANY_CASE = { nocase: true } as const;

function isHarness(input: ScopeInput, path: string): boolean {
  return matchesAny(path, input.policy.harness ?? []) || (input.testOwned ?? []).includes(path);
}

/** A harness path only in another case (`Jest.Config.js`): what a case-insensitive file system opens as one. */
function isHarnessInAnotherCase(input: ScopeInput, path: string): boolean {
  return !isHarness(input, path) && matchesAny(path, input.policy.harness ?? [], ANY_CASE);
}

/** A frozen test's path in another case: checked out over it on a case-insensitive file system. */
function frozenInAnotherCase(input: ScopeInput, path: string): string | undefined {
  const lower = path.toLowerCase();
  return Object.keys(input.frozen).find((f) => f !== path && f.toLowerCase() === lower);
}

export function isTestPath(policy: Policy, path: string): boolean {
  return matchesAny(path, policy.tests);
}

/** A test, the harness or a frozen file: what only the navigator changes, in RED. */
function testOwned(input: ScopeInput, path: string): boolean {
  return isTestPath(input.policy, path) || isHarness(input, path) || path in input.frozen;
}

function refusal(input: ScopeInput, path: string): string | undefined {
  const { policy, role, step } = input;
  if (path.startsWith('../')) return 'outside the workspace';
  if (path === '.git' || path.startsWith('.git/')) return "git's own files (hooks, config): put back as they were";
  if (path.startsWith('~/'))
    return "git's or a test runner's global files in the home folder (~/.gitconfig, ~/.npmrc): put back as they were";
  // `git status` lists a folder holding a `.git` of its own as `dir/`, never its files: staged, it
  // would be a gitlink, and every later `git status`, `git diff` or `git add -A` of the conductor
  // would run `git status` inside it — with the config the agent wrote there (a clean filter is a
  // command), outside the turn's sandbox.
  if (path.endsWith('/'))
    return "a git repository of its own (staged, it is a gitlink whose own config the conductor's git would run)";
  // Every feature's records, not only this one's: another feature's gates.json is an approval its run reads.
  const features = policy.featureDir.replace(/\/[^/]+$/, '');
  const conductorOwned = CONDUCTOR_FILES.flatMap((g) => [`${policy.featureDir}/${g}`, `${features}/*/${g}`]);
  if (matchesAny(path, conductorOwned, ANY_CASE)) return "the conductor's own record";
  if ((input.links ?? []).includes(path))
    return 'a link out of the workspace (the proof would run what it leads to, which no commit holds)';
  const target = input.linkTargets?.[path];
  const lead = target?.endsWith('/') ? `${target}x` : target;
  // A link to what no agent changes (Consort's configuration, a migration on the base, the seed) is harmless.
  if (lead !== undefined && testOwned(input, path) && !testOwned(input, lead) && !matchesAny(lead, policy.locked ?? []))
    return `a test-owned link leading to ${target}, which is not (the driver could change what the test reads through it)`;
  if (matchesAny(path, DEPENDENCY_PATHS, ANY_CASE))
    return "installed dependencies, never an agent's to commit (a proof runs the pristine install, unless the commit has its own)";
  if (matchesAny(path, COMPILED_PATHS, ANY_CASE))
    return "compiled Python, never an agent's to commit (python can import a .pyc in place of its source)";
  if ((input.shadows ?? []).includes(path))
    return 'a module beside another of the same name (a runner can load one where the diff shows the other)';
  if (matchesAny(path, policy.locked ?? [], ANY_CASE))
    return "no agent's to change (Consort's configuration, a migration already on the base, the seed)";
  if (isHarnessInAnotherCase(input, path))
    return 'named like the test harness in another case (a case-insensitive file system opens it as the harness file): no agent writes it';
  const twin = frozenInAnotherCase(input, path);
  if (twin !== undefined)
    return `the frozen test ${twin} in another case (a case-insensitive file system checks one out over the other)`;
  if (isHarness(input, path)) {
    if (role === 'navigator' && step === 'red') return undefined;
    return 'the test harness (test-owned: only the navigator changes it, in RED)';
  }
  if (BUILD_STEPS.has(step)) {
    const test = isTestPath(policy, path);
    if (step === 'review') {
      return input.item !== null && path === reviewFile(policy, input.item)
        ? undefined
        : 'a review writes only its review file';
    }
    if (step === 'red' && !test) return 'the navigator writes tests only in RED';
    if (step !== 'red' && test) return `tests cannot change in ${step.toUpperCase()}`;
    if (step !== 'red' && path in input.frozen) return `frozen at RED`;
  }
  if (!matchesAny(path, policy.writes[role] ?? [])) return `outside the ${role}'s writes`;
  return undefined;
}

/** Every refused path with the reason, sorted; empty when the turn is in scope. */
export function checkScope(input: ScopeInput): Refusal[] {
  const refused = new Map<string, string>();
  for (const change of input.changes) {
    const why = refusal(input, change.path);
    if (why !== undefined) refused.set(change.path, why);
  }
  // Content, not just paths: a frozen test that changed however it changed (an agent's own commit,
  // a rename back and forth) is caught by its hash.
  if (BUILD_STEPS.has(input.step) && input.step !== 'red') {
    for (const [path, hash] of Object.entries(input.frozen)) {
      if (path in input.hashes && input.hashes[path] !== hash && !refused.has(path))
        refused.set(path, 'frozen at RED (content changed)');
    }
  }
  return [...refused].map(([path, why]) => ({ path, why })).sort((a, b) => (a.path < b.path ? -1 : 1));
}

export function describeRefusals(refused: readonly Refusal[]): string {
  return refused.map((r) => `${r.path} (${r.why})`).join(', ');
}
