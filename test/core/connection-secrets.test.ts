/** connectionSecrets: every form in which a connection string's password can appear in output. */
import { connectionSecrets } from '../../src/core/redact.js';

describe('connectionSecrets', () => {
  it('gives the URL and its password, raw and decoded', () => {
    expect(connectionSecrets('postgresql://ci:p%40ss%2Fw0rd@db.internal:5432/app')).toEqual([
      'postgresql://ci:p%40ss%2Fw0rd@db.internal:5432/app',
      'p%40ss%2Fw0rd',
      'p@ss/w0rd',
    ]);
  });

  it('gives the password once when it needs no encoding', () => {
    expect(connectionSecrets('postgres://postgres:Zx81-plain@127.0.0.1:5432/postgres')).toEqual([
      'postgres://postgres:Zx81-plain@127.0.0.1:5432/postgres',
      'Zx81-plain',
    ]);
  });

  it('gives only the URL when there is no password, and survives a malformed escape', () => {
    expect(connectionSecrets('postgres://postgres@127.0.0.1/postgres')).toEqual([
      'postgres://postgres@127.0.0.1/postgres',
    ]);
    expect(connectionSecrets('postgres://u:100%zz@h/d')).toEqual(['postgres://u:100%zz@h/d', '100%zz']);
  });

  it('reads any scheme (a mistyped mysql:// URL is still a secret)', () => {
    expect(connectionSecrets('mysql://root:hunter2@db/x')).toContain('hunter2');
  });
});
