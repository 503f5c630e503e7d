/**
 * The PR lane on events-ts-node (test/fixtures/histories): TypeScript migrations kept in
 * src/migrations, deployed with ts-node wrapping node-pg-migrate 7.9.1's bin (`ts-node
 * ./node_modules/node-pg-migrate/bin/node-pg-migrate -j ts -m src/migrations`). They name tables by
 * the app's models (`TicketModel.tableName`), build an enum from the app's own TypeScript enum
 * (`Object.values(ActivityKind)`), and rebuild it with a helper one migration exports and a later
 * one imports (rename the type, create it again, cast the column through text, drop the old one);
 * the pull request renames a label (renameTypeValue, addTypeValue with ifNotExists), edits the
 * app's enum to match, and adds a trigger function in template-literal `pgm.sql` with an empty
 * down. Verdicts worked out by hand.
 */
import { checkAgainstMain, isolatedGit as git } from '../helpers/check-repo.js';
import { testPorts } from '../helpers/check-ports.js';
import { history } from '../helpers/history-repo.js';
import { localTestProvider, type TestProvider } from '../helpers/servers.js';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { resolveSides } from '../../src/cli/commands/check.js';
import { localGitRepo } from '../../src/git/repo.js';
import { planCheck } from '../../src/lanes/check/plan.js';

/** ts-node compiles in every process that applies migrations (baseline, PR branch, reversibility). */
const TS_NODE_TIMEOUT = 180_000;

let t: TestProvider;
beforeAll(async () => {
  t = await localTestProvider();
});
afterAll(async () => t?.cleanup());

/** The app's enum as the pull request leaves it: `replied` renamed, `ticket_reopened` added. */
const PR_KINDS = `export enum ActivityKind {
  TicketOpened = 'ticket_opened',
  TicketClosed = 'ticket_closed',
  Replied = 'ticket_replied',
  TicketReopened = 'ticket_reopened',
}
`;

async function planAgainstMain(dir: string) {
  const { config, source } = await loadConfig(dir);
  const { base, head } = await resolveSides(localGitRepo, dir, config, { base: 'main' }, () => undefined);
  const request = { workspace: dir, config, configSource: source, base, head, pr: 502, env: {}, toolVersion: 'test' };
  return planCheck(request, { migrations: testPorts.migrations, git: localGitRepo });
}

describe('events-ts-node: migrations that import the app’s models and enums, on ts-node and node-pg-migrate 7.9.1', () => {
  it(
    'applies, says the enum rebuilt from the app does not come back, and that the PR edits code base migrations import',
    async () => {
      const h = await history(
        'events-ts-node',
        3,
        { 'node-pg-migrate': 'node-pg-migrate-7', 'ts-node': 'ts-node', typescript: 'typescript' },
        {},
        undefined,
        { migrationsDir: 'src/migrations', prFiles: { 'src/shared/types/activity.ts': PR_KINDS } },
      );
      try {
        const report = await checkAgainstMain(h.dir, 501, t.provider);
        expect(report.error).toBeUndefined();
        // Base's first two migrations build activity_kind from the file this PR edits: run from
        // scratch at the PR, they would make (…, ticket_replied, ticket_reopened) and the PR's
        // renameTypeValue('replied', …) would fail. The check applies base with base's code.
        expect(report.stages.plan).toMatchObject({
          status: 'passed',
          newMigrations: ['1701000000003_rename-replied', '1701000000004_ticket-reply-count'],
          warnings: [
            {
              kind: 'imported-code-changed',
              file: 'src/shared/types/activity.ts',
              change: 'edited',
              importedBy: [
                'src/migrations/1701000000001_create-activities.ts',
                'src/migrations/1701000000002_activity-kinds-from-app.ts',
              ],
            },
          ],
        });
        expect(report.stages.plan.summary).toContain("1 file base's migrations import changed");
        expect(report.stages.migrations).toMatchObject({
          status: 'passed',
          nodePgMigrate: { version: '7.9.1', source: 'project', typescript: { name: 'ts-node' } },
        });
        // By hand: the rename's down renames the label back, then rebuilds the type from the app's
        // enum as the PR leaves it — 'replied' is gone again, and up cannot run a second time. The
        // trigger migration's down is empty.
        const [rename, trigger] = report.stages.reversibility.migrations;
        expect([rename?.verdict, trigger?.verdict]).toEqual(['not-restored', 'not-restored']);
        expect(JSON.stringify(rename)).toContain('\\"replied\\" is not an existing enum label');
        const diff = report.stages.schemaDiff.text;
        expect(diff).toContain(
          "~ enum public.activity_kind: add label 'ticket_replied', add label 'ticket_reopened', remove label 'replied'",
        );
        expect(diff).toContain('+ trigger activities_reply_count on public.activities');
        expect(
          report.stages.lint.findings.map((f) => [f.file.replace('src/migrations/170100000000', ''), f.line, f.rule]),
        ).toContainEqual(['3_rename-replied.ts', 8, 'require-enum-value-ordering']);

        // A base that changes only the app's enum gives another schema: another baseline.
        const before = await planAgainstMain(h.dir);
        await git(h.dir, 'checkout', '-q', 'main');
        const kinds = path.join(h.dir, 'src/shared/types/activity.ts');
        await writeFile(kinds, PR_KINDS.replace("  TicketReopened = 'ticket_reopened',\n", ''));
        await git(h.dir, 'commit', '-qam', 'rename a kind in the app');
        await git(h.dir, 'checkout', '-q', 'feature');
        const after = await planAgainstMain(h.dir);
        expect(before.baseline).toMatch(/^baseline-/);
        expect(after.baseline).toMatch(/^baseline-/);
        expect(after.baseline).not.toBe(before.baseline);
      } finally {
        await h.dispose();
      }
    },
    TS_NODE_TIMEOUT,
  );
});
