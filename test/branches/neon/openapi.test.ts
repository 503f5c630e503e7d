/**
 * Consort's Neon calls and the Neon stand-in's answers, checked against Neon's own API v2 OpenAPI
 * description (shipped in `@neondatabase/api-client`, whose TypeScript types are generated from
 * the same file): every exchange of a full provider run — create with TTL, point in time and
 * annotations, paginated listing, connection URIs, restore with preserve_under_name, an ambiguous
 * create adopted by name, delete — must be a documented operation with documented parameters,
 * request body and response.
 */
import type {
  AnnotationCreateValueRequest,
  BranchCreateRequest,
  BranchCreateRequestEndpointOptions,
  BranchRestoreRequest,
  EndpointType,
} from '@neondatabase/api-client';
import { z } from 'zod';
import { createNeonProvider } from '../../../src/branches/neon/provider.js';
import { parseNeonSettings } from '../../../src/branches/neon/settings.js';
import {
  BranchOperations,
  BranchResponse,
  ConnectionUri,
  createBody,
  CreatedBranch,
  Endpoints,
  ListBranches,
  OperationResponse,
  ProjectResponse,
  type BranchRestoreBody,
} from '../../../src/branches/neon/api.js';
import { fastClock } from '../../emulators/clock.js';
import { NeonEmulator } from '../../emulators/neon.js';
import { loadNeonOpenApi, OpenApiChecker } from '../../emulators/openapi.js';

/** The generated types use TypeScript enums; JSON carries their string values. */
type Json<T> = Omit<T, 'endpoints'> & {
  endpoints?: (Omit<BranchCreateRequestEndpointOptions, 'type'> & { type: `${EndpointType}` })[];
};

const doc = loadNeonOpenApi();
const checker = new OpenApiChecker(doc, '/api/v2');

