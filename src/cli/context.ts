/**
 * Global options every command shares, parsed once into a typed object. Loaded lazily: the
 * providers (and pg, zod …) are imported when a command runs, never for --help or --version.
 */
import type { Command } from 'commander';
import type { ConsortConfig } from '../config/schema.js';
import type { BranchProvider, ProviderName } from '../ports/branch-provider.js';
import type { Io } from './output.js';
import { asUsage, usageError } from './usage.js';

export interface CliContext {
  io: Io;
  env: NodeJS.ProcessEnv;
  providerName: ProviderName;
  /** --provider or CONSORT_PROVIDER was given (else the configuration's database.provider applies). */
  providerExplicit: boolean;
  json: boolean;
  /** `check --json <file>`: where to write the report (`check --json` alone: `json`, and stdout). */
  jsonFile: string | undefined;
  root: string;
  namespace: string | undefined;
  /** The project's configuration (.github/consort.yml or the defaults), read once; a broken file throws its ConfigError. */
  config: () => Promise<ConsortConfig>;
  /**
   * The provider: --provider / CONSORT_PROVIDER when given, else the configuration's
   * database.provider (and database.namespace unless --namespace); `local: true` takes the
   * embedded server unless a provider was given (`db`, the branching tour).
   */
  withProvider: <T>(fn: (p: BranchProvider) => Promise<T>, options?: { local?: boolean }) => Promise<T>;
  /** Which provider and namespace withProvider opens. */
  providerChoice: (options?: { local?: boolean }) => Promise<{ provider: ProviderName; namespace: string | undefined }>;
  /** A command that ran but concluded negatively (a failing check) sets a non-zero exit code. */
  setExitCode: (code: number) => void;
  /** Says (once, on stderr) that --namespace does nothing for the provider being opened. */
  noteNamespace: (provider: ProviderName) => void;
}

/** Where each provider other than postgres keeps one project's branches apart from another's. */
const KEPT_APART: Record<Exclude<ProviderName, 'postgres'>, string> = {
  local: "each project's embedded server has a data directory of its own",
  lakebase: "a project's branches are those of its Lakebase project (CONSORT_LAKEBASE_PROJECT)",
  neon: "a project's branches are those of its Neon project (NEON_PROJECT_ID)",
};

export type Ctx = (cmd: Command) => Promise<CliContext>;

export async function makeContext(
  cmd: Command,
  io: Io,
  env: NodeJS.ProcessEnv,
  setExitCode: (code: number) => void = () => undefined,
): Promise<CliContext> {
  const { z } = await import('zod');
  const { openProvider, parseProviderName, projectRoot } = await import('../branches/factory.js');
  const GlobalOptions = z.object({
    provider: z.string().optional(),
    json: z.union([z.boolean(), z.string()]).optional(),
    namespace: z.string().optional(),
    cwd: z.string().optional(),
  });
  const opts = GlobalOptions.parse(cmd.optsWithGlobals());
  const given = opts.provider ?? env.CONSORT_PROVIDER;
  const providerName = asUsage(() => parseProviderName(given));
  if (opts.cwd !== undefined) {
    const { statSync } = await import('node:fs');
    if (statSync(opts.cwd, { throwIfNoEntry: false })?.isDirectory() !== true)
      throw usageError(`-C ${opts.cwd}: no such directory.`, 'Give -C (--cwd) the folder of your project.');
  }
  const root = projectRoot(opts.cwd ?? process.cwd());
  const json = opts.json === true;
  const jsonFile = typeof opts.json === 'string' ? opts.json : undefined;
  const explicit = given !== undefined;
  let loaded: Promise<ConsortConfig> | undefined;
  const config = (): Promise<ConsortConfig> => {
    loaded ??= import('../config/load.js').then(async ({ loadConfig }) => (await loadConfig(root)).config);
    return loaded;
  };
  // As check, run and pair choose: --provider/CONSORT_PROVIDER over database.provider, and
  // --namespace over database.namespace (each given flag saves reading the file for it).
  const providerChoice = async (options: { local?: boolean } = {}) => {
    if (options.local) return { provider: providerName, namespace: opts.namespace };
    const configured = explicit && opts.namespace !== undefined ? null : await config();
    return {
      provider: explicit ? providerName : (configured?.database.provider ?? providerName),
      namespace: opts.namespace ?? configured?.database.namespace,
    };
  };
  let noted = false;
  const c: CliContext = {
    io,
    env,
    providerName,
    providerExplicit: explicit,
    json,
    jsonFile,
    root,
    namespace: opts.namespace,
    setExitCode,
    config,
    providerChoice,
    noteNamespace: (provider) => {
      if (opts.namespace === undefined || provider === 'postgres' || noted) return;
      noted = true;
      io.err(`Note: --namespace is for the postgres provider and is ignored here: ${KEPT_APART[provider]}.`);
    },
    withProvider: async (fn, options = {}) => {
      const { provider: name, namespace } = await providerChoice(options);
      c.noteNamespace(name);
      // The first command that starts the embedded server says so, with how to stop it (README).
      const notice = name === 'local' ? await import('./commands/server-notice.js') : undefined;
      const wasRunning = notice ? await notice.serverRunning(c) : true;
      const provider = await openProvider({
        provider: name,
        projectRoot: root,
        env,
        ...(namespace ? { namespace } : {}),
        log: (m) => io.err(m),
      });
      let result: Awaited<ReturnType<typeof fn>>;
      try {
        result = await fn(provider);
      } finally {
        await provider.close();
      }
      if (notice && !wasRunning) await notice.serverNotice(c, false);
      return result;
    },
  };
  return c;
}
