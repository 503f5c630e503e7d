/**
 * One repository's dashboard over HTTP: the HTML views, the same data as JSON under `/api`, live
 * changes as server-sent events, and the one write, gate approval — a form POST that must carry
 * the session's CSRF token and come from this origin, bound to the artifact hash the person saw.
 * Both hosts mount this below their own prefix; they differ in how they authenticate and which
 * source they hand in.
 */
import { timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { z } from 'zod';
import { GATES } from '../conductor/state.js';
import { isConsortError } from '../core/errors.js';
import { type Html } from './html.js';
import { layout, type PageFrame } from './layout.js';
import {
  artifactPage,
  branchesPage,
  checksPage,
  errorPage,
  featurePage,
  featuresPage,
  gatesPage,
  turnPage,
} from './pages.js';
import { DASHBOARD_API_VERSION, type DashboardSource } from './port.js';
import { filterFeatures, type FeatureFilter } from './records.js';

export interface DashboardContext {
  source: DashboardSource;
  /** Path prefix of this repository's pages ('' locally). */
  base: string;
  assets: string;
  /** The token a form must carry (per process locally, per session in the App). */
  csrf: string;
  /** Who approves: the signed-in login (App) or the configured name (local, editable). */
  approver: string | null;
  editableApprover: boolean;
  /** Whether this person may approve (write access in the App; signed in and not `--read-only` locally). */
  canApprove: boolean;
  /** Why this person cannot approve, shown on the gates page and in a refusal (default: write access). */
  cannotApprove?: string;
  /** The origin forms must come from (`http://127.0.0.1:4321`). */
  origin: string;
  user?: PageFrame['user'];
  home?: string;
}

export const CANNOT_APPROVE = 'You cannot approve gates here: approving needs write access to the repository.';

export const TURNS_PAGE = 200;
export const CHECKS_PAGE = 50;
/** The trend plot shows this many of the latest checks. */
export const TREND_RUNS = 500;

export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

function send(
  res: http.ServerResponse,
  status: number,
  type: string,
  body: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, ...extra });
  res.end(body);
}

export function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

function sendHtml(
  res: http.ServerResponse,
  status: number,
  ctx: DashboardContext,
  frame: Omit<PageFrame, 'base' | 'assets' | 'repo' | 'user' | 'home'>,
  body: Html,
): void {
  const page = layout(
    {
      ...frame,
      base: ctx.base,
      assets: ctx.assets,
      repo: ctx.source.name,
      user: ctx.user ?? null,
      ...(ctx.home ? { home: ctx.home } : {}),
    },
    body,
  );
  send(res, status, 'text/html; charset=utf-8', page.text);
}

export async function readBody(req: http.IncomingMessage, limit = 16_384): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw Object.assign(new Error('request body too large'), { status: 413 });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

const ApproveForm = z.object({
  csrf: z.string().min(1),
  hash: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  read: z.literal('yes', { error: 'confirm that you read the files' }),
  approver: z.string().max(100).optional(),
});

const pageOf = (url: URL) => Math.max(1, Number.parseInt(url.searchParams.get('page') ?? '1', 10) || 1);
/** `?pageSize=`: a whole number (paginate bounds it), the view's own size when absent or not a number. */
const pageSizeOf = (url: URL, fallback: number) =>
  Number.parseInt(url.searchParams.get('pageSize') ?? '', 10) || fallback;

/** Path segments percent-decoded; null when one is malformed (`%E0%A4%A`). */
export function decodeSegments(segments: readonly string[]): string[] | null {
  try {
    return segments.map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
}

function filterOf(url: URL): FeatureFilter {
  const pr = Number.parseInt(url.searchParams.get('pr') ?? '', 10);
  return {
    q: url.searchParams.get('q') ?? '',
    state: url.searchParams.get('state') ?? 'all',
    ...(Number.isFinite(pr) ? { pr } : {}),
  };
}

/**
 * Server-sent events: one `change` event per (debounced) change of the records. The stream opens
 * (and the page says "live") only once the source is watching, so no change made after that is missed.
 */
async function events(ctx: DashboardContext, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const stop = ctx.source.watch((change) => {
    if (res.headersSent) res.write(`event: change\ndata: ${JSON.stringify(change)}\n\n`);
  });
  const timer: { beat?: NodeJS.Timeout } = {};
  req.on('close', () => {
    clearInterval(timer.beat);
    stop();
  });
  await ctx.source.watchReady?.();
  if (req.destroyed) return;
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': 'text/event-stream; charset=utf-8',
    connection: 'keep-alive',
  });
  res.write('retry: 1000\n\n');
  timer.beat = setInterval(() => res.write(': keep-alive\n\n'), 15_000);
}

