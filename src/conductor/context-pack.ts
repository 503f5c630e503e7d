/**
 * A turn's context pack: everything the role needs and nothing outside its `reads` — its
 * instructions, the relevant acceptance criteria, the current test-list item, a bounded failing
 * output for GREEN, the schema of the turn's database branch and where code and tests live. Built
 * purely from what the driver read, so the same inputs give the same bytes (and the same hash,
 * which the turn record keeps).
 */
import { matchesAny } from '../core/glob.js';
import type { TurnPlan } from './effects.js';
import { sha256 } from './gates.js';
import type { Role } from './roles.js';
import type { TurnStep } from './state.js';

const MAX_FILE = 20_000;
const MAX_FILES_LISTED = 2000;

export interface SchemaSummary {
  tables: {
    name: string;
    columns: { name: string; type: string; notNull: boolean; default: string | null }[];
    constraints: string[];
  }[];
  enums: { name: string; labels: string[] }[];
}

export interface ContextInput {
  feature: string;
  featureDir: string;
  plan: TurnPlan;
  instructions: string;
  /** Role reads (expanded). */
  reads: readonly string[];
  /** Workspace files (tracked or new), relative paths. */
  files: readonly string[];
  /** Contents of files the pack may quote: artifacts and the item's test files. */
  contents: Readonly<Record<string, string>>;
  /** Acceptance criteria from the spec, when it is valid. */
  acceptanceCriteria: readonly { id: string; given: string; when: string; then: string; layer: string }[];
  schema: SchemaSummary | null;
  /** What the agent must know of its database branch: its migrations did not all apply (why). */
  database?: string;
  layout: { tests: readonly string[]; migrations: string; suite: string };
}

export interface ContextPack {
  version: 1;
  feature: string;
  role: Role;
  step: TurnStep;
  turn: string;
  attempt: number;
  instructions: string;
  note: string | null;
  item: TurnPlan['item'];
  acceptanceCriteria: ContextInput['acceptanceCriteria'];
  failure: TurnPlan['failure'];
  artifacts: { path: string; content: string }[];
  schema: SchemaSummary | null;
  database?: string;
  layout: { tests: string[]; migrations: string; suite: string; files: string[]; filesOmitted: number };
  writes: string[];
}

export interface BuiltPack {
  pack: ContextPack;
  json: string;
  markdown: string;
  bytes: number;
  sha256: string;
}

function bound(text: string): string {
  return text.length <= MAX_FILE ? text : `${text.slice(0, MAX_FILE)}\n[... ${text.length - MAX_FILE} more characters]`;
}

export function buildContextPack(input: ContextInput): BuiltPack {
  const { plan } = input;
  const readable = (p: string) => matchesAny(p, input.reads);
  const files = [...input.files].filter(readable).sort();
  const artifacts = Object.keys(input.contents)
    .filter(readable)
    .sort()
    .map((path) => ({ path, content: bound(input.contents[path]!) }));
  const item = plan.item;
  const criteria = item === null ? input.acceptanceCriteria : input.acceptanceCriteria.filter((a) => a.id === item.ac);
  const specReadable = readable(`${input.featureDir}/feature-spec.json`);
  const pack: ContextPack = {
    version: 1,
    feature: input.feature,
    role: plan.role,
    step: plan.step,
    turn: plan.id,
    attempt: plan.attempt,
    instructions: input.instructions,
    note: plan.note,
    item,
    acceptanceCriteria: specReadable ? [...criteria] : [],
    failure: plan.failure,
    artifacts,
    schema: input.schema,
    ...(input.database === undefined ? {} : { database: input.database }),
    layout: {
      tests: [...input.layout.tests],
      migrations: input.layout.migrations,
      suite: input.layout.suite,
      files: files.slice(0, MAX_FILES_LISTED),
      filesOmitted: Math.max(0, files.length - MAX_FILES_LISTED),
    },
    writes: [...plan.writes],
  };
  const json = `${JSON.stringify(pack, null, 2)}\n`;
  const markdown = renderContextMarkdown(pack);
  return { pack, json, markdown, bytes: Buffer.byteLength(json), sha256: sha256(json) };
}

function fence(text: string, lang = ''): string {
  const ticks = /`{3,}/.test(text) ? '~~~~' : '```';
  return `${ticks}${lang}\n${text.replace(/\n$/, '')}\n${ticks}`;
}

export function renderContextMarkdown(p: ContextPack): string {
  const out: string[] = [
    `# ${p.role}: ${p.step}${p.item ? ` ${p.item.id}` : ''} — feature ${p.feature}`,
    '',
    `Turn ${p.turn}, attempt ${p.attempt + 1}.`,
    '',
  ];
  if (p.note) out.push('## Why you are asked again', '', p.note, '');
  out.push('## Instructions', '', p.instructions.trim(), '');
  if (p.item)
    out.push('## The test-list item', '', `**${p.item.id}** (${p.item.kind}, ${p.item.ac}): ${p.item.title}`, '');
  if (p.acceptanceCriteria.length) {
    out.push('## Acceptance criteria', '');
    for (const a of p.acceptanceCriteria)
      out.push(`- **${a.id}** (${a.layer}) — given ${a.given}, when ${a.when}, then ${a.then}`);
    out.push('');
  }
  if (p.failure) {
    out.push(`## The suite (${p.failure.purpose})`, '', p.failure.summary, '');
    for (const t of p.failure.tests)
      out.push(`- ${t.state}: ${t.id}${t.message ? ` — ${t.message.split('\n')[0]}` : ''}`);
    if (p.failure.output) out.push('', fence(p.failure.output));
    out.push('');
  }
  out.push('## What you may change', '', ...p.writes.map((w) => `- \`${w}\``), '');
  out.push(
    '## Where things live',
    '',
    `- tests: ${p.layout.tests.map((t) => `\`${t}\``).join(', ')}`,
    `- migrations: \`${p.layout.migrations}\``,
    `- the suite: \`${p.layout.suite}\` (DATABASE_URL is this turn's database branch)`,
    '',
  );
  if (p.database) out.push('## Your database branch', '', p.database, '');
  if (p.schema) {
    out.push('## Database schema of your branch', '');
    for (const t of p.schema.tables) {
      out.push(
        `- **${t.name}**: ${t.columns.map((c) => `${c.name} ${c.type}${c.notNull ? ' not null' : ''}${c.default ? ` default ${c.default}` : ''}`).join(', ')}`,
      );
      for (const c of t.constraints) out.push(`  - ${c}`);
    }
    for (const e of p.schema.enums) out.push(`- enum **${e.name}**: ${e.labels.join(', ')}`);
    out.push('');
  }
  for (const a of p.artifacts)
    out.push(`## ${a.path}`, '', fence(a.content, a.path.endsWith('.json') ? 'json' : ''), '');
  if (p.layout.files.length) {
    out.push('## Files', '', ...p.layout.files.map((f) => `- ${f}`));
    if (p.layout.filesOmitted) out.push(`- … and ${p.layout.filesOmitted} more`);
    out.push('');
  }
  return out.join('\n');
}
