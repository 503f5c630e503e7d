/** The failing statement is shown as the user wrote it, not as node-pg-migrate sent it. */
import { projectPaths, shownStatement } from '../../src/migrations/runner.js';

describe('shownStatement', () => {
  it('drops the -- Up Migration marker and the lone ; node-pg-migrate appends, and says how much it cut', () => {
    const sent =
      "-- Up Migration\nSET LOCAL lock_timeout = '1s';\n\nALTER TABLE customers ADD COLUMN region text NOT NULL;\n;";
    const shown = shownStatement(sent);
    expect(shown.text).toBe("SET LOCAL lock_timeout = '1s';\n\nALTER TABLE customers ADD COLUMN region text NOT NULL;");
    expect(shown.cut).toBe('-- Up Migration\n'.length);
    // A Postgres position still points at the same character after the cut.
    const at = sent.indexOf('region') + 1;
    expect(shown.text.slice(at - shown.cut - 1).startsWith('region')).toBe(true);
  });

  it("leaves a statement without the marker alone (a JS migration's pgm.sql)", () => {
    expect(shownStatement('ALTER TABLE t ADD COLUMN c int')).toEqual({
      text: 'ALTER TABLE t ADD COLUMN c int',
      cut: 0,
    });
    expect(shownStatement('-- Down Migration\n\nDROP TABLE t;\n;').text).toBe('DROP TABLE t;');
  });
});

describe('projectPaths', () => {
  it("points node-pg-migrate's errors at the project's migration, not the check's scratch copy", () => {
    const files = new Map([['1730000500000_add_x', { file: 'migrations/1730000500000_add_x.js' }]]);
    const message =
      "Error loading migration files: /app/node_modules/.cache/consort/check-1a2b3c4d/head/migrations/1730000500000_add_x.js:3\n  exports.up = (pgm) => {{\n\nSyntaxError: Unexpected token '{'\n    at file:///app/node_modules/.cache/consort/check-1a2b3c4d/head/migrations/1730000500000_add_x.js:3:25";
    const shown = projectPaths(message, files);
    expect(shown).not.toContain('.cache');
    expect(shown).toContain('Error loading migration files: migrations/1730000500000_add_x.js:3\n');
    expect(shown).toContain('at migrations/1730000500000_add_x.js:3:25');
    expect(projectPaths('see /tmp/x/migrations/1730000500000_add_x.json', files)).toBe(
      'see /tmp/x/migrations/1730000500000_add_x.json',
    );
  });
});
