/**
 * The `lakebase` provider: Databricks Lakebase branches behind the same BranchProvider as
 * `local`, built from settings parsed at the edge (environment, Action inputs, App config).
 */
import { CloudBranchProvider, type CloudProviderOptions } from '../cloud/provider.js';
import { LakebaseService, type LakebaseServiceOptions } from './service.js';
import type { LakebaseSettings } from './settings.js';

export type LakebaseProviderOptions = LakebaseServiceOptions & CloudProviderOptions;

export function createLakebaseProvider(
  settings: LakebaseSettings,
  options: LakebaseProviderOptions = {},
): CloudBranchProvider {
  return new CloudBranchProvider(new LakebaseService(settings, options), options);
}