/**
 * Serve `subpath` (the part after the repository's prefix). Resolves once the response is under
 * way; a 404 for anything it does not know.
 */
export async function serveDashboard(
  ctx: DashboardContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  subpath: string,
  url: URL,
): Promise<void> {
  const raw = subpath.split('/').filter(Boolean);
  const api = raw[0] === 'api';
  const segments = decodeSegments(raw);
  if (segments === null) {
    const message = 'The address is not valid (a malformed %-escape).';
    return api
      ? sendJson(res, 400, { error: message })
      : sendHtml(res, 400, ctx, { title: 'Bad request', active: 'features', live: null }, errorPage(400, message));
  }
  if (api) segments.shift();
  const [head, feature, kind, id, action] = segments;
  const s = ctx.source;
  const notFound = (what: string) =>
    api
      ? sendJson(res, 404, { error: `${what} not found` })
      : sendHtml(
          res,
          404,
          ctx,
          { title: 'Not found', active: 'features', live: null },
          errorPage(404, `${what} not found.`),
        );

  try {
    if (req.method === 'POST') {
      if (head === 'features' && feature && kind === 'gates' && id && action === 'approve' && segments.length === 5)
        return await approve(ctx, req, res, feature, id, api);
      return send(res, 405, 'text/plain', 'Method not allowed\n');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'Method not allowed\n');

    if (head === undefined) {
      const all = await s.features();
      const filter = filterOf(url);
      const rows = filterFeatures(all, filter);
      if (api) return sendJson(res, 200, { version: DASHBOARD_API_VERSION, repository: s.name, features: rows });
      return sendHtml(
        res,
        200,
        ctx,
        { title: 'Features', active: 'features', live: '*' },
        featuresPage(ctx.base, rows, all, filter),
      );
    }
    if (head === 'events' && !api && segments.length === 1) return await events(ctx, req, res);
    if (head === 'checks' && segments.length === 1) {
      const page = await s.checks(pageOf(url), CHECKS_PAGE);
      if (api) return sendJson(res, 200, { version: DASHBOARD_API_VERSION, ...page, last: await s.lastCheckReport() });
      const trend = (await s.checks(1, TREND_RUNS)).items;
      return sendHtml(
        res,
        200,
        ctx,
        { title: 'Checks', active: 'checks', live: '*' },
        checksPage(ctx.base, page, trend, await s.lastCheckReport()),
      );
    }
    if (head === 'branches' && segments.length === 1) {
      const branches = await s.branches();
      if (api) return sendJson(res, 200, { version: DASHBOARD_API_VERSION, branches });
      return sendHtml(res, 200, ctx, { title: 'Branches', active: 'branches', live: null }, branchesPage(branches));
    }
    if (head !== 'features' || feature === undefined) return notFound('page');

    if (kind === undefined) {
      const detail = await s.feature(feature);
      const page = await s.turns(feature, pageOf(url), TURNS_PAGE);
      if (detail === null || page === null) return notFound(`feature ${feature}`);
      if (api) return sendJson(res, 200, { version: DASHBOARD_API_VERSION, ...detail, turns: page });
      const all = (await s.allTurns(feature)) ?? [];
      return sendHtml(
        res,
        200,
        ctx,
        { title: feature, active: 'features', live: feature },
        featurePage(ctx.base, detail, page, all),
      );
    }
    if (kind === 'turns' && id === undefined && api) {
      const page = await s.turns(feature, pageOf(url), pageSizeOf(url, TURNS_PAGE));
      return page === null
        ? notFound(`feature ${feature}`)
        : sendJson(res, 200, { version: DASHBOARD_API_VERSION, ...page });
    }
    if (kind === 'turns' && id !== undefined && segments.length === 4) {
      const detail = await s.turn(feature, id);
      if (detail === null) return notFound(`turn ${id} of ${feature}`);
      if (api) return sendJson(res, 200, { version: DASHBOARD_API_VERSION, ...detail });
      return sendHtml(
        res,
        200,
        ctx,
        { title: `${id} · ${feature}`, active: 'features', live: null },
        turnPage(ctx.base, feature, detail),
      );
    }
    if (kind === 'gates' && segments.length === 3) {
      const detail = await s.feature(feature);
      if (detail === null) return notFound(`feature ${feature}`);
      if (api) return sendJson(res, 200, { version: DASHBOARD_API_VERSION, feature, gates: detail.gates });
      // Only a gate's name: the page must not say whatever a link someone was sent puts here.
      const approved = (GATES as readonly string[]).find((g) => g === url.searchParams.get('approved'));
      return sendHtml(
        res,
        200,
        ctx,
        { title: `Gates · ${feature}`, active: 'features', live: feature },
        gatesPage(ctx.base, detail, {
          csrf: ctx.csrf,
          approver: ctx.approver,
          canApprove: ctx.canApprove && s.approve !== undefined,
          ...(ctx.cannotApprove ? { cannotApprove: ctx.cannotApprove } : {}),
          editableApprover: ctx.editableApprover,
          ...(approved ? { message: `Approved the ${approved} gate.` } : {}),
        }),
      );
    }
    if (kind === 'files' && segments.length >= 4 && s.artifact) {
      const file = segments.slice(3).join('/');
      const text = await s.artifact(feature, file);
      if (text === null) return notFound(`${file} of ${feature}`);
      if (api) return sendJson(res, 200, { version: DASHBOARD_API_VERSION, feature, file, text });
      return sendHtml(
        res,
        200,
        ctx,
        { title: file, active: 'features', live: feature },
        artifactPage(ctx.base, feature, file, text),
      );
    }
    return notFound('page');
  } catch (e) {
    if (res.headersSent) return void res.end();
    const status = (e as { status?: number }).status ?? 500;
    const message = status === 500 ? 'The dashboard could not read the records.' : (e as Error).message;
    return api
      ? sendJson(res, status, { error: message })
      : sendHtml(res, status, ctx, { title: 'Error', active: 'features', live: null }, errorPage(status, message));
  }
}

