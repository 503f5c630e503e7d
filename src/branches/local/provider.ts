/** The `local` provider: the project's own embedded PostgreSQL 18, started on demand. */
import path from 'node:path';
import { hideFromIsolated } from '../../process/isolate.js';
import { TemplateBranchProvider } from '../template-provider.js';
import { supportsReflink } from './reflink.js';
import { EmbeddedServer, type ServerInfo } from './server.js';

export const LOCAL_CATALOG_DATABASE = 'consort_catalog';

export interface LocalProviderOptions {
  dataDir: string;
  log?: (message: string) => void;
  /** Refill warm pools after a handout (default true); false in a one-shot process that will not use them again. */
  refillPools?: boolean;
}

export async function createLocalProvider(
  options: LocalProviderOptions,
): Promise<{ provider: TemplateBranchProvider; server: ServerInfo }> {
  const embedded = new EmbeddedServer(options.dataDir, options.log);
  const server = await embedded.start();
  // Its server.json holds the superuser password: agents, suites and migrations never see the directory.
  hideFromIsolated(server.dataDir);
  const provider = new TemplateBranchProvider({
    provider: 'local',
    adminUrl: server.url,
    namespace: 'local',
    databasePrefix: '',
    catalogDatabase: LOCAL_CATALOG_DATABASE,
    ...(options.refillPools === false ? { refillPools: false } : {}),
    cloneMode: async (version) => {
      if (version < 180000) return { clone: false, reason: 'PostgreSQL before 18 cannot clone files' };
      const { reflink, reason } = await supportsReflink(path.dirname(server.pgdata));
      return { clone: reflink, reason };
    },
  });
  return { provider, server };
}
