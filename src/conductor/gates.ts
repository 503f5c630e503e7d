/**
 * Gates fail closed. An approval binds a gate to the sha256 of its artifacts, normalized so that
 * line endings and whitespace do not count as edits; any later change to them reopens the gate,
 * and a missing or schema-invalid artifact cannot be approved.
 *
 * Normalization: CRLF→LF, trailing whitespace stripped, runs of blank lines collapsed to one, one
 * final newline. JSON artifacts are hashed in a canonical form (keys sorted) so re-indenting is not
 * an edit either; in `test-list.json` the items' `status`, which the conductor advances as cycles
 * complete, is left out.
 */
import { createHash } from 'node:crypto';
import type { GateCheck } from './events.js';
import type { GateName, OptionalGate } from './state.js';

/** The commit status a gate is published as (the one place it is spelled): branch protection can require it. */
export const gateStatusContext = (gate: string): string => `consort/gate/${gate}`;

export function normalizeText(text: string): string {
  const lines = text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.replace(/[ \t\f\v]+$/, ''));
  const out: string[] = [];
  for (const line of lines) {
    if (line === '' && (out.length === 0 || out[out.length - 1] === '')) continue;
    out.push(line);
  }
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out.length === 0 ? '' : `${out.join('\n')}\n`;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A frozen test file's identity: sha256 of its normalized text. */
export function contentHash(text: string): string {
  return sha256(normalizeText(text));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** The text an artifact is hashed as. */
export function gatedText(file: string, content: string): string {
  if (!file.endsWith('.json')) return normalizeText(content);
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return normalizeText(content);
  }
  if (
    file === 'test-list.json' &&
    parsed !== null &&
    typeof parsed === 'object' &&
    Array.isArray((parsed as { items?: unknown }).items)
  ) {
    const list = parsed as { items: unknown[] };
    parsed = {
      ...list,
      items: list.items.map((i) => (i !== null && typeof i === 'object' ? { ...i, status: undefined } : i)),
    };
  }
  return `${JSON.stringify(canonical(parsed))}\n`;
}

export interface GatedFile {
  /** Name inside the feature folder (`feature-spec.json`), or a pseudo-artifact such as `git:tree`. */
  file: string;
  /** null when missing. */
  content: string | null;
}

/** sha256 over the gated files in name order; a missing file counts as such. */
export function gateHash(files: readonly GatedFile[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))) {
    h.update(`${f.file}\0${f.content === null ? '\u0000missing' : gatedText(f.file, f.content)}\0`);
  }
  return `sha256:${h.digest('hex')}`;
}

const DESIGN_SET = ['feature-request.md', 'feature-spec.json', 'architecture.json', 'db-design.json'];

/**
 * The artifacts each gate covers. `merge` and `deploy` also cover the code: `git:tree`, the
 * workspace's committed tree outside `.consort/`, and the cycle records.
 */
export function gatedFiles(gate: GateName, options: { userFacing: boolean; cycles: readonly string[] }): string[] {
  const ux = options.userFacing ? ['ux-design.json'] : [];
  switch (gate) {
    case 'plan':
      return [...DESIGN_SET, ...ux];
    case 'test_list':
      return ['test-list.json'];
    case 'spec':
      return [...DESIGN_SET, ...ux, 'test-list.json'];
    case 'merge':
    case 'deploy':
      return [...DESIGN_SET, ...ux, 'test-list.json', ...options.cycles, 'git:tree'];
  }
}

/** Gate order within a feature; a gate not enabled is skipped. */
export const GATE_ORDER: readonly GateName[] = ['plan', 'test_list', 'spec', 'merge', 'deploy'];

export function gateEnabled(gate: GateName, optional: readonly OptionalGate[]): boolean {
  return gate === 'spec' || gate === 'merge' || (optional as readonly string[]).includes(gate);
}

/** Approved and still matching what it approved. */
export function isApproved(check: GateCheck): boolean {
  return check.valid && check.approval !== null && check.approval.hash === check.hash;
}

/** A named human: not empty, not the proxy, no control characters. */
export function approverProblem(name: string): string | undefined {
  const trimmed = name.trim();
  if (trimmed === '') return 'an approver name is required (--as <name>)';
  if (trimmed.toLowerCase() === 'proxy') return '"proxy" is reserved for headless approvals (--gates proxy)';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(trimmed) || trimmed.length > 100)
    return 'the approver name must be printable and at most 100 characters';
  return undefined;
}

/** Who may approve a pull request's gates (`gates.approvers`, `gates.selfApproval`), read from the default branch. */
export interface ApprovalPolicy {
  /** Logins and `org/team-slug` teams; empty: anyone with write access. */
  approvers: readonly string[];
  /** Whether the pull request's author may approve its gates. */
  selfApproval: boolean;
}

/** The teams of `approvers` (`org/team-slug` entries). */
export const approverTeams = (policy: ApprovalPolicy): string[] => policy.approvers.filter((a) => a.includes('/'));

/**
 * Why `login` may not approve a gate of the pull request `author` opened, or undefined when they
 * may. `teams` are the policy's teams `login` belongs to (asked of GitHub by the caller). Logins
 * compare without case, as GitHub's do.
 */
export function approvalRefusal(
  policy: ApprovalPolicy,
  approver: { login: string; teams: readonly string[] },
  author: string | null,
): string | undefined {
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  if (!policy.selfApproval && author !== null && same(approver.login, author)) {
    return 'the author of a pull request may not approve its gates (gates.selfApproval is off): ask someone else to review and approve';
  }
  if (policy.approvers.length === 0) return undefined;
  const listed = policy.approvers.some((a) =>
    a.includes('/') ? approver.teams.some((t) => same(t, a)) : same(a, approver.login),
  );
  return listed
    ? undefined
    : `only the approvers gates.approvers names may approve gates (${policy.approvers.join(', ')})`;
}