describe('Neon API v2, as its OpenAPI file defines it', () => {
  it("Consort's request bodies have the generated types of the official client", () => {
    // Compile-time: these assignments fail `tsc` if a field name or type drifts from the API.
    const create: Json<BranchCreateRequest> & AnnotationCreateValueRequest = createBody(
      { name: 'pr-1', parentId: 'br-main-1', at: new Date(), ttlMs: 60_000 },
      { 'consort-pr': '1' },
      Date.now(),
    );
    const restore: BranchRestoreRequest = {
      source_branch_id: 'br-main-1',
      preserve_under_name: 'consort-stage-0123456789',
    } satisfies BranchRestoreBody;
    expect(checker.validate({ $ref: '#/components/schemas/BranchCreateRequest' }, create, 'create')).toEqual([]);
    expect(checker.validate({ $ref: '#/components/schemas/BranchRestoreRequest' }, restore, 'restore')).toEqual([]);
  });

  it("every field Consort's parsers read from an answer is one the description has", () => {
    const p = '/projects/{project_id}';
    const read: [string, Parameters<OpenApiChecker['unknownReads']>[0]][] = [
      [`GET ${p}`, ProjectResponse],
      [`GET ${p}/branches`, ListBranches],
      [`POST ${p}/branches`, CreatedBranch],
      [`GET ${p}/branches/{branch_id}`, BranchResponse],
      [`DELETE ${p}/branches/{branch_id}`, BranchOperations],
      [`POST ${p}/branches/{branch_id}/restore`, BranchOperations],
      [`GET ${p}/branches/{branch_id}/endpoints`, Endpoints],
      [`GET ${p}/connection_uri`, ConnectionUri],
      [`GET ${p}/operations/{operation_id}`, OperationResponse],
    ];
    expect(
      read.flatMap(([route, parser]) => checker.unknownReads(parser, checker.responseSchema(route), route)),
    ).toEqual([]);
    // What it is for: a misspelt field Consort would read as absent from every real answer.
    expect(
      checker.unknownReads(
        BranchResponse.extend({ branch: BranchResponse.shape.branch.extend({ expire_at: z.string().optional() }) }),
        checker.responseSchema(`GET ${p}/branches/{branch_id}`),
      ),
    ).toEqual(['(answer).branch.expire_at: not in the description']);
  });

  it('the checker catches what it is for: a bad id, a missing required field, an unknown parameter or body field, too many annotations, an error body of another shape', () => {
    expect(
      checker.validate(
        { $ref: '#/components/schemas/BranchRestoreRequest' },
        { source_branch_id: 'Not An Id!' },
        'restore',
      ),
    ).toEqual([expect.stringContaining('does not match')]);
    expect(checker.validate({ $ref: '#/components/schemas/Operation' }, { id: 'x', status: 'finished' }, 'op')).toEqual(
      expect.arrayContaining([expect.stringContaining('missing required "project_id"')]),
    );
    expect(
      checker.validate(
        { $ref: '#/components/schemas/Operation' },
        {
          id: 'x',
          project_id: 'p',
          action: 'create_branch',
          status: 'done',
          failures_count: 0,
          created_at: '2025-05-04T10:00:00Z',
          updated_at: '2025-05-04T10:00:01Z',
          total_duration_ms: 0,
        },
        'op',
      ),
    ).toEqual([expect.stringContaining('"done" is not one of')]);
    expect(
      checker.check({
        method: 'GET',
        path: '/api/v2/projects/p-1/branches',
        query: '?page_size=5',
        status: 200,
        body: '',
        response: undefined,
      }),
    ).toEqual([expect.stringContaining('undocumented query parameter "page_size"')]);
    expect(
      checker.check({
        method: 'POST',
        path: '/api/v2/projects/p-1/branches/br-1/reset',
        query: '',
        status: 200,
        body: {},
        response: undefined,
      }),
    ).toEqual([expect.stringContaining('no such operation')]);
    // A misspelt optional field is valid JSON that Neon (and the stand-in) would silently ignore.
    expect(
      checker.check({
        method: 'POST',
        path: '/api/v2/projects/p-1/branches',
        query: '',
        status: 201,
        body: {
          branch: { name: 'pr-1', parent_id: 'br-main-1', parent_timestmp: '2025-05-04T10:00:00Z' },
          endpoints: [{ type: 'read_write' }],
          annotation_value: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`consort-k${i}`, 'v'])),
        },
        response: undefined,
      }),
    ).toEqual([
      'POST /projects/p-1/branches request.branch: property "parent_timestmp" is not in the description',
      'POST /projects/p-1/branches request.annotation_value: 51 properties, more than 50',
    ]);
    // An error answer is Neon's GeneralError: `code` and `message` (the adapter reads the message).
    expect(
      checker.check({
        method: 'GET',
        path: '/api/v2/projects/p-1/branches/br-1',
        query: '',
        status: 404,
        handledStatus: 404,
        body: '',
        response: { error: 'not found' },
      }),
    ).toEqual([
      'GET /projects/p-1/branches/br-1 404: missing required "message"',
      'GET /projects/p-1/branches/br-1 404: missing required "code"',
    ]);
  });

  it('every exchange of a full provider run follows the description', async () => {
    const emu = await new NeonEmulator({ opPolls: 2, pageSize: 2 }).start();
    const p = createNeonProvider(parseNeonSettings(emu.env()), { clock: fastClock() });
    try {
      await p.capabilities();
      await p.create({
        name: 'pr-40',
        ttlMs: 3_600_000,
        gitBranch: 'feature/x',
        annotations: { pr: '40' },
        at: new Date(Date.now() - 1000),
      });
      await p.create({ name: 'pr-40-suite', parent: 'pr-40', prepare: async () => undefined });
      await p.connectionUri('pr-40');
      await p.list();
      emu.server.fail({ method: 'POST', path: /\/branches$/, status: 504, afterHandling: true });
      await p.create({ name: 'pr-41' });
      await p.delete('pr-40-suite');
      await p.create({
        name: 'pr-40-x',
        parent: 'pr-40',
        prepare: async () => {
          await p.reset('pr-40');
        },
      });
      await p.delete('pr-40', { recursive: true });
      await p.delete('pr-41');
      await p.gc(new Date(Date.now() + 86_400_000));
      // The stand-in's refusals, which Consort's error mapping reads: each must be Neon's GeneralError.
      const main = emu.byName('main')!.id;
      const refused = async (method: string, path: string, body?: unknown, key = emu.o.apiKey) =>
        (
          await fetch(`${emu.server.url}/api/v2/projects/${emu.o.projectId}${path}`, {
            method,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            ...(body ? { body: JSON.stringify(body) } : {}),
          })
        ).status;
      expect(await refused('GET', '/branches/br-missing-1')).toBe(404);
      expect(await refused('GET', '/branches', undefined, 'napi_wrong')).toBe(401);
      expect(await refused('POST', '/branches', { branch: { name: 'main', parent_id: main } })).toBe(409);
      expect(await refused('POST', '/branches', { branch: { name: 'x-1', parent_id: 'br-missing-1' } })).toBe(404);
      expect(await refused('DELETE', `/branches/${main}`)).toBe(400);
      // expires_at is RFC 3339 "with precision up to seconds": milliseconds are refused, not rounded.
      const soon = new Date(Date.now() + 3_600_000).toISOString();
      const tooPrecise = {
        branch: { name: 'x-2', parent_id: main, expires_at: soon },
        endpoints: [{ type: 'read_write' }],
      };
      expect(await refused('POST', '/branches', tooPrecise)).toBe(400);
      const problems = emu.server.exchanges.flatMap((ex) => checker.check(ex));
      expect(problems).toEqual([]);
      const operations = new Set(
        emu.server.exchanges.map(
          (ex) => `${ex.method} ${ex.path.replace(/br-[0-9a-f]+/g, '{branch}').replace(/[0-9a-f-]{36}/g, '{op}')}`,
        ),
      );
      expect([...operations].sort()).toEqual(
        expect.arrayContaining([
          `DELETE /api/v2/projects/${emu.o.projectId}/branches/{branch}`,
          `GET /api/v2/projects/${emu.o.projectId}/branches`,
          `GET /api/v2/projects/${emu.o.projectId}/branches/{branch}`,
          `GET /api/v2/projects/${emu.o.projectId}/connection_uri`,
          `GET /api/v2/projects/${emu.o.projectId}/operations/{op}`,
          `POST /api/v2/projects/${emu.o.projectId}/branches`,
          `POST /api/v2/projects/${emu.o.projectId}/branches/{branch}/restore`,
        ]),
      );
    } finally {
      await p.close();
      await emu.stop();
    }
  });
});
