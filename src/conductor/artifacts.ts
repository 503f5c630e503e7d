/**
 * The artifacts roles hand each other, each with a zod schema and a version. Validation is pure:
 * the driver reads the files and the conductor decides from the result whether a role delivered
 * what it owes and whether a gate may be approved.
 */
import { z } from 'zod';
import { GATES, Item } from './state.js';

const id = (prefix: string) =>
  z.string().regex(new RegExp(`^${prefix}[1-9][0-9]*$`), { error: `must look like ${prefix}1, ${prefix}2, …` });
const text = () => z.string().trim().min(1, { error: 'must not be empty' });

export const AcceptanceCriterion = z.object({
  id: id('AC'),
  given: text(),
  when: text(),
  then: text(),
  layer: z.enum(['API', 'E2E', 'Infra']),
});

export const FeatureSpec = z.object({
  version: z.literal(1),
  title: text(),
  summary: text(),
  /** Brings the ux-designer into the design. */
  userFacing: z.boolean(),
  stories: z
    .array(z.object({ id: id('S'), title: text(), acceptanceCriteria: z.array(AcceptanceCriterion).min(1) }))
    .min(1),
});
export type FeatureSpec = z.infer<typeof FeatureSpec>;

export const Architecture = z.object({
  version: z.literal(1),
  summary: text(),
  components: z.array(z.object({ name: text(), path: text(), responsibility: text() })),
  invariants: z.array(text()),
  nonFunctional: z.array(text()),
});

export const DbDesign = z.object({
  version: z.literal(1),
  summary: text(),
  tables: z.array(
    z.object({
      name: text(),
      change: z.enum(['create', 'alter', 'none']),
      columns: z.array(z.object({ name: text(), type: text(), nullable: z.boolean(), note: z.string().optional() })),
      constraints: z.array(text()).optional(),
    }),
  ),
  migrations: z.array(z.object({ name: text(), description: text(), reversible: z.boolean() })),
});

export const TestList = z.object({
  version: z.literal(1),
  items: z.array(Item).min(1, { error: 'the test list needs at least one item' }),
});
export type TestList = z.infer<typeof TestList>;

export const UxDesign = z.object({
  version: z.literal(1),
  summary: text(),
  screens: z.array(z.object({ name: text(), purpose: text(), states: z.array(text()) })),
});

export const Review = z.object({
  version: z.literal(1),
  item: id('T'),
  verdict: z.enum(['approve', 'changes']),
  notes: z.string(),
});
export type Review = z.infer<typeof Review>;

export const GateApproval = z.object({
  approver: z.string(),
  at: z.string(),
  hash: z.string(),
  proxy: z.boolean(),
  /** The pull request's head commit when the approval was given (approvals from a PR comment). */
  headSha: z.string().optional(),
});

export const GatesFile = z.object({
  version: z.literal(1),
  feature: z.string(),
  gates: z.partialRecord(
    z.enum(GATES),
    z.object({ approval: GateApproval.nullable(), history: z.array(GateApproval) }),
  ),
});
export type GatesFile = z.infer<typeof GatesFile>;

export const JSON_ARTIFACTS = {
  'feature-spec.json': FeatureSpec,
  'architecture.json': Architecture,
  'db-design.json': DbDesign,
  'test-list.json': TestList,
  'ux-design.json': UxDesign,
} as const;

export type ArtifactResult<T = unknown> = { ok: true; value: T } | { ok: false; problems: string[] };

function issues(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`);
}

/** Parse an artifact's text (null when the file is missing). */
export function parseArtifact(file: string, content: string | null): ArtifactResult {
  if (content === null) return { ok: false, problems: [`${file} is missing`] };
  if (file.endsWith('.md'))
    return content.trim() === '' ? { ok: false, problems: [`${file} is empty`] } : { ok: true, value: content };
  const schema =
    (JSON_ARTIFACTS as Record<string, z.ZodType>)[file] ?? (file.startsWith('reviews/') ? Review : undefined);
  if (schema === undefined) return { ok: false, problems: [`${file} is not a known artifact`] };
  let data: unknown;
  try {
    data = JSON.parse(content);
  } catch (e) {
    return { ok: false, problems: [`${file} is not valid JSON: ${(e as Error).message}`] };
  }
  const parsed = schema.safeParse(data);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, problems: issues(parsed.error).map((p) => `${file}: ${p}`) };
}

/** Checks across artifacts: test-list items name acceptance criteria of the spec, ids are unique. */
export function crossCheck(spec: FeatureSpec | undefined, list: TestList | undefined): string[] {
  const problems: string[] = [];
  if (list !== undefined) {
    const ids = list.items.map((i) => i.id);
    const dup = ids.filter((x, i) => ids.indexOf(x) !== i);
    if (dup.length) problems.push(`test-list.json: item ids repeat: ${[...new Set(dup)].join(', ')}`);
  }
  if (spec !== undefined) {
    const acs = spec.stories.flatMap((s) => s.acceptanceCriteria.map((a) => a.id));
    const dup = acs.filter((x, i) => acs.indexOf(x) !== i);
    if (dup.length) problems.push(`feature-spec.json: acceptance criteria ids repeat: ${[...new Set(dup)].join(', ')}`);
    for (const item of list?.items ?? []) {
      if (!acs.includes(item.ac))
        problems.push(`test-list.json: ${item.id} names ${item.ac}, which is not an acceptance criterion of the spec`);
    }
  }
  return problems;
}
