/** Global options every command shares, parsed once into a typed object. */
import { z } from 'zod';
import { openProvider, parseProviderName, projectRoot } from '../branches/factory.js';
import type { BranchProvider, ProviderName } from '../ports/branch-provider.js';
import type { Io } from './output.js';

export const GlobalOptions = z.object({
  provider: z.string().optional(),
  json: z.union([z.boolean(), z.string()]).optional(),
  namespace: z.string().optional(),
  cwd: z.string().optional(),
});

export interface CliContext {
  io: Io;
  env: NodeJS.ProcessEnv;
  providerName: ProviderName;
  json: boolean;
  /** `check --json <file>`: where to write the report. */
  jsonFile: string | undefined;
  root: string;
  namespace: string | undefined;
  withProvider: <T>(fn: (p: BranchProvider) => Promise<T>) => Promise<T>;
  /** A command that ran but concluded negatively (a failing check) sets a non-zero exit code. */
  setExitCode: (code: number) => void;
}

export function makeContext(raw: unknown, io: Io, env: NodeJS.ProcessEnv, setExitCode: (code: number) => void = () => undefined): CliContext {
  const opts = GlobalOptions.parse(raw);
  const providerName = parseProviderName(opts.provider ?? env.CONSORT_PROVIDER);
  const root = projectRoot(opts.cwd ?? process.cwd());
  const json = opts.json === true;
  const jsonFile = typeof opts.json === 'string' ? opts.json : undefined;
  return {
    io, env, providerName, json, jsonFile, root, namespace: opts.namespace, setExitCode,
    withProvider: async (fn) => {
      const provider = await openProvider({
        provider: providerName, projectRoot: root, env,
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
