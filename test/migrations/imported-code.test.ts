/**
 * The project's files migrations import, read statically (imported-code.ts): what names the
 * baseline with base's migrations and what a change editing them is told about.
 */
import {
  importedFiles,
  isDownSql,
  ownNameReads,
  readSpecifiers,
  relativeSpecifiers,
  sqlFileNames,
} from '../../src/migrations/imported-code.js';
import { sha256Normalized } from '../../src/migrations/files.js';

describe('relativeSpecifiers', () => {
  it('finds every form of a relative import, each once, and no package', () => {
    const source = `import { ColumnDefinitions, MigrationBuilder } from 'node-pg-migrate';
import TicketModel from '../models/Ticket';
import type { Kind } from "../shared/kinds.js";
export * from './shared';
import './side-effect';
const { readSql } = require('./sql/read');
const later = await import('../lib/later.mjs');
const again = require('../models/Ticket');
const dynamic = require(\`./\${name}\`);
`;
    expect(relativeSpecifiers(source)).toEqual([
      '../models/Ticket',
      '../shared/kinds.js',
      './shared',
      './side-effect',
      './sql/read',
      '../lib/later.mjs',
    ]);
  });
});

describe('importedFiles', () => {
  const tree: Record<string, string> = {
    'src/migrations/1_a.ts': "import Ticket from '../models/Ticket';\nimport { K } from './0_consts';",
    'src/migrations/0_consts.ts': "import { kinds } from '../shared/kinds.js';\nexport const K = kinds;",
    'src/migrations/2_b.js': "const x = require('../../lib');\nconst y = require('../../../outside');",
    'src/models/Ticket.ts': "import { Model } from './base';\nexport default class T extends Model {}",
    'src/models/base.ts': "import { Ticket } from './Ticket';\nexport class Model {}",
    'src/shared/kinds.ts': 'export const kinds = [1];',
    'lib/index.js': "module.exports = require('./data.json');",
    'lib/data.json': '{"a": 1}',
    'src/migrations/3_c.sql': "-- from '../models/Ticket'",
  };
  const read = (file: string) => Promise.resolve(tree[file]);
  const migrations = [
    'src/migrations/0_consts.ts',
    'src/migrations/1_a.ts',
    'src/migrations/2_b.js',
    'src/migrations/3_c.sql',
  ].map((file) => ({ file, content: tree[file]! }));

  it('follows imports through other files and other migrations, resolving as Node and TypeScript do', async () => {
    const found = await importedFiles(migrations, read);
    expect(found).toEqual([
      {
        file: 'lib/data.json',
        sha256: sha256Normalized(tree['lib/data.json']!),
        importedBy: ['src/migrations/2_b.js'],
      },
      { file: 'lib/index.js', sha256: sha256Normalized(tree['lib/index.js']!), importedBy: ['src/migrations/2_b.js'] },
      // through the migration 1_a imports: 0_consts is compared as a migration, what it imports counts
      {
        file: 'src/models/Ticket.ts',
        sha256: sha256Normalized(tree['src/models/Ticket.ts']!),
        importedBy: ['src/migrations/1_a.ts'],
      },
      {
        file: 'src/models/base.ts',
        sha256: sha256Normalized(tree['src/models/base.ts']!),
        importedBy: ['src/migrations/1_a.ts'],
      },
      {
        file: 'src/shared/kinds.ts',
        sha256: sha256Normalized(tree['src/shared/kinds.ts']!),
        importedBy: ['src/migrations/0_consts.ts', 'src/migrations/1_a.ts'],
      },
    ]);
  });

  it('nothing for migrations that import nothing of the project, and a reader that fails reads nothing', async () => {
    expect(await importedFiles([{ file: 'migrations/1_x.js', content: "require('pg')" }], read)).toEqual([]);
    expect(await importedFiles(migrations, () => Promise.reject(new Error('gone')))).toEqual([]);
  });
});

