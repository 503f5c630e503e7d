/**
 * How a `/consort` command is admitted and answered, the same in the App and the Action: the
 * person who gave it (a comment's author, or an edit's editor) is looked up through the API; without
 * write access they get a 😕 reaction and the one refusal text, and nothing else happens; otherwise
 * the command gets 👀 (being worked on) and, when it is done, one reply that quotes it.
 */
import { type GitHubPort, type Permission, type Reaction, type RepoRef, WRITE_PERMISSIONS } from '../ports/github.js';

export const REFUSAL =
  'sorry — only people with write, maintain or admin access to this repository can run `/consort` commands, so nothing was done.';

export interface CommandRequest {
  repo: RepoRef;
  /** The pull request the command was given on. */
  pr: number;
  /** Who gave it. */
  actor: string;
  /** The comment that carries it (null for a label or a manual run: nothing to react to). */
  commentId: number | null;
  /** The command as written (describeCommand), quoted in the reply. */
  asked: string;
}

/** A reply to a command: addressed to whoever gave it, quoting what they asked. */
export function replyText(actor: string, asked: string, answer: string): string {
  const quoted = asked
    .split('\n')
    .slice(0, 3)
    .map((l) => `> ${l}`)
    .join('\n');
  return `${quoted}\n\n@${actor} ${answer}`;
}

export const reply = (gh: GitHubPort, req: CommandRequest, answer: string) =>
  gh.createComment(req.repo, req.pr, replyText(req.actor, req.asked, answer));

export const mayCommand = (permission: Permission): boolean => WRITE_PERMISSIONS.includes(permission);

/** React to the command's comment, when it has one. */
export async function react(gh: GitHubPort, req: CommandRequest, content: Reaction): Promise<void> {
  if (req.commentId !== null) await gh.react(req.repo, req.commentId, content);
}

/** The refusal: 😕 on the comment and the one refusal text in a reply. */
export async function refuse(gh: GitHubPort, req: CommandRequest): Promise<void> {
  await react(gh, req, 'confused');
  await reply(gh, req, REFUSAL);
}

/**
 * Ask the API what the actor may do (the event says who, never what they may do); refuse them, or
 * acknowledge the command with 👀. Returns the permission and whether the command goes ahead.
 */
export async function admitCommand(
  gh: GitHubPort,
  req: CommandRequest,
): Promise<{ admitted: boolean; permission: Permission }> {
  const permission = await gh.permission(req.repo, req.actor);
  if (!mayCommand(permission)) {
    await refuse(gh, req);
    return { admitted: false, permission };
  }
  await react(gh, req, 'eyes');
  return { admitted: true, permission };
}
