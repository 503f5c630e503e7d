/**
 * Consort's Lakebase calls and the Lakebase stand-in's answers, checked against the Databricks
 * Postgres API as the SDKs' `postgres` service defines it (test/emulators/lakebase-api.ts, closed
 * objects: a misspelt or invented field fails): every exchange of a provider session — create with
 * TTL and point in time, endpoint, credentials, paged listing, a prepared branch, an ambiguous create
 * adopted, reset, purging deletes, gc — must be a documented call with documented fields.
 */
import { z } from 'zod';
import {
  Branch,
  Credential,
  Endpoint,
  ListBranches,
  ListEndpoints,
  Me,
  Operation,
  Project,
} from '../../../src/branches/lakebase/api.js';
import { createLakebaseProvider } from '../../../src/branches/lakebase/provider.js';
import { parseLakebaseSettings } from '../../../src/branches/lakebase/settings.js';
import { fastClock } from '../../emulators/clock.js';
import { LAKEBASE_API } from '../../emulators/lakebase-api.js';
import { LakebaseEmulator } from '../../emulators/lakebase.js';
import { OpenApiChecker } from '../../emulators/openapi.js';

const checker = new OpenApiChecker(LAKEBASE_API, '/api/2.0/postgres');

describe('the Databricks Postgres API, as the SDKs define it', () => {
  it("every field Consort's parsers read from an answer is one the definition has", () => {
    const b = '/projects/{project}/branches/{branch}';
    const read: [string, Parameters<OpenApiChecker['unknownReads']>[0]][] = [
      ['GET /projects/{project}', Project],
      ['GET /projects/{project}/branches', ListBranches],
      [`GET ${b}`, Branch],
      [`GET ${b}/endpoints`, ListEndpoints],
      [`GET ${b}/operations/{operation}`, Operation],
      ['POST /credentials', Credential],
      ['GET /api/2.0/preview/scim/v2/Me', Me],
    ];
    expect(
      read.flatMap(([route, parser]) => checker.unknownReads(parser, checker.responseSchema(route), route)),
    ).toEqual([]);
    // An operation's result is the resource it made: a Branch, an Endpoint.
    expect(checker.unknownReads(Branch, { $ref: '#/components/schemas/Branch' })).toEqual([]);
    expect(checker.unknownReads(Endpoint, { $ref: '#/components/schemas/Endpoint' })).toEqual([]);
    expect(
      checker.unknownReads(
        Branch.extend({ status: z.object({ deleted: z.boolean().optional() }).optional() }),
        checker.responseSchema(`GET ${b}`),
      ),
    ).toEqual(['(answer).status.deleted: not in the description']);
  });

  it('the checker catches what it is for: a misspelt field, a wrong enum, an undocumented parameter, an error body of another shape, a bad OAuth form', () => {
    expect(
      checker.validate(
        { $ref: '#/components/schemas/Branch' },
        { spec: { sourceBranch: 'projects/p/branches/b' } },
        'create',
      ),
    ).toEqual([expect.stringContaining('unknown property "sourceBranch"')]);
    expect(
      checker.validate(
        { $ref: '#/components/schemas/Endpoint' },
        { spec: { endpoint_type: 'READ_WRITE' } },
        'endpoint',
      ),
    ).toEqual([expect.stringContaining('is not one of')]);
    expect(
      checker.check({
        method: 'DELETE',
        path: '/api/2.0/postgres/projects/p/branches/b',
        query: '?hard_delete=true',
        status: 200,
        body: '',
        response: undefined,
      }),
    ).toEqual([expect.stringContaining('undocumented query parameter "hard_delete"')]);
    expect(
      checker.check({
        method: 'GET',
        path: '/api/2.0/postgres/projects/p/branches/b',
        query: '',
        status: 200,
        handledStatus: 200,
        body: '',
        response: { name: 'projects/p/branches/b', status: { state: 'READY' } },
      }),
    ).toEqual([expect.stringContaining('unknown property "state"')]);
    expect(
      checker.check({
        method: 'POST',
        path: '/api/2.0/postgres/projects/p/branches',
        query: '?branch_id=pr-1',
        status: 200,
        body: { spec: { source_branch: 'production', no_expiry: true } },
        response: undefined,
      }),
    ).toEqual([expect.stringContaining('"production" does not match')]);
    // The OAuth form, checked field by field like a JSON body.
    expect(
      checker.check({
        method: 'POST',
        path: '/oidc/v1/token',
        query: '',
        status: 200,
        body: 'grant_type=client_credential&scope=all-apis',
        response: undefined,
      }),
    ).toEqual([expect.stringContaining('"client_credential" is not one of')]);
    expect(
      checker.check({
        method: 'GET',
        path: '/api/2.0/postgres/projects/p/branches/b',
        query: '',
        status: 404,
        handledStatus: 404,
        body: '',
        response: { errorCode: 'NOT_FOUND', message: 'no branch b' },
      }),
    ).toEqual([
      expect.stringContaining('missing required "error_code"'),
      expect.stringContaining('unknown property "errorCode"'),
    ]);
  });

  it('every exchange of a provider session follows the definition', async () => {
    const emu = await new LakebaseEmulator({
      clientId: 'sp-shapes',
      clientSecret: 'shapes-secret-1',
      token: 'dapi-shapes-1',
      opPolls: 2,
      pageSize: 2,
    }).start();
    const p = createLakebaseProvider(parseLakebaseSettings(emu.env('m2m')), { clock: fastClock(), sslMode: 'disable' });
    try {
      await p.capabilities();
      await p.create({ name: 'pr-50', ttlMs: 3_600_000, at: new Date(Date.now() - 1000) });
      await p.create({ name: 'pr-50-suite', parent: 'pr-50', prepare: async () => undefined });
      await p.connectionUri('pr-50');
      // With a personal access token the Postgres role is the token's owner, asked of the workspace.
      const pat = createLakebaseProvider(parseLakebaseSettings(emu.env('token')), {
        clock: fastClock(),
        sslMode: 'disable',
      });
      expect(await pat.connectionUri('pr-50')).toContain(encodeURIComponent('ci@example.com'));
      await pat.close();
      await p.list();
      emu.server.fail({ method: 'POST', path: /\/branches$/, status: 504, afterHandling: true });
      await p.create({ name: 'pr-51' });
      await p.reset('pr-51');
      await p.delete('pr-50', { recursive: true });
      await p.gc(new Date(Date.now() + 86_400_000));
      // The stand-in's refusals, which Consort's error mapping reads (`error_code`, `message`).
      const token = await bearer(emu.server.url);
      const refused = async (method: string, path: string, body?: unknown) =>
        (
          await fetch(`${emu.server.url}/api/2.0/postgres/projects/consort-emu${path}`, {
            method,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            ...(body ? { body: JSON.stringify(body) } : {}),
          })
        ).status;
      expect(await refused('GET', '/branches/missing-1')).toBe(404);
      expect(await refused('POST', '/branches?branch_id=pr-51', { spec: { no_expiry: true } })).toBe(409);
      expect(await refused('DELETE', '/branches/production?purge=true')).toBe(400);
      const src = 'projects/consort-emu/branches/production';
      const postgres = emu.server.exchanges.filter((ex) => ex.path.startsWith('/api/2.0/postgres/'));
      expect(emu.server.exchanges.flatMap((ex) => checker.check(ex))).toEqual([]);
      // A request the definition does not allow is refused, not served: source_branch is a resource
      // name (projects/{project_id}/branches/{branch_id}), so a bare id would hide a bug of Consort's.
      expect(
        await refused('POST', '/branches?branch_id=pr-52', { spec: { source_branch: 'production', no_expiry: true } }),
      ).toBe(400);
      expect(emu.branches.has('pr-52')).toBe(false);
      // And what the SDKs' docs rule out beyond the types: no_expiry false ("the request is invalid"),
      // a negative page_size, an endpoint outside EndpointSpec's bounds or with a bad endpoint_id.
      expect(
        await refused('POST', '/branches?branch_id=pr-53', { spec: { source_branch: src, no_expiry: false } }),
      ).toBe(400);
      expect(await refused('GET', '/branches?page_size=-1')).toBe(400);
      // A point in time outside the project's history retention, or ahead of now; an expiry already past.
      const at = (ms: number) => new Date(Date.now() + ms).toISOString();
      for (const spec of [
        { source_branch_time: at(-2 * 86_400_000), no_expiry: true },
        { source_branch_time: at(3_600_000), no_expiry: true },
        { expire_time: at(-60_000) },
      ])
        expect(await refused('POST', '/branches?branch_id=pr-54', { spec: { source_branch: src, ...spec } })).toBe(400);
      expect(emu.branches.has('pr-54')).toBe(false);
      const endpoint = (spec: Record<string, unknown>, id = 'primary') =>
        refused('POST', `/branches/pr-51/endpoints?endpoint_id=${id}`, {
          spec: { endpoint_type: 'ENDPOINT_TYPE_READ_WRITE', ...spec },
        });
      expect(await endpoint({ autoscaling_limit_min_cu: 0.25 })).toBe(400);
      expect(await endpoint({ autoscaling_limit_max_cu: 128 })).toBe(400);
      expect(await endpoint({ autoscaling_limit_min_cu: 0.5, autoscaling_limit_max_cu: 32 })).toBe(400);
      expect(await endpoint({ no_suspension: false })).toBe(400);
      expect(await endpoint({ suspend_timeout_duration: '30s' })).toBe(400);
      expect(await endpoint({}, 'Primary_1')).toBe(400);
      expect(emu.server.exchanges.map((ex) => `${ex.method} ${ex.path}`)).toEqual(
        expect.arrayContaining(['GET /api/2.0/preview/scim/v2/Me', 'POST /oidc/v1/token']),
      );
      const calls = new Set(
        postgres.map(
          (ex) =>
            `${ex.method} ${ex.path.replace(/\/operations\/.+$/, '/operations/{op}').replace(/branches\/[a-z0-9-]+/g, 'branches/{b}')}`,
        ),
      );
      expect([...calls].sort()).toEqual([
        'DELETE /api/2.0/postgres/projects/consort-emu/branches/{b}',
        'GET /api/2.0/postgres/projects/consort-emu',
        'GET /api/2.0/postgres/projects/consort-emu/branches',
        'GET /api/2.0/postgres/projects/consort-emu/branches/{b}',
        'GET /api/2.0/postgres/projects/consort-emu/branches/{b}/endpoints',
        'GET /api/2.0/postgres/projects/consort-emu/branches/{b}/endpoints/primary/operations/{op}',
        'GET /api/2.0/postgres/projects/consort-emu/branches/{b}/operations/{op}',
        'POST /api/2.0/postgres/credentials',
        'POST /api/2.0/postgres/projects/consort-emu/branches',
        'POST /api/2.0/postgres/projects/consort-emu/branches/{b}/endpoints',
      ]);
    } finally {
      await p.close();
      await emu.stop();
    }
  });
});

/** An OAuth access token from the stand-in, as Consort's M2M login gets one. */
async function bearer(url: string): Promise<string> {
  const res = await fetch(`${url}/oidc/v1/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from('sp-shapes:shapes-secret-1').toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials&scope=all-apis',
  });
  return ((await res.json()) as { access_token: string }).access_token;
}
