/**
 * Who applies a pull request's migrations on its branch. By default the role confined to the
 * branch database (no superuser, no other database, no roles); `check.migrationsRole: admin`
 * hands them the provider's admin URL instead, for a project whose migrations need a superuser
 * (`CREATE EXTENSION postgis`, `CREATE ROLE`). That opt-out is read from the base's committed
 * configuration only (base-settings.ts): a pull request that adds it to its own file gains
 * nothing until the setting is merged. The suite and the seed get the confined role either way.
 */
import type { ConsortConfig, MigrationRole } from '../../config/schema.js';
import type { CheckSide } from './plan.js';

export interface MigrationsRunAs {
  role: MigrationRole;
  /** For the migrations stage's summary when they run as the admin: why (the setting, its file, the base). */
  reason: string | null;
  /** Lines for the run's log: a head-only opt-out that is ignored, a base file that could not be read. */
  log: string[];
}

const KEY = 'check.migrationsRole';

export function migrationsRunAs(base: CheckSide, head: ConsortConfig): MigrationsRunAs {
  const settings = base.settings;
  const log: string[] = [];
  if (settings?.problem) log.push(`${KEY} is not read from the base: ${settings.problem}.`);
  if (settings?.migrationsRole === 'admin')
    return {
      role: 'admin',
      reason: `${KEY}: admin in ${settings.source ?? 'the configuration'} on ${base.ref}`,
      log: [
        ...log,
        `The pull request's migrations run as the admin: ${KEY} is admin in ${settings.source ?? 'the configuration'} on ${base.ref}.`,
      ],
    };
  if (head.check.migrationsRole === 'admin')
    log.push(
      `${KEY}: admin in the change's own configuration is ignored (only the base's counts); its migrations run as the branch's role.`,
    );
  return { role: 'branch', reason: null, log };
}

export const INSUFFICIENT_PRIVILEGE = '42501';

/** Said when a migration is refused a privilege (42501) while it ran as the confined role. */
export const CONFINED_NOTE =
  ` (a pull request's migrations run as a role confined to its branch database: no superuser, no other database, no roles;` +
  ` a migration that needs more runs as the admin only with ${KEY}: admin in the Consort configuration of the base branch,` +
  ` which must land on the base first: the pull request's own setting is ignored)`;
