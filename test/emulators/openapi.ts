/**
 * Checks recorded HTTP exchanges against an OpenAPI 3.0 description: the operation exists, every
 * query parameter is documented and well-typed, required ones are present, the request body and
 * each 2xx answer match their schemas. So a test can prove that both Consort's requests and an
 * emulator's answers follow the service's own definition (Neon's is shipped in
 * `@neondatabase/api-client`, generated from the same file as its types).
 *
 * GitHub's is `@octokit/openapi`'s generated/api.github.com.json.
 *
 * It understands the subset of JSON Schema those files use: $ref (to schemas, parameters and
 * responses), allOf, oneOf/anyOf (one match is enough), nullable, enum, type (also as a list),
 * required, properties, additionalProperties, items, string patterns, lengths and formats
 * (date-time, date, uri, email), number bounds, item and property counts; parameters in the path
 * (also those declared once for every operation of a path) and in the query; JSON and form bodies.
 *
 * A request body is held to the fields the description names, at every depth, even where the
 * schema leaves `additionalProperties` open (Neon's and GitHub's mostly do): a misspelt optional
 * field (`parent_timestmp`) is otherwise valid JSON that the service silently ignores, and a
 * stand-in that reads only the fields it knows hides it just as well. Answers stay open: services
 * add fields.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import type { z } from 'zod';
import type { Exchange } from './json-server.js';

type Schema = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
  $ref?: string;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses: Record<string, unknown>;
}
export interface OpenApiDoc {
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
}

export function loadNeonOpenApi(): OpenApiDoc {
  return YAML.parse(
    readFileSync(join(process.cwd(), 'node_modules/@neondatabase/api-client/public-v2-for-users.gen.yaml'), 'utf8'),
  ) as OpenApiDoc;
}

/** GitHub's REST API (api.github.com), as `@octokit/openapi` ships it (13 MB of JSON). */
export function loadGitHubOpenApi(): OpenApiDoc {
  return JSON.parse(
    readFileSync(join(process.cwd(), 'node_modules/@octokit/openapi/generated/api.github.com.json'), 'utf8'),
  ) as OpenApiDoc;
}

export class OpenApiChecker {
  constructor(
    private readonly doc: OpenApiDoc,
    private readonly basePath: string,
  ) {}

