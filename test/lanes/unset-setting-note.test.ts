/**
 * A JS/TS migration's statement that fails holding `undefined`: the note says which setting the
 * migration read and why the check's migrations did not have it.
 */
import { migrationSetFromEntries } from '../../src/migrations/files.js';
import { envReads, unsetSettingNote } from '../../src/lanes/check/unset-setting-note.js';

const migration = (content: string, file = 'migrations/1_grants.js') =>
  migrationSetFromEntries([{ file, content }])[0]!;

const GRANT = migration(
  "const role = process.env.APP_READER_ROLE;\nexports.up = (pgm) => {\n  pgm.sql(`GRANT SELECT ON projects TO ${role}`);\n  pgm.sql(`GRANT USAGE ON SCHEMA app TO ${process.env['REPORTS_TOKEN']}, ${process.env.PGUSER}`);\n};\n",
);

describe('unsetSettingNote', () => {
  it('names each variable the migration reads that its run did not have, and why', () => {
    const note = unsetSettingNote('GRANT SELECT ON projects TO undefined', GRANT, { REPORTS_TOKEN: 'x' }, []);
    expect(note).toBe(
      'the statement holds undefined where the migration put a value it did not have: it reads ' +
        "APP_READER_ROLE (not set where the check runs: export it there — in the Action, the workflow step's env:), " +
        "REPORTS_TOKEN (withheld as credential-looking: list it in suite.passEnv of the base branch's configuration), " +
        'PGUSER (the connection variables never reach the migrations: they serve several branches)',
    );
  });

  it('says where to look when every variable it reads was given (a module it imports read one)', () => {
    const reader = migration(
      'exports.up = (pgm) => {\n  pgm.grantRoles(roles.reader, process.env.REPORTS_TOKEN && process.env.APP_READER_ROLE);\n};\n',
    );
    const env = { APP_READER_ROLE: 'reader', REPORTS_TOKEN: 'x' };
    expect(unsetSettingNote('GRANT "undefined" TO "reader"', reader, env, ['REPORTS_TOKEN'])).toContain(
      'such as a setting read from the environment (by it or a module it imports)',
    );
  });

  it('stays quiet for undefined inside a string, a word containing it, or a .sql migration', () => {
    expect(unsetSettingNote("UPDATE t SET s = 'undefined'", GRANT, {}, [])).toBeUndefined();
    expect(unsetSettingNote('SELECT undefined_total FROM t', GRANT, {}, [])).toBeUndefined();
    const sql = migration('-- Up Migration\nGRANT SELECT ON t TO undefined;\n', 'migrations/2_a.sql');
    expect(unsetSettingNote('GRANT SELECT ON t TO undefined', sql, {}, [])).toBeUndefined();
  });

  it('reads process.env.X and process.env["X"]', () => {
    expect(envReads(GRANT.content)).toEqual(['APP_READER_ROLE', 'REPORTS_TOKEN', 'PGUSER']);
  });
});
