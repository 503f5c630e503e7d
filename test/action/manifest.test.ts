/**
 * action.yml as GitHub's runner loads it. The runner reads the manifest as a template
 * (actions/runner src/Runner.Worker/action_yaml.json): for a JavaScript action an expression is allowed
 * only in an input's `default:`, and there only with the contexts github, strategy, matrix, job, runner
 * and hashFiles(). Anywhere else (a description, say) the job fails at "Set up job" for every user.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { nodeForRunsUsing } from '../helpers/action-node.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEFAULT_CONTEXTS = new Set(['github', 'strategy', 'matrix', 'job', 'runner', 'hashFiles']);
const RUNTIMES = new Set(['node20', 'node24']); // what hosted runners still start (node12/16 are gone)

/** Every problem the runner would refuse the manifest for, as `path: why`. */
export function manifestProblems(meta: unknown): string[] {
  const problems: string[] = [];
  const walk = (value: unknown, at: string[]): void => {
    if (typeof value === 'string') {
      if (!value.includes('${{')) return;
      const isDefault = at.length === 3 && at[0] === 'inputs' && at[2] === 'default';
      if (!isDefault) return void problems.push(`${at.join('.')}: expressions are allowed only in an input's default`);
      for (const expr of value.matchAll(/\$\{\{([\s\S]*?)\}\}/g)) {
        const code = expr[1]!.replace(/'(?:[^']|'')*'/g, "''"); // string literals name no context
        for (const name of code.matchAll(/(?<![.\w'"])([A-Za-z_][\w-]*)(?=\s*[.([]|\s*\}|\s*$)/g)) {
          if (!DEFAULT_CONTEXTS.has(name[1]!))
            problems.push(`${at.join('.')}: context ${name[1]} is not available in an input's default`);
        }
      }
      return;
    }
    if (Array.isArray(value)) return value.forEach((v, i) => walk(v, [...at, String(i)]));
    if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) walk(v, [...at, k]);
  };
  walk(meta, []);
  const m = meta as {
    name?: unknown;
    description?: unknown;
    runs?: { using?: unknown; main?: unknown };
    inputs?: Record<string, { description?: unknown }>;
  };
  if (typeof m.name !== 'string' || !m.name) problems.push('name: required');
  if (typeof m.description !== 'string' || !m.description) problems.push('description: required');
  if (!RUNTIMES.has(String(m.runs?.using)))
    problems.push(`runs.using: ${String(m.runs?.using)} is not a runtime hosted runners start`);
  if (typeof m.runs?.main !== 'string' || !m.runs.main) problems.push('runs.main: required');
  for (const [name, input] of Object.entries(m.inputs ?? {})) {
    if (typeof input?.description !== 'string') problems.push(`inputs.${name}.description: must be a string`);
  }
  return problems;
}

async function manifest(): Promise<{ runs: { using: string; main: string } }> {
  return parseYaml(await readFile(new URL('../../action.yml', import.meta.url), 'utf8')) as {
    runs: { using: string; main: string };
  };
}

describe('action.yml, as the runner parses it', () => {
  it('has no expression outside an input default, and only the contexts a default may use', async () => {
    expect(manifestProblems(await manifest())).toEqual([]);
  });

  it('runs the committed bundle on node24', async () => {
    const meta = await manifest();
    expect(meta.runs.using).toBe('node24');
    expect(existsSync(`${ROOT}${meta.runs.main}`)).toBe(true);
    const bin = nodeForRunsUsing(meta.runs.using);
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()).toMatch(/^v24\./);
  });

  it('catches what stopped every workflow: an expression in a description, a context a default cannot see', () => {
    const broken = {
      name: 'x',
      description: 'y',
      runs: { using: 'node20', main: 'dist/index.js' },
      inputs: {
        'pull-request': { description: 'pass a dispatch input: ${{ inputs.pr }}' },
        token: { description: 'ok', default: '${{ github.token }}' },
        bad: { description: 'ok', default: '${{ inputs.token }}' },
        files: { description: 'ok', default: "${{ hashFiles('**/package-lock.json') }}" },
      },
    };
    expect(manifestProblems(broken)).toEqual([
      "inputs.pull-request.description: expressions are allowed only in an input's default",
      "inputs.bad.default: context inputs is not available in an input's default",
    ]);
    expect(manifestProblems({ ...broken, inputs: {}, runs: { using: 'node16', main: 'a.js' } })).toEqual([
      'runs.using: node16 is not a runtime hosted runners start',
    ]);
  });
});