async function approve(
  ctx: DashboardContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  feature: string,
  gate: string,
  api: boolean,
): Promise<void> {
  const refuse = (status: number, message: string) =>
    api ? sendJson(res, status, { error: message }) : send(res, status, 'text/plain; charset=utf-8', `${message}\n`);
  // Cross-site requests: a browser always sends Origin on a POST; it must be this dashboard.
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== ctx.origin) return refuse(403, 'This request came from another site.');
  if (!ctx.canApprove || ctx.source.approve === undefined) return refuse(403, ctx.cannotApprove ?? CANNOT_APPROVE);
  const type = String(req.headers['content-type'] ?? '');
  const raw = await readBody(req);
  let fields: unknown;
  try {
    fields = type.startsWith('application/json')
      ? JSON.parse(raw || '{}')
      : Object.fromEntries(new URLSearchParams(raw));
  } catch {
    return refuse(400, 'Cannot approve: the body is not valid JSON.');
  }
  const body = {
    ...(fields as object),
    ...(req.headers['x-csrf-token'] ? { csrf: String(req.headers['x-csrf-token']) } : {}),
  };
  const parsed = ApproveForm.safeParse(body);
  if (!parsed.success)
    return refuse(
      400,
      `Cannot approve: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}.`,
    );
  if (!sameToken(parsed.data.csrf, ctx.csrf))
    return refuse(403, 'The form is out of date or not from this dashboard (CSRF token mismatch); reload the page.');
  const approver = ctx.editableApprover ? (parsed.data.approver ?? ctx.approver ?? '') : (ctx.approver ?? '');
  try {
    const result = await ctx.source.approve({ feature, gate, approver, expectedHash: parsed.data.hash });
    if (api) return sendJson(res, 200, { version: DASHBOARD_API_VERSION, feature, ...result });
    res.writeHead(303, {
      ...SECURITY_HEADERS,
      location: `${ctx.base}/features/${encodeURIComponent(feature)}/gates?approved=${encodeURIComponent(result.gate)}`,
    });
    res.end();
  } catch (e) {
    if (!isConsortError(e)) throw e;
    return refuse(409, `${e.message}${e.hint ? ` ${e.hint}` : ''}`);
  }
}
