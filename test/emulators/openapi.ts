/**
 * Checks recorded HTTP exchanges against an OpenAPI 3.0 description: the operation exists, every
 * query parameter is documented and well-typed, required ones are present, the request body and
 * each 2xx answer match their schemas. So a test can prove that both Consort's requests and an
 * emulator's answers follow the service's own definition (Neon's is shipped in
 * `@neondatabase/api-client`, generated from the same file as its types).
 *
 * It understands the subset of JSON Schema those files use: $ref, allOf, oneOf/anyOf, nullable,
 * enum, type, required, properties, additionalProperties, items and string patterns.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
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
    const { op, shared } = found;
    const out: string[] = [];
    const params = [...shared, ...(op.parameters ?? [])].map((p) => this.deref<Parameter>(p));
    const query = new URLSearchParams(ex.query);
    for (const [name, value] of query) {
      const p = params.find((x) => x.in === 'query' && x.name === name);
      if (!p) out.push(`${where}: undocumented query parameter "${name}"`);
      else out.push(...this.validate(p.schema ?? {}, coerce(p.schema ?? {}, value), `${where} ?${name}`));
    }
    for (const p of params)
      if (p.in === 'query' && p.required && !query.has(p.name))
        out.push(`${where}: missing required query parameter "${p.name}"`);
    const bodySchema = op.requestBody?.content?.['application/json']?.schema;
    const hasBody = ex.body !== '' && ex.body !== undefined;
    if (bodySchema && hasBody) out.push(...this.validate(bodySchema, ex.body, `${where} request`));
    if (!bodySchema && hasBody) out.push(`${where}: sends a body the operation does not take`);
    const status = ex.handledStatus;
    if (status !== undefined && status >= 200 && status < 300) {
      const response = this.deref<{ content?: Record<string, { schema?: Schema }> }>(
        (op.responses[String(status)] as Schema | undefined) ?? {},
      );
      if (!(String(status) in op.responses))
        out.push(`${where}: answers ${status}, which the operation does not document`);
      const schema = response.content?.['application/json']?.schema;
      if (schema && ex.response !== undefined) out.push(...this.validate(schema, ex.response, `${where} ${status}`));
    }
    return out;
  }

  private operation(method: string, path: string): { op: Operation; shared: Parameter[] } | undefined {
    const candidates = Object.entries(this.doc.paths)
      .filter(
        ([template, ops]) => method in ops && new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
      )
      .sort(([a], [b]) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0)); // literal segments win
    const hit = candidates[0];
    return hit
      ? { op: hit[1][method] as Operation, shared: (hit[1].parameters as Parameter[] | undefined) ?? [] }
      : undefined;
  }

  private deref<T>(value: unknown): T {
    let v = value as { $ref?: string };
    for (let i = 0; v && typeof v.$ref === 'string' && i < 20; i++) {
      const parts = v.$ref.replace(/^#\//, '').split('/');
      v = parts.reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], this.doc) as { $ref?: string };
    }
    return v as T;
  }

  validate(schemaIn: Schema, value: unknown, at: string): string[] {
    const schema = this.deref<Schema>(schemaIn);
    if (value === null && schema.nullable === true) return [];
    const out: string[] = [];
    if (Array.isArray(schema.allOf)) for (const s of schema.allOf as Schema[]) out.push(...this.validate(s, value, at));
    for (const key of ['oneOf', 'anyOf'] as const) {
      const options = schema[key] as Schema[] | undefined;
      if (options && !options.some((s) => this.validate(s, value, at).length === 0))
        out.push(`${at}: matches none of ${key}`);
    }
    if (Array.isArray(schema.enum) && !schema.enum.includes(value))
      out.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
    const type = schema.type ?? (schema.properties ? 'object' : undefined);
    if (type === 'object') {
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return [...out, `${at}: expected an object, got ${JSON.stringify(value)}`];
      const obj = value as Record<string, unknown>;
      for (const r of (schema.required as string[] | undefined) ?? [])
        if (!(r in obj)) out.push(`${at}: missing required "${r}"`);
      const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
      for (const [k, v] of Object.entries(obj)) {
        if (props[k]) out.push(...this.validate(props[k], v, `${at}.${k}`));
        else if (schema.additionalProperties === false) out.push(`${at}: unknown property "${k}"`);
        else if (typeof schema.additionalProperties === 'object')
          out.push(...this.validate(schema.additionalProperties as Schema, v, `${at}.${k}`));
      }
    } else if (type === 'array') {
      if (!Array.isArray(value)) return [...out, `${at}: expected an array`];
      value.forEach((v, i) => out.push(...this.validate((schema.items as Schema | undefined) ?? {}, v, `${at}[${i}]`)));
    } else if (type === 'string') {
      if (typeof value !== 'string') out.push(`${at}: expected a string, got ${JSON.stringify(value)}`);
      else if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern).test(value))
        out.push(`${at}: "${value}" does not match ${schema.pattern}`);
    } else if (type === 'integer') {
      if (!Number.isInteger(value)) out.push(`${at}: expected an integer, got ${JSON.stringify(value)}`);
    } else if (type === 'number') {
      if (typeof value !== 'number') out.push(`${at}: expected a number, got ${JSON.stringify(value)}`);
    } else if (type === 'boolean') {
      if (typeof value !== 'boolean') out.push(`${at}: expected a boolean, got ${JSON.stringify(value)}`);
    }
    return out;
  }
}

/** A query string value as the type its schema says. */
function coerce(schema: Schema, value: string): unknown {
  if (schema.type === 'integer' || schema.type === 'number')
    return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  if (schema.type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  return value;
}