describe("importedFiles: the workspace's own packages", () => {
  const tree: Record<string, string> = {
    'packages/db/migrations/1_roles.ts':
      "import { ROLES } from '@acme/shared';\nimport { KINDS } from '@acme/shared/kinds';\nimport { z } from 'zod';",
    'packages/shared/package.json': '{ "name": "@acme/shared", "exports": { ".": { "import": "./src/index.ts" } } }',
    'packages/shared/src/index.ts': "export { ROLES } from './roles.js';",
    'packages/shared/src/roles.ts': "export const ROLES = ['owner', 'member'];",
    'packages/shared/kinds.ts': "export const KINDS = ['a'];",
    'packages/other/package.json': '{ "name": "@acme/other", "main": "lib/main.js" }',
    'packages/db/migrations/2_other.js': "const o = require('@acme/other');",
    'packages/other/lib/main.js': 'module.exports = 1;',
  };
  const read = (file: string) => Promise.resolve(tree[file]);
  const migrations = ['packages/db/migrations/1_roles.ts', 'packages/db/migrations/2_other.js'].map((file) => ({
    file,
    content: tree[file]!,
  }));
  const workspace = new Map([
    ['@acme/shared', 'packages/shared'],
    ['@acme/other', 'packages/other'],
  ]);

  it('follows a package the install links into the repository: its entry, a subpath, and what they import', async () => {
    const found = await importedFiles(migrations, read, undefined, workspace);
    expect(found.map((f) => [f.file, f.importedBy])).toEqual([
      ['packages/other/lib/main.js', ['packages/db/migrations/2_other.js']],
      ['packages/shared/kinds.ts', ['packages/db/migrations/1_roles.ts']],
      ['packages/shared/src/index.ts', ['packages/db/migrations/1_roles.ts']],
      ['packages/shared/src/roles.ts', ['packages/db/migrations/1_roles.ts']],
    ]);
  });

  it('and no package that is not one of the workspace', async () => {
    expect(await importedFiles(migrations, read)).toEqual([]);
  });
});

describe('readSpecifiers', () => {
  it('finds the files a source reads by a path from its own folder and literals alone, and nothing else', () => {
    const source = `const fs = require('fs');
const upPath = path.join(__dirname, './sql/1_users.up.sql');
fs.readFileSync(path.join(__dirname, 'sql', "1_users.down.sql"), 'utf8');
const schema = fs.readFileSync(path.resolve(__dirname, '../init_db.sql'), 'utf8');
path.resolve(__dirname, '/etc/hosts');
read(__dirname + '/sql/up.sql');
read(__dirname + '/sql/' + name);
const t = \`\${__dirname}/sql/t.sql\`;
const u = \`\${__dirname}/sql/\${n}.sql\`;
readFile(new URL('./sql/esm.sql', import.meta.url));
join(import.meta.dirname, '../../sql/shared.sql');
join(__dirname, f);
join(join(resolve(__dirname), 'sql'), basename(__filename, extname(__filename)));
path.join(__dirname, 'sql',
  'multi.sql',
);
`;
    expect(readSpecifiers(source)).toEqual([
      './sql/1_users.up.sql',
      './sql/1_users.down.sql',
      '../init_db.sql',
      '../../sql/shared.sql',
      './sql/multi.sql',
      './sql/up.sql',
      './sql/t.sql',
      './sql/esm.sql',
    ]);
  });
});

