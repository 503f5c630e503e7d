/**
 * Global options every command shares, parsed once into a typed object. Loaded lazily: the
 * providers (and pg, zod …) are imported when a command runs, never for --help or --version.
 */
import type { Command } from 'commander';
import type { BranchProvider, ProviderName } from '../ports/branch-provider.js';
import type { Io } from './output.js';
import { asUsage } from './usage.js';

export interface CliContext {
  io: Io;
  env: NodeJS.ProcessEnv;
  providerName: ProviderName;
  /** --provider or CONSORT_PROVIDER was given (else the configuration's database.provider applies). */
  providerExplicit: boolean;
  json: boolean;
  /** `check --json <file>`: where to write the report. */
  jsonFile: string | undefined;
  root: string;
  namespace: string | undefined;
  withProvider: <T>(fn: (p: BranchProvider) => Promise<T>) => Promise<T>;
  /** A command that ran but concluded negatively (a failing check) sets a non-zero exit code. */
  setExitCode: (code: number) => void;
}

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
  const root = projectRoot(opts.cwd ?? process.cwd());
  const json = opts.json === true;
  const jsonFile = typeof opts.json === 'string' ? opts.json : undefined;
  return {
    io,
    env,
    providerName,
    providerExplicit: given !== undefined,
    json,
    jsonFile,
    root,
    namespace: opts.namespace,
    setExitCode,
    withProvider: async (fn) => {
      const provider = await openProvider({
        provider: providerName,
        projectRoot: root,
        env,
        ...(opts.namespace ? { namespace: opts.namespace } : {}),
        log: (m) => io.err(m),
      });
      try {
        return await fn(provider);
      } finally {
        await provider.close();
      }
    },
  };
}
