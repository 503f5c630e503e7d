/**
 * Lakebase settings, parsed once from the environment (the Action and the App set the same
 * variables from their inputs and secrets). A missing or malformed setting is an error that
 * names it and says where to find its value.
 */
import { z } from 'zod';
import { ConsortError } from '../../core/errors.js';

export type LakebaseAuth =
  { kind: 'token'; token: string } | { kind: 'oauth-m2m'; clientId: string; clientSecret: string };

export interface LakebaseSettings {
  /** The workspace URL, e.g. https://dbc-1234.cloud.databricks.com (no trailing slash). */
  host: string;
  auth: LakebaseAuth;
  /** The Lakebase project id (the last part of `projects/<id>`). */
  project: string;
  /** The Postgres database every branch connects to. */
  database: string;
}

export const DEFAULT_LAKEBASE_DATABASE = 'databricks_postgres';
const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;

const optional = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
  z.string().trim().optional(),
);

const Env = z.object({
  DATABRICKS_HOST: optional,
  DATABRICKS_TOKEN: optional,
  DATABRICKS_CLIENT_ID: optional,
  DATABRICKS_CLIENT_SECRET: optional,
  CONSORT_LAKEBASE_PROJECT: optional,
  CONSORT_LAKEBASE_DATABASE: optional,
});

/** Every variable the provider reads (a caller picks these, never copies a whole environment). */
export const LAKEBASE_SETTING_NAMES: readonly string[] = Object.keys(Env.shape);

function missing(name: string, hint: string): ConsortError {
  return new ConsortError('config', `${name} is not set (needed by the lakebase provider).`, { hint });
}

/** The workspace URL as an origin: https required except for a local stand-in on loopback. */
export function workspaceHost(raw: string): string {
  const withScheme = /^[a-z]+:\/\//i.test(raw) ? raw : `https://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ConsortError('config', `DATABRICKS_HOST "${raw}" is not a URL.`, {
      hint: 'Set it to your workspace URL, e.g. https://dbc-1234abcd-5678.cloud.databricks.com.',
    });
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.test(url.hostname))) {
    throw new ConsortError('config', `DATABRICKS_HOST must use https (got ${url.protocol}//${url.host}).`, {
      hint: 'Tokens are never sent over plain HTTP.',
    });
  }
  return url.origin;
}

export function parseLakebaseSettings(env: NodeJS.ProcessEnv): LakebaseSettings {
  const e = Env.parse(env);
  if (!e.DATABRICKS_HOST)
    throw missing(
      'DATABRICKS_HOST',
      'Set it to your workspace URL, e.g. https://dbc-1234abcd-5678.cloud.databricks.com.',
    );
  let auth: LakebaseAuth;
  if (e.DATABRICKS_CLIENT_ID || e.DATABRICKS_CLIENT_SECRET) {
    if (!e.DATABRICKS_CLIENT_ID)
      throw missing(
        'DATABRICKS_CLIENT_ID',
        "OAuth M2M needs the service principal's application (client) id with its secret.",
      );
    if (!e.DATABRICKS_CLIENT_SECRET)
      throw missing(
        'DATABRICKS_CLIENT_SECRET',
        'Create an OAuth secret for the service principal (workspace settings → Identity and access → Service principals → Secrets).',
      );
    auth = { kind: 'oauth-m2m', clientId: e.DATABRICKS_CLIENT_ID, clientSecret: e.DATABRICKS_CLIENT_SECRET };
  } else if (e.DATABRICKS_TOKEN) {
    auth = { kind: 'token', token: e.DATABRICKS_TOKEN };
  } else {
    throw missing(
      'DATABRICKS_TOKEN',
      'Set DATABRICKS_TOKEN (a personal access token) or DATABRICKS_CLIENT_ID and DATABRICKS_CLIENT_SECRET (OAuth M2M for a service principal).',
    );
  }
  if (!e.CONSORT_LAKEBASE_PROJECT)
    throw missing(
      'CONSORT_LAKEBASE_PROJECT',
      'Set it to the Lakebase project id (Lakebase App → your project → Settings; the id in projects/<id>).',
    );
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(e.CONSORT_LAKEBASE_PROJECT)) {
    throw new ConsortError('config', `CONSORT_LAKEBASE_PROJECT "${e.CONSORT_LAKEBASE_PROJECT}" is not a project id.`, {
      hint: 'Use the id part of projects/<id>: lowercase letters, digits and "-".',
    });
  }
  return {
    host: workspaceHost(e.DATABRICKS_HOST),
    auth,
    project: e.CONSORT_LAKEBASE_PROJECT,
    database: e.CONSORT_LAKEBASE_DATABASE ?? DEFAULT_LAKEBASE_DATABASE,
  };
}