describe('importedFiles: files the migrations read', () => {
  const tree: Record<string, string> = {
    'db/migrations/1_users.js':
      "const fs = require('fs');\nexports.up = (pgm) => pgm.sql(fs.readFileSync(path.join(__dirname, 'sql', '1_users.up.sql'), 'utf8'));\nconst schema = fs.readFileSync(path.join(__dirname, '../schema.sql'), 'utf8');\nconst gone = fs.readFileSync(path.join(__dirname, 'sql', 'missing.sql'), 'utf8');\nconst outside = fs.readFileSync(path.join(__dirname, '../../../etc.sql'), 'utf8');",
    'db/migrations/2_seed.js':
      "const data = require('../data.js');\nconst text = fs.readFileSync(path.join(__dirname, '../data.js'), 'utf8');\nconst helper = path.join(__dirname, '../helper.js');",
    'db/migrations/sql/1_users.up.sql': 'CREATE TABLE users (id int);',
    // league-style: a helper beside the SQL reads the name it is handed, path.join(__dirname, name)
    'db/migrations/3_teams.js':
      "const { readSql } = require('./sql/read');\nexports.up = (pgm) => pgm.sql(readSql('3_teams.up.sql'));\nexports.down = (pgm) => pgm.sql(readSql(\"3_teams.down.sql\"));\nconst nowhere = 'none.sql';",
    'db/migrations/sql/read.js': "exports.readSql = (name) => readFileSync(path.join(__dirname, name), 'utf8');",
    'db/migrations/sql/3_teams.up.sql': 'CREATE TABLE teams (id int);',
    'db/migrations/sql/3_teams.down.sql': 'DROP TABLE teams;',
    'db/schema.sql': 'CREATE TABLE schema_only (id int);',
    'db/data.js': 'module.exports = [1];',
    'db/helper.js': "require('./never-followed');",
    'db/never-followed.js': '',
  };
  const read = (file: string) => Promise.resolve(tree[file]);
  const migrations = ['db/migrations/1_users.js', 'db/migrations/2_seed.js', 'db/migrations/3_teams.js'].map(
    (file) => ({
      file,
      content: tree[file]!,
    }),
  );

  it('lists each file read as read (also one named to a helper that reads it), one also imported as imported, and never follows what a read file names', async () => {
    const found = await importedFiles(migrations, read);
    const entry = (file: string, by: string, extra: { read?: true } = {}) => ({
      file,
      sha256: sha256Normalized(tree[file]!),
      importedBy: [by],
      ...extra,
    });
    expect(found).toEqual([
      entry('db/data.js', 'db/migrations/2_seed.js'),
      entry('db/helper.js', 'db/migrations/2_seed.js', { read: true }),
      entry('db/migrations/sql/1_users.up.sql', 'db/migrations/1_users.js', { read: true }),
      entry('db/migrations/sql/3_teams.down.sql', 'db/migrations/3_teams.js', { read: true }),
      entry('db/migrations/sql/3_teams.up.sql', 'db/migrations/3_teams.js', { read: true }),
      entry('db/migrations/sql/read.js', 'db/migrations/3_teams.js'),
      entry('db/schema.sql', 'db/migrations/1_users.js', { read: true }),
    ]);
  });
});

describe('sqlFileNames', () => {
  it('finds the SQL file names a source spells out whole, each once', () => {
    const source = `pgm.sql(readSql('1_users.up.sql'));
pgm.sql(readSql("1_users.up.sql"));
const p = './sql/2_x.down.sql';
const dynamic = \`\${name}.sql\`;
const words = 'run this.sql';
const abs = '/etc/x.sql';
const ext = '.sql';
`;
    expect(sqlFileNames(source)).toEqual(['1_users.up.sql', './sql/2_x.down.sql']);
  });
});

describe('ownNameReads', () => {
  it("names the SQL files a path made from the file's own name may be, only where the text names its own file", () => {
    const template = `const sqlPath = join(__dirname, 'sql', basename(__filename, extname(__filename)));
export const up = (pgm) => pgm.sql(readFileSync(\`\${sqlPath}.up.sql\`));`;
    expect(ownNameReads(template, 'migrations/1_users.ts')).toEqual([
      './1_users.up.sql',
      './1_users.ts.up.sql',
      './sql/1_users.up.sql',
      './sql/1_users.ts.up.sql',
    ]);
    expect(ownNameReads("fs.readFileSync(__filename + '.sql')", 'migrations/1_x.js')).toEqual([
      './1_x.sql',
      './1_x.js.sql',
    ]);
    expect(ownNameReads("pgm.sql(readSql('.up.sql'))", 'migrations/1_x.js')).toEqual([]);
  });
});

describe('isDownSql', () => {
  it("tells a down's SQL by its name", () => {
    expect(['sql/1_users.down.sql', 'sqls/2-bm-tables-down.sql', 'x/down.sql', '3_x_down.SQL'].map(isDownSql)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['sql/1_users.up.sql', 'sql/1_breakdown.sql', 'sql/1_down.js', 'schema.sql'].map(isDownSql)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});
