/**
 * Where a gate approval on a pull request comes from. The branch's `gates.json` is the pull
 * request's, so whoever can push to the branch can write an approval there; what counts is the
 * pull request's conversation, which GitHub keeps: a person's `/consort approve <gate>` comment,
 * written after the Action announced the gate with the artifacts the approval covers.
 *
 * - The gate is named: `/consort approve` alone approves nothing (`/consort approve run` is the
 *   App's fork-run alias and no gate approval).
 * - An approval is bound to the artifacts: the gate's announcement (the comment the Action posts
 *   when the lane stops at it, `GATE_MARKER(gate, hash)` as its first line, by a bot) last made
 *   before the command must carry the approval's hash. A command written before the artifacts
 *   changed is about other artifacts, and the lane announces the gate again when they change.
 * - An edited comment carries no command, and an edited announcement announces nothing: GitHub's
 *   REST API gives its edit time (`updated_at`) but not who edited it, and anyone with write access
 *   may edit another person's comment, a bot's too (the Action never edits its announcements).
 *   (The App, which learns the editor from the webhook, judges an edited command by the editor.)
 * - The command is the comment as GitHub has it, by the person it names: the workflow's event file
 *   (GITHUB_EVENT_PATH), which any earlier step of the job can rewrite, only points at it.
 *
 * Comments are ordered by GitHub's creation time, then by id (GitHub's times are whole seconds).
 */
import { parseCommand } from '../../github/commands.js';
import type { IssueComment } from '../../ports/github.js';

const ANNOUNCEMENT = /^<!-- consort:gate ([a-z][a-z0-9_-]*) (\S+) -->/;

function time(c: IssueComment): number {
  return c.createdAt === undefined ? Number.NaN : Date.parse(c.createdAt);
}

/** Whether `a` was written before `b` (or is `b`). */
function notAfter(a: IssueComment, b: IssueComment): boolean {
  const ta = time(a);
  const tb = time(b);
  return ta < tb || (ta === tb && a.id <= b.id);
}

/** Whether a comment was edited (or GitHub gave no times for it): its current text is nobody's known command. */
export function editedComment(c: IssueComment): boolean {
  if (c.createdAt === undefined || c.updatedAt === undefined) return true;
  const created = Date.parse(c.createdAt);
  const updated = Date.parse(c.updatedAt);
  return !Number.isFinite(created) || !Number.isFinite(updated) || updated !== created;
}

/**
 * The gate announcements on the pull request: bots' unedited comments that open with the gate's
 * marker. The Action never edits one, and anyone with write access may edit a bot's comment: an
 * edited marker (it is hidden) would bind the next approval to artifacts nobody was shown.
 */
export function gateAnnouncements(
  comments: readonly IssueComment[],
): { gate: string; hash: string; comment: IssueComment }[] {
  return comments.flatMap((comment) => {
    if (comment.user?.type !== 'Bot' || editedComment(comment)) return [];
    const m = ANNOUNCEMENT.exec(comment.body);
    return m ? [{ gate: m[1]!, hash: m[2]!, comment }] : [];
  });
}

/** The artifacts' hash `gate` was last announced with before `command` was written, or null. */
export function announcedBefore(comments: readonly IssueComment[], gate: string, command: IssueComment): string | null {
  let last: { hash: string; comment: IssueComment } | null = null;
  for (const a of gateAnnouncements(comments)) {
    if (a.gate !== gate || !notAfter(a.comment, command)) continue;
    if (last === null || notAfter(last.comment, a.comment)) last = a;
  }
  return last?.hash ?? null;
}

/** Whether `c` is a person's `/consort approve <gate>` (the gate named). */
function approves(c: IssueComment, gate: string): boolean {
  if (!c.user || c.user.type === 'Bot') return false;
  const command = parseCommand(c.body);
  return command?.kind === 'approve' && command.gate === gate;
}

/**
 * Why comment `id` is not `login`'s `/consort approve <gate>` as GitHub has it, or undefined when it
 * is — or when GitHub no longer has it unedited, which the caller answers (deleted, edited). The
 * event that names the comment is a file the workflow's job can rewrite: it says where to look.
 */
export function notTheirCommand(
  comments: readonly IssueComment[],
  id: number,
  login: string,
  gate: string,
): string | undefined {
  const c = comments.find((x) => x.id === id);
  if (c === undefined || editedComment(c)) return undefined;
  if (!c.user || c.user.type === 'Bot' || c.user.login.toLowerCase() !== login.toLowerCase())
    return `comment ${id} is ${c.user ? `@${c.user.login}'s${c.user.type === 'Bot' ? ' (a bot)' : ''}` : "a deleted account's"}, not @${login}'s, as GitHub has it`;
  if (!approves(c, gate)) return `comment ${id} by @${c.user.login} is no /consort approve ${gate}, as GitHub has it`;
  return undefined;
}

/**
 * The comment that gives `approver`'s approval of `gate` with artifacts `hash` on the pull request,
 * or why there is none (who may approve is the caller's to judge).
 */
export function approvalComment(
  comments: readonly IssueComment[],
  gate: string,
  approver: string,
  hash: string,
  pr: number,
): { comment: IssueComment } | { reason: string } {
  const login = approver.toLowerCase();
  const theirs = comments.filter((c) => c.user?.login.toLowerCase() === login && approves(c, gate));
  if (theirs.length === 0) return { reason: `@${approver} left no /consort approve ${gate} on #${pr}` };
  const unedited = theirs.filter((c) => !editedComment(c));
  if (unedited.length === 0)
    return {
      reason: `@${approver}'s /consort approve ${gate} on #${pr} was edited (an edited comment carries no command)`,
    };
  const given = unedited.find((c) => announcedBefore(comments, gate, c) === hash);
  if (given) return { comment: given };
  return {
    reason: `@${approver}'s /consort approve ${gate} on #${pr} was not given on these artifacts (${hash.slice(0, 15)}…, not the gate as announced before it)`,
  };
}
