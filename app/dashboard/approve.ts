/**
 * Approving a gate from the App's dashboard. The rule is the lane's own (decideApproval, the same
 * function `consort approve` and the local dashboard use), applied to the records as indexed at the
 * pull request's head; the approval is then written where the lane keeps it — gates.json and
 * events.jsonl of the feature — as a commit on the pull request's branch made with the signed-in
 * person's token. GitHub itself refuses the commit from anyone who may not push, and refuses it as
 * a non-fast-forward if the head moved since the person looked; then the head is indexed again.
 *
 * The Action counts an approval in the branch's gates.json only when the pull request's
 * conversation backs it (src/lanes/tdd/approval-source.ts): so the approval is then also said
 * there, as `/consort approve <gate>` posted with the same person's token — GitHub attributes the
 * comment to them, and the Action's approve mode answers it (finding the approval already recorded).
 * If GitHub refuses the comment, the person is told the approval is not counted yet, never that it
 * succeeded; approving the same artifacts again here commits nothing new and posts the comment.
 */
import { decideApproval, checkGate, withApproval } from '../../src/conductor/approval.js';
import type { GatesFile } from '../../src/conductor/artifacts.js';
import { gatedFiles, type GatedFile } from '../../src/conductor/gates.js';
import { GATES, type ConductorState } from '../../src/conductor/state.js';
import { ConsortError } from '../../src/core/errors.js';
import type { ApproveRequest, ApproveResult } from '../../src/dashboard/port.js';
import { describeStep } from '../../src/lanes/tdd/feature.js';
import { featureDirOf } from '../../src/lanes/tdd/store.js';
import type { Store } from '../store/db.js';
import { getPull } from '../store/pulls.js';
import type { CommitApi, RecordsApi } from './github-records.js';
import { featureFiles, getFeature, type IndexedRepository } from './index-store.js';
import { indexPull } from './indexer.js';

export interface DashboardApproval {
  store: Store;
  repository: IndexedRepository;
  /** The App's installation (re-indexing the new head). */
  records: RecordsApi;
  /** The signed-in person's token (the commit and the comment are theirs). */
  commits: CommitApi;
  /** Why the person may not approve this pull request's gates (gates.approvers, gates.selfApproval), or undefined. */
  refusal?: (pr: number) => Promise<string | undefined>;
  now?: () => Date;
}

const sha7 = (sha: string) => sha.slice(0, 7);

/**
 * The comment that says the approval on the pull request: the command exactly as the Action's
 * parser reads it (src/github/commands.ts; the lines after an approve are not part of it).
 */
export function approvalCommentBody(gate: string, hash: string): string {
  return `/consort approve ${gate}\nApproved in the Consort dashboard for artifacts \`${hash.replace(/^sha256:/, '').slice(0, 7)}\`.`;
}

