import { isConsortError } from '../../src/core/errors.js';
import { branchEnv, PG_ENV_KEYS, pgEnvFromUrl } from '../../src/suite/pg-env.js';

describe('pgEnvFromUrl', () => {
  it.each([
    [
      'postgres://app:s3cret@127.0.0.1:5432/consort_pr_12',
      { PGHOST: '127.0.0.1', PGPORT: '5432', PGUSER: 'app', PGPASSWORD: 's3cret', PGDATABASE: 'consort_pr_12' },
    ],
    [
      'postgresql://user%40corp:p%40ss%3Aw%2Frd@db.example.com/my%20db?sslmode=require&channel_binding=require',
      {
        PGHOST: 'db.example.com',
        PGUSER: 'user@corp',
        PGPASSWORD: 'p@ss:w/rd',
        PGDATABASE: 'my db',
        PGSSLMODE: 'require',
        PGCHANNELBINDING: 'require',
      },
    ],
    ['postgres://[::1]:6543/x', { PGHOST: '::1', PGPORT: '6543', PGDATABASE: 'x' }],
    [
      'postgres://h1:5432,h2:5433/app?target_session_attrs=read-write',
      { PGHOST: 'h1,h2', PGPORT: '5432,5433', PGDATABASE: 'app', PGTARGETSESSIONATTRS: 'read-write' },
    ],
    [
      'postgres:///app?host=%2Fvar%2Frun%2Fpostgresql&user=me',
      { PGHOST: '/var/run/postgresql', PGDATABASE: 'app', PGUSER: 'me' },
    ],
    ['postgres://me@localhost', { PGHOST: 'localhost', PGUSER: 'me' }],
    [
      'postgres://me:@localhost/db?gssencmode=disable',
      { PGHOST: 'localhost', PGUSER: 'me', PGPASSWORD: '', PGDATABASE: 'db' },
    ],
  ])('%s', (url, expected) => {
    expect(pgEnvFromUrl(url)).toEqual(expected);
  });

  it.each([
    ['mysql://root@localhost/db', 'must start with postgres://'],
    ['postgres://u:p@host:port/db', 'port "port" is not a number'],
    ['postgres://u:%zz@host/db', 'bad percent-encoding'],
  ])('rejects %s', (url, problem) => {
    let error: unknown;
    try {
      pgEnvFromUrl(url);
    } catch (e) {
      error = e;
    }
    expect(isConsortError(error, 'invalid-input')).toBe(true);
    expect((error as Error).message).toContain(problem);
  });

  it('never puts the password in an error message', () => {
    expect(() => pgEnvFromUrl('postgres://u:hunter22@host:x/db')).toThrow(/postgres:\/\/u:\*\*\*\*@host/);
  });
});

describe('branchEnv', () => {
  it('sets the URL variables and clears PG* variables the URL does not set', () => {
    const env = branchEnv('postgres://u@127.0.0.1:5432/b?sslmode=disable', ['DATABASE_URL', 'TEST_DATABASE_URL']);
    expect(env).toMatchObject({
      DATABASE_URL: 'postgres://u@127.0.0.1:5432/b?sslmode=disable',
      TEST_DATABASE_URL: 'postgres://u@127.0.0.1:5432/b?sslmode=disable',
      PGHOST: '127.0.0.1',
      PGPORT: '5432',
      PGUSER: 'u',
      PGDATABASE: 'b',
      PGSSLMODE: 'disable',
    });
    expect('PGPASSWORD' in env && env.PGPASSWORD === undefined).toBe(true);
    expect(PG_ENV_KEYS.every((key) => key in env)).toBe(true);
  });
});
