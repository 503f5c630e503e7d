/**
 * The PR lane on orgs-workspaces-ts (test/fixtures/histories): an npm-workspaces monorepo whose
 * TypeScript migrations (packages/db/src/migrations, node-pg-migrate 9 loading them with jiti, in
 * schema `app` with a table `migrations`, as its migrate script deploys) build an enum from a
 * workspace package, `import { MEMBER_ROLES } from '@orgs/shared'`, which the install links as
 * node_modules/@orgs/shared → packages/shared. The pull request adds a role to MEMBER_ROLES and the
 * migration that adds it to the enum, as such a change is written. Verdicts worked out by hand.
 */
import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { checkAgainstMain } from '../helpers/check-repo.js';
import { history } from '../helpers/history-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';

let t: TestProvider;
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => t?.cleanup());

const ROLES_WITH_BILLING = `/** Who a member of an organisation is: the API validates with it, the database's enum is made from it. */
export const MEMBER_ROLES = ['owner', 'admin', 'billing', 'member'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];
`;

describe('orgs-workspaces-ts: a base migration that imports a workspace package the change edits', () => {
  it("builds the baseline with base's package, applies the change's migration on it, and says the package changed", async () => {
    const h = await history('orgs-workspaces-ts', 2, { 'node-pg-migrate': 'node-pg-migrate' }, {}, undefined, {
      migrationsDir: 'packages/db/src/migrations',
      prFiles: { 'packages/shared/src/roles.ts': ROLES_WITH_BILLING },
    });
    try {
      // What `npm install` makes of the workspaces (node_modules is not committed).
      await mkdir(path.join(h.dir, 'node_modules/@orgs'));
      await symlink('../../packages/shared', path.join(h.dir, 'node_modules/@orgs/shared'), 'dir');
      await symlink('../../packages/db', path.join(h.dir, 'node_modules/@orgs/db'), 'dir');

      const report = await checkAgainstMain(h.dir, 601, t.provider);
      expect(report.error).toBeUndefined();
      // Base's enum was made from base's MEMBER_ROLES; the working tree's has billing already.
      expect(report.stages.plan.warnings).toEqual([
        {
          kind: 'imported-code-changed',
          file: 'packages/shared/src/roles.ts',
          change: 'edited',
          importedBy: ['packages/db/src/migrations/1718000000001_orgs.ts'],
        },
      ]);
      expect(report.stages.baseline).toMatchObject({
        status: 'passed',
        applied: ['1718000000000_bootstrap', '1718000000001_orgs'],
      });
      // On a baseline made with the working tree's package, ADD VALUE 'billing' would fail: it is there already.
      expect(report.stages.migrations).toMatchObject({
        status: 'passed',
        applied: [{ name: '1718000000002_member-role-billing' }, { name: '1718000000003_member-counts' }],
      });
      expect(report.stages.reversibility.migrations.map((m) => [m.name, m.verdict])).toEqual([
        ['1718000000002_member-role-billing', 'irreversible'],
        ['1718000000003_member-counts', 'reversible'],
      ]);
      expect(report.stages.reversibility.status).toBe('passed');
      expect(report.stages.schemaDiff.text).toContain("~ enum app.member_role: add label 'billing'");
    } finally {
      await h.dispose();
    }
  }, 180_000);
});
