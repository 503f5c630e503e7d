/**
 * The App's GitHub adapter: the one GitHubPort (src/github/octokit.ts) on Probot's client, with
 * every call watched (github-watch.ts) and the call that finally fails logged.
 */
import type { Endpoints, RequestParameters } from '@octokit/types';
import { octokitGitHub, type AdapterOptions, type OctokitClient, type Route } from '../src/github/octokit.js';
import type { GitHubPort } from '../src/ports/github.js';
import { callFields, withCall, type CallContext } from './github-watch.js';
import type { AppLog } from './jobs/deps.js';

export interface Observe {
  log: AppLog;
  /** The delivery and run the calls are made for: every log line about them names both. */
  context?: CallContext;
}

/**
 * Each call with its route and context visible to every attempt (github-watch.ts logs those),
 * and the call that finally fails logged here: at error when GitHub could not be reached or
 * answered 5xx, at warn for a 4xx (the caller may expect it, e.g. a 404 permission lookup).
 */
export function observed(octokit: OctokitClient, observe: Observe): OctokitClient {
  return {
    request: <R extends Route>(route: R, parameters: Endpoints[R]['parameters'] & RequestParameters) =>
      withCall(observe.context, route, async () => {
        try {
          return await octokit.request(route, parameters);
        } catch (e) {
          const status =
            typeof e === 'object' && e !== null && 'status' in e && typeof e.status === 'number' ? e.status : null;
          const fields = { ...callFields(), status, error: e instanceof Error ? e.message : String(e) };
          if (status !== null && status < 500) observe.log.warn(`GitHub refused ${route}`, fields);
          else observe.log.error(`GitHub call failed: ${route}`, fields);
          throw e;
        }
      }),
  };
}

/**
 * The GitHubPort of one installation: `client` is Probot's (`probot.auth(installationId)`); `options`
 * bound the attempts of a create (the App passes its Octokit policy's retries and backoff).
 */
export function appGitHub(client: OctokitClient, observe?: Observe, options: AdapterOptions = {}): GitHubPort {
  return octokitGitHub(observe ? observed(client, observe) : client, options);
}