export async function approveFromDashboard(d: DashboardApproval, request: ApproveRequest): Promise<ApproveResult> {
  const repo = { owner: d.repository.owner, repo: d.repository.repo };
  const f = await getFeature(d.store.pool, d.repository.repositoryId, request.feature);
  if (!f) throw new ConsortError('invalid-input', `No feature ${request.feature} in ${repo.owner}/${repo.repo}.`);
  const pull = await getPull(d.store.pool, f.repositoryId, f.pr);
  if (!pull || pull.state !== 'open')
    throw new ConsortError('invalid-input', `Pull request #${f.pr} is not open, so its gates cannot be approved.`);
  if (pull.fork) {
    throw new ConsortError(
      'invalid-input',
      `Pull request #${f.pr} comes from a fork, whose branch this dashboard cannot write.`,
      { hint: 'Approve with a `/consort approve` comment on the pull request.' },
    );
  }
  const refused = await d.refusal?.(f.pr);
  if (refused !== undefined)
    throw new ConsortError('invalid-input', `You cannot approve the gates of #${f.pr}: ${refused}.`);
  if (pull.headSha !== f.headSha) {
    throw new ConsortError(
      'invalid-input',
      `New commits were pushed to #${f.pr} (now at ${sha7(pull.headSha)}) since the page was indexed at ${sha7(f.headSha)}, so nothing was approved.`,
      {
        hint: 'Reload the page once it shows the new head, look again, then approve.',
      },
    );
  }
  if (!(GATES as readonly string[]).includes(request.gate))
    throw new ConsortError('invalid-input', `Unknown gate "${request.gate}".`, { hint: `Gates: ${GATES.join(', ')}.` });
  const state = f.state as ConductorState;
  const gates = f.gates as GatesFile;
  const rows = await featureFiles(d.store.pool, f);
  const byPath = new Map(rows.map((r) => [r.path, r.content]));
  // Both files are rewritten whole: one the index could not read (too large) would be replaced by less.
  const unread = ['gates.json', 'events.jsonl'].filter((p) => byPath.has(p) && byPath.get(p) === null);
  if (unread.length > 0) {
    throw new ConsortError(
      'invalid-input',
      `The dashboard did not read ${unread.join(' and ')} of ${f.feature} (larger than it indexes), so it cannot add the approval to them.`,
      { hint: 'Approve with `/consort approve` on the pull request.' },
    );
  }
  const cycles = rows.map((r) => r.path).filter((p) => /^cycles\/cycle-\d+\.json$/.test(p));
  const gate = request.gate as keyof GatesFile['gates'];
  const names = gatedFiles(gate, { userFacing: state.userFacing, cycles });
  const files: GatedFile[] = names.map((file) => ({
    file,
    content: file === 'git:tree' ? f.codeTreeHash : (byPath.get(file) ?? null),
  }));
  if (names.includes('git:tree') && f.codeTreeHash === null) {
    throw new ConsortError(
      'invalid-input',
      `GitHub listed the tree of ${sha7(f.headSha)} only in part, so the ${request.gate} gate's code cannot be hashed here.`,
      { hint: 'Approve with `/consort approve` on the pull request.' },
    );
  }
  const at = (d.now?.() ?? new Date()).toISOString();
  const decision = decideApproval({
    feature: f.feature,
    gate: request.gate,
    approver: request.approver,
    state,
    check: checkGate(files, gates.gates[gate]?.approval ?? null).check,
    expectedHash: request.expectedHash,
    headSha: f.headSha,
    at,
    where: describeStep(state),
  });
  const recorded = gates.gates[gate]?.approval ?? null;
  // The same person's approval of these artifacts is already on the branch (a comment that failed
  // before): nothing is committed again, the comment is posted.
  const already =
    recorded !== null &&
    !recorded.proxy &&
    recorded.hash === decision.approval.hash &&
    recorded.approver.toLowerCase() === decision.approval.approver.toLowerCase();
  if (!already) await commitApproval(d, f, decision, byPath);
  const approval = already ? recorded : decision.approval;
  try {
    await d.commits.comment(repo, f.pr, approvalCommentBody(decision.gate, approval.hash));
  } catch (e) {
    const status = (e as { status?: number }).status;
    throw new ConsortError(
      'invalid-input',
      `Your approval of the ${decision.gate} gate is on ${f.headRef}, but GitHub refused your comment on #${f.pr}${status ? ` (${status})` : ''}, so the Consort Action does not count it yet.`,
      {
        hint: `Comment \`/consort approve ${decision.gate}\` on #${f.pr} yourself, or approve here again (nothing is committed twice).`,
      },
    );
  }
  return { gate: decision.gate, hash: approval.hash, approver: approval.approver, at: already ? approval.at : at };
}

async function commitApproval(
  d: DashboardApproval,
  f: NonNullable<Awaited<ReturnType<typeof getFeature>>>,
  decision: ReturnType<typeof decideApproval>,
  byPath: ReadonlyMap<string, string | null>,
): Promise<void> {
  const repo = { owner: d.repository.owner, repo: d.repository.repo };
  const gates = f.gates as GatesFile;
  const dir = featureDirOf(f.feature);
  const events = byPath.get('events.jsonl') ?? '';
  const next = withApproval(gates, decision.gate, decision.approval);
  let commit: string;
  try {
    commit = await d.commits.commitFiles(repo, {
      branch: f.headRef,
      parent: f.headSha,
      message: `consort: approve the ${decision.gate} gate of ${f.feature}\n\nApproved by @${decision.approval.approver} in the Consort dashboard for artifacts ${decision.approval.hash} at ${sha7(f.headSha)}.\n`,
      files: [
        { path: `${dir}/gates.json`, content: `${JSON.stringify(next, null, 2)}\n` },
        {
          path: `${dir}/events.jsonl`,
          content: `${events}${events === '' || events.endsWith('\n') ? '' : '\n'}${JSON.stringify(decision.event)}\n`,
        },
      ],
    });
  } catch (e) {
    const status = (e as { status?: number }).status;
    if (status === 403 || status === 404)
      throw new ConsortError(
        'invalid-input',
        `GitHub refused your commit to ${f.headRef}: approving needs push access to the branch.`,
      );
    if (status === 422 || status === 409)
      throw new ConsortError(
        'invalid-input',
        `The branch ${f.headRef} moved while you approved, so nothing was approved.`,
        { hint: 'Reload the page, look again, then approve.' },
      );
    throw e;
  }
  // The App learns of its own commit now (the push's webhook follows): the next approval is judged on it.
  await d.store.pool.query(
    'UPDATE consort_app.pull_requests SET head_sha = $3, head_recorded_at = now(), updated_at = now() WHERE repository_id = $1 AND number = $2 AND head_sha = $4',
    [f.repositoryId, f.pr, commit, f.headSha],
  );
  await indexPull(d.store, d.records, { ...d.repository, pr: f.pr, headSha: commit, headRef: f.headRef });
}
