/**
 * Command-line flags and environment variables of the branch benchmark.
 * Flags win over environment variables, which win over defaults.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
export const DEFAULT_XFS_DIR = '/var/cache/consort-xfs';

const HELP = `Usage: npm run bench:branch -- [options]      (or: node bench/branch.js [options])

Times Consort branch creation (clone and copy mode) against pg_dump | pg_restore and
"fresh database + all migrations", on parents of several sizes.

Options (environment variable in brackets):
  --sizes LIST          parent sizes in MB, comma separated    [CONSORT_BENCH_SIZES]  default 10,100,1000
  --runs N              branch creates per size and mode       [CONSORT_BENCH_RUNS]   default 15
  --baseline-runs N     dump/restore and fresh+migrations runs [CONSORT_BENCH_BASELINE_RUNS] default 3
  --warmup N            untimed creates before the timed ones  [CONSORT_BENCH_WARMUP] default 0
  --out FILE            JSON results                           [CONSORT_BENCH_OUT]    default bench/results/branch.json
  --quick               smoke run: sizes 10,50, 5 runs, 2 baseline runs (explicit flags still win)
  --xfs-dir DIR         reflink XFS mount for clone mode       [CONSORT_BENCH_XFS_DIR] default ${DEFAULT_XFS_DIR}
                        (as root, created with bench/scratch-xfs.sh when not mounted)
  --keep-xfs            keep a scratch filesystem this run created (default: remove it at the end)
  --action-mount        clone mode on a loop XFS mounted as the Action's \`reflink\` input mounts it
                        (lib/src/branches/local/loop-xfs.js: a sparse image under --copy-dir, data dir
                        inside; unmounted at the end) instead of --xfs-dir. Needs root or sudo -n.
  --no-clone            skip clone mode
  --copy-dir DIR        parent of the ext4 data dir for copy mode [CONSORT_BENCH_COPY_DIR] default /var/tmp
  --pg-url URL          server for the dump/restore baseline   [CONSORT_BENCH_PG_URL] default postgresql://postgres@127.0.0.1:5432/postgres
  --extra-tables N      add a migration creating N more small tables (schema size; clone
                        cost grows with the number of files, not bytes) [CONSORT_BENCH_EXTRA_TABLES] default 0
  --pg-setting K=V      ALTER SYSTEM SET K = V on the embedded servers (reloadable settings only,
                        repeatable; e.g. fsync=off to measure what fsync costs)
  --skip LIST           skip some of: clone,copy,dump,fresh,pooled
  --pool-size N         warm-pool size for the pooled runs          [CONSORT_BENCH_POOL_SIZE] default 4
  --min-free-gb N       refuse to start with less free disk    default max(8, estimate for the largest size)
  -h, --help            this help
`;

export function parseOptions(argv, env = process.env) {
  const flags = new Map();
  const pgSettings = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') return { help: HELP };
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}" (try --help)`);
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    const boolean = ['quick', 'keep-xfs', 'no-clone', 'action-mount'].includes(name);
    if (boolean) {
      flags.set(name, true);
      continue;
    }
    const known = ['sizes', 'runs', 'baseline-runs', 'warmup', 'extra-tables', 'pg-setting', 'out', 'xfs-dir', 'copy-dir', 'pg-url', 'skip', 'min-free-gb', 'pool-size'];
    if (!known.includes(name)) throw new Error(`unknown option --${name} (try --help)`);
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new Error(`--${name} needs a value`);
    if (name === 'pg-setting') {
      const m = /^([a-z_][a-z0-9_.]*)=(.*)$/i.exec(value);
      if (!m) throw new Error(`--pg-setting: expected NAME=VALUE, got "${value}"`);
      pgSettings.push({ name: m[1], value: m[2] });
      continue;
    }
    flags.set(name, value);
  }
  const pick = (flag, envName, fallback) => flags.get(flag) ?? (env[envName] || undefined) ?? fallback;
  const quick = flags.get('quick') === true || env.CONSORT_BENCH_QUICK === '1';

  const sizes = String(pick('sizes', 'CONSORT_BENCH_SIZES', quick ? '10,50' : '10,100,1000'))
    .split(',').map((s) => s.trim()).filter(Boolean).map((s) => positiveNumber('--sizes', s));
  if (sizes.length === 0) throw new Error('--sizes needs at least one size');
  const uniqueSizes = [...new Set(sizes)].sort((a, b) => a - b);

  const skip = new Set(String(flags.get('skip') ?? '').split(',').map((s) => s.trim()).filter(Boolean));
  for (const s of skip) if (!['clone', 'copy', 'dump', 'fresh', 'pooled'].includes(s)) throw new Error(`--skip: unknown item "${s}"`);
  if (flags.get('no-clone')) skip.add('clone');

  const minFree = flags.get('min-free-gb');
  return {
    quick,
    sizes: uniqueSizes,
    runs: positiveInt('--runs', pick('runs', 'CONSORT_BENCH_RUNS', quick ? 5 : 15)),
    baselineRuns: positiveInt('--baseline-runs', pick('baseline-runs', 'CONSORT_BENCH_BASELINE_RUNS', quick ? 2 : 3)),
    warmup: nonNegativeInt('--warmup', pick('warmup', 'CONSORT_BENCH_WARMUP', 0)),
    poolSize: positiveInt('--pool-size', pick('pool-size', 'CONSORT_BENCH_POOL_SIZE', 4)),
    extraTables: nonNegativeInt('--extra-tables', pick('extra-tables', 'CONSORT_BENCH_EXTRA_TABLES', 0)),
    out: path.resolve(pick('out', 'CONSORT_BENCH_OUT', path.join(BENCH_DIR, 'results', 'branch.json'))),
    xfsDir: path.resolve(pick('xfs-dir', 'CONSORT_BENCH_XFS_DIR', DEFAULT_XFS_DIR)),
    keepXfs: flags.get('keep-xfs') === true,
    actionMount: flags.get('action-mount') === true,
    copyDir: path.resolve(pick('copy-dir', 'CONSORT_BENCH_COPY_DIR', '/var/tmp')),
    pgUrl: pick('pg-url', 'CONSORT_BENCH_PG_URL', 'postgresql://postgres@127.0.0.1:5432/postgres'),
    skip,
    pgSettings,
    minFreeGb: minFree === undefined ? undefined : positiveNumber('--min-free-gb', minFree),
  };
}

function positiveNumber(flag, value) {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${flag}: "${value}" is not a positive number`);
  return n;
}

function positiveInt(flag, value) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag}: "${value}" is not a positive integer`);
  return n;
}

function nonNegativeInt(flag, value) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${flag}: "${value}" is not a non-negative integer`);
  return n;
}