  /** Problems with one exchange, as readable lines (empty when it follows the description). */
  check(ex: Exchange): string[] {
    const path = ex.path.startsWith(this.basePath) ? ex.path.slice(this.basePath.length) : ex.path;
    const where = `${ex.method} ${path}`;
    const found = this.operation(ex.method.toLowerCase(), path);
    if (!found) return [`${where}: no such operation in the description`];
    const { op, shared, pathValues } = found;
    const out: string[] = [];
    const params = [...shared, ...(op.parameters ?? [])].map((p) => this.deref<Parameter>(p));
    for (const [name, value] of Object.entries(pathValues)) {
      const p = params.find((x) => x.in === 'path' && x.name === name);
      if (p) out.push(...this.validate(p.schema ?? {}, coerce(p.schema ?? {}, value), `${where} {${name}}`));
    }
    const query = new URLSearchParams(ex.query);
    for (const [name, value] of query) {
      const p = params.find((x) => x.in === 'query' && x.name === name);
      if (!p) out.push(`${where}: undocumented query parameter "${name}"`);
      else out.push(...this.validate(p.schema ?? {}, coerce(p.schema ?? {}, value), `${where} ?${name}`));
    }
    for (const p of params)
      if (p.in === 'query' && p.required && !query.has(p.name))
        out.push(`${where}: missing required query parameter "${p.name}"`);
    const content = op.requestBody?.content;
    const form = content?.['application/x-www-form-urlencoded']?.schema;
    const bodySchema = content?.['application/json']?.schema ?? form;
    const hasBody = ex.body !== '' && ex.body !== undefined;
    // A form body (an OAuth token request) is checked as the object of its fields.
    const body = form && typeof ex.body === 'string' ? Object.fromEntries(new URLSearchParams(ex.body)) : ex.body;
    if (bodySchema && hasBody) out.push(...this.validate(bodySchema, body, `${where} request`, 'strict'));
    if (!bodySchema && hasBody) out.push(`${where}: sends a body the operation does not take`);
    const status = ex.handledStatus;
    if (status !== undefined && status >= 300 && status < 400 && !(String(status) in op.responses))
      out.push(`${where}: answers ${status}, which the operation does not document`);
    if (status !== undefined && status >= 200 && status < 300) {
      const response = this.deref<{ content?: Record<string, { schema?: Schema }> }>(
        (op.responses[String(status)] as Schema | undefined) ?? {},
      );
      if (!(String(status) in op.responses))
        out.push(`${where}: answers ${status}, which the operation does not document`);
      const schema = response.content?.['application/json']?.schema;
      if (schema && ex.response !== undefined) out.push(...this.validate(schema, ex.response, `${where} ${status}`));
    }
    if (status !== undefined && status >= 400 && ex.response !== undefined) {
      // An error answer follows the error schema the operation gives for its status, its class (4XX) or `default`.
      const documented = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in op.responses);
      const response = this.deref<{ content?: Record<string, { schema?: Schema }> }>(
        documented ? op.responses[documented] : {},
      );
      const schema = response.content?.['application/json']?.schema;
      if (schema) out.push(...this.validate(schema, ex.response, `${where} ${status}`));
    }
    return out;
  }

  private operation(
    method: string,
    path: string,
  ): { template: string; op: Operation; shared: Parameter[]; pathValues: Record<string, string> } | undefined {
    // A parameter is one segment, unless it is declared `x-multi-segment` (GitHub's `{ref}`, `{path}`).
    const candidates = Object.entries(this.doc.paths)
      .filter(([, ops]) => method in ops)
      .map(([template, ops]) => {
        const op = ops[method] as Operation;
        const declared = [...((ops.parameters as Parameter[] | undefined) ?? []), ...(op.parameters ?? [])].map((p) =>
          this.deref<Parameter & { 'x-multi-segment'?: boolean }>(p),
        );
        const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
        const literals = template.split(/\{[^}]+\}/).map((l) => l.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
        const segment = (name: string) =>
          declared.some((p) => p.in === 'path' && p.name === name && p['x-multi-segment'] === true) ? '.+' : '[^/]+';
        const pattern = literals.map((l, i) => (i === 0 ? l : `(${segment(names[i - 1]!)})${l}`)).join('');
        const m = new RegExp(`^${pattern}$`).exec(path);
        return { template, ops, names, m, literal: template.replace(/\{[^}]+\}/g, '').length };
      })
      .filter((c) => c.m !== null)
      .sort((a, b) => b.literal - a.literal); // the most literal text wins: `/branches/count` over `/branches/{id}`
    const hit = candidates[0];
    if (hit)
      return {
        template: hit.template,
        op: hit.ops[method] as Operation,
        shared: (hit.ops.parameters as Parameter[] | undefined) ?? [],
        pathValues: Object.fromEntries(hit.names.map((n, i) => [n, decodeURIComponent(hit.m![i + 1]!)])),
      };
    return undefined;
  }

  /** The JSON schema of an operation's answer (`GET /projects/{project_id}`; the first 2xx unless `status` is given). */
  responseSchema(route: string, status?: number): Schema {
    const [method = '', template = ''] = route.split(' ');
    const op = (this.doc.paths[template] as Record<string, Operation> | undefined)?.[method.toLowerCase()];
    if (!op) throw new Error(`${route}: no such operation in the description`);
    const key = status !== undefined ? String(status) : Object.keys(op.responses).find((k) => /^2\d\d$/.test(k));
    const response = this.deref<{ content?: Record<string, { schema?: Schema }> }>(op.responses[key ?? ''] ?? {});
    const schema = response.content?.['application/json']?.schema;
    if (!schema) throw new Error(`${route}: no JSON answer for ${key ?? '2xx'}`);
    return schema;
  }

  /**
   * Fields a zod parser of Consort's reads that the description's schema does not have: a misspelt
   * optional field parses as absent from every real answer, silently. Objects are walked with
   * their allOf parts and oneOf/anyOf options together; optional, nullable and defaulted fields,
   * arrays, records and unions are followed; a free-form object (no properties named) takes any.
   */
  unknownReads(parser: z.ZodType, schemaIn: Schema, at = '(answer)'): string[] {
    let def = (parser as unknown as { _zod: { def: ZodDef } })._zod.def;
    while (def.innerType && ['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch'].includes(def.type))
      def = (def.innerType as unknown as { _zod: { def: ZodDef } })._zod.def;
    const schema = this.deref<Schema>(schemaIn);
    const out: string[] = [];
    if (def.type === 'object' && def.shape) {
      const known = this.properties(schema);
      if (!known) return out;
      for (const [k, v] of Object.entries(def.shape))
        if (!(k in known)) out.push(`${at}.${k}: not in the description`);
        else out.push(...this.unknownReads(v, known[k]!, `${at}.${k}`));
    } else if (def.type === 'array' && def.element) {
      out.push(...this.unknownReads(def.element, (schema.items as Schema | undefined) ?? {}, `${at}[]`));
    } else if (def.type === 'record' && def.valueType) {
      const extra = schema.additionalProperties;
      if (typeof extra === 'object' && extra !== null)
        out.push(...this.unknownReads(def.valueType, extra as Schema, `${at}{}`));
    } else if (def.type === 'union' && def.options) {
      for (const option of def.options) out.push(...this.unknownReads(option, schema, at));
    }
    return out;
  }

  /** An object schema's properties with those of its allOf parts and oneOf/anyOf options; undefined when it names none. */
  private properties(schemaIn: Schema, depth = 0): Record<string, Schema> | undefined {
    const schema = this.deref<Schema>(schemaIn);
    let found = schema.properties !== undefined;
    const all: Record<string, Schema> = { ...((schema.properties as Record<string, Schema> | undefined) ?? {}) };
    for (const key of ['allOf', 'oneOf', 'anyOf'] as const)
      for (const part of (schema[key] as Schema[] | undefined) ?? []) {
        const more = depth < 20 ? this.properties(part, depth + 1) : undefined;
        if (more) {
          found = true;
          Object.assign(all, more);
        }
      }
    return found ? all : undefined;
  }

  private deref<T>(value: unknown): T {
    let v = value as { $ref?: string };
    for (let i = 0; v && typeof v.$ref === 'string' && i < 20; i++) {
      const parts = v.$ref.replace(/^#\//, '').split('/');
      v = parts.reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], this.doc) as { $ref?: string };
    }
    return v as T;
  }

  /**
   * The property names an object may carry under `schema` (its own, its allOf parts', its
   * oneOf/anyOf options'), or undefined when it takes any: it declares `additionalProperties`
   * (other than false), or names no properties at all (a free-form object such as `{ type: object }`).
   * A part's `additionalProperties: true` only lets the composing schema's properties through
   * (GitHub's check-run update: `anyOf: [{ properties: { status }, additionalProperties: true }]`).
   */
  private declared(schemaIn: Schema, depth = 0): Set<string> | undefined {
    const schema = this.deref<Schema>(schemaIn);
    if (depth > 20) return undefined;
    const extra = schema.additionalProperties;
    if (extra !== undefined && extra !== false && !(depth > 0 && extra === true)) return undefined;
    const names = new Set(Object.keys((schema.properties as Record<string, Schema> | undefined) ?? {}));
    let composed = false;
    for (const key of ['allOf', 'oneOf', 'anyOf'] as const)
      for (const part of (schema[key] as Schema[] | undefined) ?? []) {
        composed = true;
        const more = this.declared(part, depth + 1);
        if (!more) return undefined;
        for (const n of more) names.add(n);
      }
    if (names.size === 0 && !composed && extra !== false && depth === 0) return undefined;
    return names;
  }

  /**
   * Problems of `value` against a schema. `strict` (request bodies): an object may hold only the
   * properties its schema names — together with those of its allOf parts and oneOf/anyOf options —
   * unless the schema declares `additionalProperties`. (`nested` is that check already done for
   * this object, by the schema that composes the one at hand.)
   */
  validate(schemaIn: Schema, value: unknown, at: string, mode: 'open' | 'strict' | 'nested' = 'open'): string[] {
    const schema = this.deref<Schema>(schemaIn);
    if (value === null && schema.nullable === true) return [];
    const out: string[] = [];
    if (mode === 'strict' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const known = this.declared(schema);
      if (known)
        for (const k of Object.keys(value))
          if (!known.has(k)) out.push(`${at}: property "${k}" is not in the description`);
    }
    const inner = mode === 'open' ? 'open' : 'nested';
    if (Array.isArray(schema.allOf))
      for (const s of schema.allOf as Schema[]) out.push(...this.validate(s, value, at, inner));
    for (const key of ['oneOf', 'anyOf'] as const) {
      const options = schema[key] as Schema[] | undefined;
      if (options && !options.some((s) => this.validate(s, value, at, inner).length === 0))
        out.push(`${at}: matches none of ${key}`);
    }
    if (Array.isArray(schema.enum) && !schema.enum.includes(value))
      out.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
    const declared = schema.type ?? (schema.properties ? 'object' : undefined);
    const types = Array.isArray(declared) ? (declared as string[]) : declared === undefined ? [] : [declared as string];
    if (types.length > 1) {
      // A list of types (JSON Schema 2020-12, OpenAPI 3.1): one of them must fit.
      if (!types.some((t) => this.validate({ ...schema, type: t }, value, at, mode).length === 0))
        out.push(`${at}: ${JSON.stringify(value)} is none of the types ${JSON.stringify(types)}`);
      return out;
    }
    const type = types[0];
    if (type === 'null') {
      if (value !== null) out.push(`${at}: expected null, got ${JSON.stringify(value)}`);
    } else if (type === 'object') {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return [...out, `${at}: expected an object, got ${JSON.stringify(value)}`];
      const obj = value as Record<string, unknown>;
      for (const r of (schema.required as string[] | undefined) ?? [])
        if (!(r in obj)) out.push(`${at}: missing required "${r}"`);
      const count = Object.keys(obj).length;
      if (typeof schema.minProperties === 'number' && count < schema.minProperties)
        out.push(`${at}: ${count} properties, fewer than ${schema.minProperties}`);
      if (typeof schema.maxProperties === 'number' && count > schema.maxProperties)
        out.push(`${at}: ${count} properties, more than ${schema.maxProperties}`);
      const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
      const deeper = mode === 'open' ? 'open' : 'strict';
      for (const [k, v] of Object.entries(obj)) {
        if (props[k]) out.push(...this.validate(props[k], v, `${at}.${k}`, deeper));
        else if (schema.additionalProperties === false) out.push(`${at}: unknown property "${k}"`);
        else if (typeof schema.additionalProperties === 'object')
          out.push(...this.validate(schema.additionalProperties as Schema, v, `${at}.${k}`, deeper));
      }
    } else if (type === 'array') {
      if (!Array.isArray(value)) return [...out, `${at}: expected an array`];
      if (typeof schema.minItems === 'number' && value.length < schema.minItems)
        out.push(`${at}: ${value.length} items, fewer than ${schema.minItems}`);
      if (typeof schema.maxItems === 'number' && value.length > schema.maxItems)
        out.push(`${at}: ${value.length} items, more than ${schema.maxItems}`);
      value.forEach((v, i) =>
        out.push(
          ...this.validate(
            (schema.items as Schema | undefined) ?? {},
            v,
            `${at}[${i}]`,
            mode === 'open' ? 'open' : 'strict',
          ),
        ),
      );
    } else if (type === 'string') {
      if (typeof value !== 'string') out.push(`${at}: expected a string, got ${JSON.stringify(value)}`);
      else {
        if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value))
          out.push(`${at}: "${value}" does not match ${schema.pattern}`);
        if (typeof schema.minLength === 'number' && [...value].length < schema.minLength)
          out.push(`${at}: shorter than ${schema.minLength} characters`);
        if (typeof schema.maxLength === 'number' && [...value].length > schema.maxLength)
          out.push(`${at}: longer than ${schema.maxLength} characters`);
        const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
        if (format && !format(value)) out.push(`${at}: "${value}" is not a ${String(schema.format)}`);
      }
    } else if (type === 'integer' || type === 'number') {
      if (type === 'integer' ? !Number.isInteger(value) : typeof value !== 'number')
        out.push(`${at}: expected ${type === 'integer' ? 'an integer' : 'a number'}, got ${JSON.stringify(value)}`);
      else {
        if (typeof schema.minimum === 'number' && (value as number) < schema.minimum)
          out.push(`${at}: ${String(value)} is below ${schema.minimum}`);
        if (typeof schema.maximum === 'number' && (value as number) > schema.maximum)
          out.push(`${at}: ${String(value)} is above ${schema.maximum}`);
      }
    } else if (type === 'boolean') {
      if (typeof value !== 'boolean') out.push(`${at}: expected a boolean, got ${JSON.stringify(value)}`);
    }
    return out;
  }
}

/** The part of a zod 4 schema's definition `unknownReads` walks. */
interface ZodDef {
  type: string;
  innerType?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
}

/** The string formats checked (others, like int64 or GitHub's repo.nwo, pass). */
const FORMATS: Record<string, (v: string) => boolean> = {
  'date-time': (v) =>
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(v) && !Number.isNaN(Date.parse(v)),
  date: (v) => /^\d{4}-\d\d-\d\d$/.test(v) && !Number.isNaN(Date.parse(v)),
  uri: (v) => /^[a-z][a-z0-9+.-]*:/i.test(v) && URL.canParse(v),
  email: (v) => /^[^@\s]+@[^@\s]+$/.test(v),
};

/** A path or query string value as the type its schema says. */
function coerce(schema: Schema, value: string): unknown {
  if (schema.type === 'integer' || schema.type === 'number')
    return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  if (schema.type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  return value;
}
