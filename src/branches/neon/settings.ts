/**
 * Neon settings, parsed once from the environment (the Action and the App set the same variables
 * from their inputs and secrets). A missing setting is an error that names it.
 */
import { z } from 'zod';
import { ConsortError } from '../../core/errors.js';

export interface NeonSettings {
  apiKey: string;
  projectId: string;
  /** API base including `/api/v2`, without a trailing slash. */
  apiHost: string;
  database: string;
  role: string;
}

export const NEON_DEFAULT_API_HOST = 'https://console.neon.tech/api/v2';
const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;

const optional = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
  z.string().trim().optional(),
);

const Env = z.object({
  NEON_API_KEY: optional,
  NEON_PROJECT_ID: optional,
  NEON_API_HOST: optional,
  NEON_DATABASE: optional,
  NEON_ROLE: optional,
});

/** Every variable the provider reads (a caller picks these, never copies a whole environment). */
export const NEON_SETTING_NAMES: readonly string[] = Object.keys(Env.shape);

function missing(name: string, hint: string): ConsortError {
  return new ConsortError('config', `${name} is not set (needed by the neon provider).`, { hint });
}

function apiHost(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConsortError('config', `NEON_API_HOST "${raw}" is not a URL.`, {
      hint: `Leave it unset for ${NEON_DEFAULT_API_HOST}.`,
    });
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.test(url.hostname))) {
    throw new ConsortError('config', `NEON_API_HOST must use https (got ${url.protocol}//${url.host}).`, {
      hint: 'API keys are never sent over plain HTTP.',
    });
  }
  return url.toString().replace(/\/+$/, '');
}

export function parseNeonSettings(env: NodeJS.ProcessEnv): NeonSettings {
  const e = Env.parse(env);
  if (!e.NEON_API_KEY)
    throw missing(
      'NEON_API_KEY',
      'Create an API key in the Neon Console (Account or Organization settings → API keys) and store it as a secret.',
    );
  if (!e.NEON_PROJECT_ID)
    throw missing(
      'NEON_PROJECT_ID',
      'Set it to the project id (Neon Console → project → Settings → General, e.g. "shiny-wind-028834").',
    );
  if (!/^[a-z0-9-]{1,60}$/.test(e.NEON_PROJECT_ID)) {
    throw new ConsortError('config', `NEON_PROJECT_ID "${e.NEON_PROJECT_ID}" is not a Neon project id.`, {
      hint: 'Use the id (lowercase letters, digits and "-"), not the project name.',
    });
  }
  return {
    apiKey: e.NEON_API_KEY,
    projectId: e.NEON_PROJECT_ID,
    apiHost: apiHost(e.NEON_API_HOST ?? NEON_DEFAULT_API_HOST),
    database: e.NEON_DATABASE ?? 'neondb',
    role: e.NEON_ROLE ?? 'neondb_owner',
  };
}
