/**
 * The `neon` provider: Neon branches behind the same BranchProvider as `local`, built from
 * settings parsed at the edge (environment, Action inputs, App config).
 *
 * Why a small fetch client and not `@neondatabase/api-client`: Consort uses eight endpoints; the
 * generated client would add axios and its dependency tree to the bundled Action for them, and
 * would still need the retry (423/429/5xx with Retry-After), polling and error mapping written
 * here. The zod schemas validate exactly the fields Consort reads, so an API change is a clear
 * error instead of a silent `undefined`.
 */
import { CloudBranchProvider, type CloudProviderOptions } from '../cloud/provider.js';
import { NeonService, type NeonServiceOptions } from './service.js';
import type { NeonSettings } from './settings.js';

export type NeonProviderOptions = NeonServiceOptions & CloudProviderOptions;

export function createNeonProvider(settings: NeonSettings, options: NeonProviderOptions = {}): CloudBranchProvider {
  return new CloudBranchProvider(new NeonService(settings, options), options);
}
